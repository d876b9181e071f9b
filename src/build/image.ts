/**
 * `npm run image`: the operator image from the repo's Dockerfile, built offline.
 *
 * Contract:
 * - Builds dist/devctl, then stages dist/image/rootfs/: exactly the shared libraries `ldd dist/devctl`
 *   names (dereferenced, at the paths ldd gives), /etc/passwd and /etc/group with the user 65532, and an
 *   empty /tmp (1777). The Dockerfile's stages are all FROM scratch, so nothing is ever pulled.
 * - Builds the Dockerfile with the first of buildah, podman, docker found and usable (docker only with an engine
 *   that answers `docker info`: the client alone is common; --builder to choose;
 *   buildah and podman with --pull=never), tags it IMAGE_REPOSITORY:<version>-<commit> (--tag to
 *   override) and writes an OCI archive (docker: a docker archive) to dist/image/devctl.oci.tar,
 *   which `kind load image-archive`, `ctr images import`, `docker load` and `podman load` accept.
 * - The archive is reused when it was built from the same binary, libraries, Dockerfile and reference
 *   (a stamp beside it); --rebuild forces a build.
 * - When the local test cluster runs a real node, imports the archive into its containerd.
 * - --stage-only stops after staging (then build the Dockerfile with any builder yourself).
 * - Progress on stderr; the last stdout line is `IMAGE=<reference>`. Exits non-zero with what to fix.
 */
