/**
 * Builds the single devctl executable (`npm run build` -> dist/devctl) and, with --release, one
 * executable per supported platform, the CycloneDX SBOM of what they bundle (devctl.cdx.json, from each
 * build's metafile: src/build/sbom.ts) and SHA256SUMS of all of them (`npm run release` -> dist/release/).
 *
 * Flags that matter: --minify --bytecode --format=esm (fast cold start; bytecode needs ESM); --splitting, so
 * that a module reached only by a dynamic import() is its own chunk of the executable, read and compiled only
 * when imported (without it every lazily imported module still costs memory: client-node, imported only for
 * auth providers src/kube does not handle, added ~21 MiB of idle RSS to a compiled program that never imported
 * it, measured 2026-12-01 with Bun 1.4.5); and no autoload of .env or bunfig.toml from the user's working
 * directory (an operator must not read them).
 * The version comes from package.json, the commit from git (or $DEVCTL_COMMIT, as in the Dockerfile);
 * both are baked in with --define.
 */
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { buildTime, gitCommit, RELEASE_TARGETS, readVersion } from "./_meta.ts";
import { SBOM_FILE, writeSbom } from "./sbom.ts";

const root = resolve(import.meta.dir, "../..");

function compile(outfile: string, target?: string, metafile?: string): void {
  const version = readVersion();
  const args = [
    "build",
    "src/main.ts",
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    "--splitting",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    "--define",
    `DEVCTL_VERSION=${JSON.stringify(version)}`,
    "--define",
    `DEVCTL_COMMIT=${JSON.stringify(gitCommit())}`,
    "--outfile",
    outfile,
    ...(target ? [`--target=bun-${target}`] : []),
    ...(metafile ? [`--metafile=${metafile}`] : []),
  ];
  const started = performance.now();
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: "inherit", stderr: "inherit" });
  if (r.exitCode !== 0) throw new Error(`bun build failed for ${target ?? "this platform"} (exit ${r.exitCode})`);
  console.error(`built ${outfile} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv.includes("--release")) {
  const dir = join(root, "dist/release");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const timestamp = buildTime().toISOString(); // first: a bad SOURCE_DATE_EPOCH fails before four builds
  const metaDir = mkdtempSync(join(tmpdir(), "devctl-metafiles-"));
  try {
    const metafiles = RELEASE_TARGETS.map((target) => {
      const metafile = join(metaDir, `${target}.json`);
      compile(join(dir, `devctl-${target}`), target, metafile);
      return metafile;
    });
    writeSbom(metafiles, join(dir, SBOM_FILE), root, { commit: gitCommit(), bunVersion: Bun.version, timestamp });
    console.error(`wrote ${dir}/${SBOM_FILE}`);
  } finally {
    rmSync(metaDir, { recursive: true, force: true });
  }
  const sums = [...RELEASE_TARGETS.map((t) => `devctl-${t}`), SBOM_FILE].map(
    (name) =>
      `${createHash("sha256")
        .update(readFileSync(join(dir, name)))
        .digest("hex")}  ${name}`,
  );
  writeFileSync(join(dir, "SHA256SUMS"), `${sums.join("\n")}\n`);
  console.error(`wrote ${dir}/SHA256SUMS`);
} else {
  compile(join(root, "dist/devctl"));
}