import { createHash } from "node:crypto";
import { chmod, copyFile, mkdir, rm, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { gitCommit, readVersion } from "./_meta.ts";

export const IMAGE_REPOSITORY = "devctl.local/devctl";
/** The image's only user (distroless "nonroot"); install's Deployment runs as it. */
export const IMAGE_UID = 65532;
export const BUILDERS = ["buildah", "podman", "docker"] as const;
export type Builder = (typeof BUILDERS)[number];

const root = resolve(import.meta.dir, "../..");
export const imagePaths = {
  binary: join(root, "dist/devctl"),
  stage: join(root, "dist/image"),
  rootfs: join(root, "dist/image/rootfs"),
  archive: join(root, "dist/image/devctl.oci.tar"),
  dockerfile: join(root, "Dockerfile"),
} as const;

/** Absolute paths of the libraries in `ldd` output (the vDSO has none and is skipped). */
export function lddLibraries(output: string): string[] {
  const libs: string[] = [];
  for (const line of output.split("\n")) {
    const m = /^\s*(?:\S+\s+=>\s+)?(\/\S+)\s+\(0x[0-9a-f]+\)\s*$/.exec(line);
    if (m?.[1]) libs.push(m[1]);
    else if (/=>\s+not found/.test(line)) throw new Error(`ldd cannot resolve a library: ${line.trim()}`);
  }
  return [...new Set(libs)].sort();
}

export function etcFiles(uid = IMAGE_UID): { passwd: string; group: string } {
  return {
    passwd: `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${uid}:${uid}:nonroot:/home/nonroot:/sbin/nologin\n`,
    group: `root:x:0:\nnonroot:x:${uid}:\n`,
  };
}

export const imageRef = (version: string, commit: string, repository = IMAGE_REPOSITORY): string =>
  `${repository}:${version}-${commit.replace(/[^A-Za-z0-9_.-]/g, "-").slice(0, 40)}`;

/** The builder's command lines: build the Dockerfile from the repo root, then write the archive. */
export function builderCommands(builder: Builder, ref: string, archive: string, dockerfile: string): string[][] {
  switch (builder) {
    case "buildah":
      return [
        ["buildah", "bud", "--pull=never", "--layers=false", "-f", dockerfile, "-t", ref, root],
        ["buildah", "push", ref, `oci-archive:${archive}:${ref}`],
      ];
    case "podman":
      return [
        ["podman", "build", "--pull=never", "-f", dockerfile, "-t", ref, root],
        ["podman", "save", "--format", "oci-archive", "-o", archive, ref],
      ];
    case "docker":
      return [
        ["docker", "build", "-f", dockerfile, "-t", ref, root],
        ["docker", "save", "-o", archive, ref],
      ];
  }
}

function sh(argv: string[]): string {
  const r = Bun.spawnSync(argv, { cwd: root, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    throw new Error(`\`${argv.join(" ")}\` failed (exit ${r.exitCode}):\n${r.stdout.toString()}${r.stderr.toString()}`);
  }
  return r.stdout.toString();
}

/** Stages dist/image/rootfs/ and returns the libraries copied into it. */
export async function stageRootfs(binary = imagePaths.binary, rootfs = imagePaths.rootfs): Promise<string[]> {
  if (!Bun.which("ldd")) throw new Error("ldd is missing: install the libc-bin package (apt-get install libc-bin)");
  const libs = lddLibraries(sh(["ldd", binary]));
  await rm(rootfs, { recursive: true, force: true });
  for (const lib of libs) {
    const target = join(rootfs, lib);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(lib, target); // follows symlinks: the image gets the files, not links into nothing
    await chmod(target, 0o755);
  }
  const etc = etcFiles();
  await mkdir(join(rootfs, "etc"), { recursive: true });
  await Bun.write(join(rootfs, "etc/passwd"), etc.passwd);
  await Bun.write(join(rootfs, "etc/group"), etc.group);
  await mkdir(join(rootfs, "tmp"), { recursive: true });
  await chmod(join(rootfs, "tmp"), 0o1777);
  return libs;
}

/** sha256 over the files' contents: the archive is reused only for the very same inputs. */
async function contentHash(files: string[]): Promise<string> {
  const hash = createHash("sha256");
  for (const f of files) hash.update(await Bun.file(f).bytes());
  return hash.digest("hex");
}

/** What picking a builder asks of the machine (injected in tests). */
export interface BuilderProbe {
  installed(builder: Builder): boolean;
  /** Can build now: buildah and podman build on their own; docker is only a client and needs an engine. */
  usable(builder: Builder): boolean;
}

const machine: BuilderProbe = {
  installed: (b) => Bun.which(b) !== null,
  usable: (b) =>
    b !== "docker" ||
    Bun.spawnSync(["docker", "info", "--format", "{{.ServerVersion}}"], { stdout: "ignore", stderr: "ignore" }).success,
};

/** The --builder asked for, else the first of BUILDERS installed and usable; an error that says what to do. */
export function pickBuilder(wanted: string | undefined, probe: BuilderProbe = machine): Builder {
  if (wanted) {
    if (!(BUILDERS as readonly string[]).includes(wanted))
      throw new Error(`--builder must be one of ${BUILDERS.join(", ")}, not "${wanted}"`);
    const builder = wanted as Builder;
    if (!probe.installed(builder)) throw new Error(`--builder ${wanted}: ${wanted} is not installed`);
    if (!probe.usable(builder)) throw new Error(`--builder ${wanted}: ${NO_ENGINE}`);
    return builder;
  }
  const found = BUILDERS.find((b) => probe.installed(b) && probe.usable(b));
  if (!found) {
    const engineless = probe.installed("docker") ? ` (docker is installed, but ${NO_ENGINE})` : "";
    throw new Error(
      `no image builder found${engineless}: install buildah (apt-get install buildah), podman or docker, ` +
        "or run `npm run image -- --stage-only` and build the Dockerfile elsewhere",
    );
  }
  return found;
}

const NO_ENGINE = "no Docker engine answers (`docker info` fails): start one, or use buildah or podman";

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const started = performance.now();
  const say = (m: string) => console.error(`[image ${((performance.now() - started) / 1000).toFixed(1)}s] ${m}`);
  say("building dist/devctl");
  sh([process.execPath, "run", join(root, "src/build/build.ts")]);
  const libs = await stageRootfs();
  say(`staged ${imagePaths.rootfs}: devctl + ${libs.length} libraries (${libs.join(", ")}), /etc/passwd, /tmp`);
  if (process.argv.includes("--stage-only")) return;
  const ref = flag("tag") ?? imageRef(readVersion(), gitCommit());
  const stamp = `${ref} ${await contentHash([imagePaths.binary, imagePaths.dockerfile, ...libs])}\n`;
  const stampFile = `${imagePaths.archive}.built-from`;
  const fresh =
    !process.argv.includes("--rebuild") &&
    (await Bun.file(imagePaths.archive).exists()) &&
    (await Bun.file(stampFile).exists()) &&
    (await Bun.file(stampFile).text()) === stamp;
  if (fresh) {
    say(`${imagePaths.archive} already holds ${ref} built from this binary: not rebuilt (--rebuild forces it)`);
  } else {
    const builder = pickBuilder(flag("builder"));
    const buildStarted = performance.now();
    for (const argv of builderCommands(builder, ref, imagePaths.archive, imagePaths.dockerfile)) {
      say(`$ ${argv.join(" ")}`);
      sh(argv);
    }
    await Bun.write(stampFile, stamp);
    const buildS = ((performance.now() - buildStarted) / 1000).toFixed(1);
    const mib = ((await stat(imagePaths.archive)).size / 2 ** 20).toFixed(1);
    say(`built ${ref} with ${builder} in ${buildS}s; archive ${imagePaths.archive} (${mib} MiB)`);
  }
  // The local test cluster's own CLI knows its node (src/ never imports tests/: src/layering.test.ts).
  const imported = sh([
    process.execPath,
    "run",
    join(root, "tests/cluster/cli.ts"),
    "import",
    imagePaths.archive,
  ]).trim();
  say(imported ? `imported into the local cluster's real node (${imported})` : "no local real node up: not imported");
  console.log(`IMAGE=${ref}`);
}

if (import.meta.main) {
  await main().catch((err: Error) => {
    console.error(`npm run image: ${err.message}`);
    process.exit(1);
  });
}
