/**
 * The sandbox (pause) image, made here so the node never pulls one.
 *
 * Contract:
 * - ensurePauseArchive(cacheDir): `gcc -static` of build/pause/linux/pause.c from the pinned
 *   k8s.io/kubernetes module (fetched with `go mod download` if missing), packed as a one-layer OCI
 *   archive named PAUSE_IMAGE, cached as <cacheDir>/pause-<version>.oci.tar (complete or absent).
 * - ociArchive(): the layout files (pure): oci-layout, index.json (ref name annotations that `ctr images
 *   import` reads), manifest and config, all content-addressed by sha256.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { goBinary, goEnv, VERSIONS } from "../build.ts";
import { run } from "../processes.ts";
import { PAUSE_IMAGE } from "./real-config.ts";

const KUBE_MODULE_DIR = join(import.meta.dir, "..", "go", "kube");

const sha = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

export interface Blob {
  digest: string;
  bytes: Uint8Array;
}

/** Layout files of a one-layer image: path inside the archive → content. */
export function ociArchive(layerTar: Uint8Array, ref: string, entrypoint: string[]): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const layer = sha(layerTar);
  const config = enc.encode(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      config: { Entrypoint: entrypoint, User: "65535:65535" },
      rootfs: { type: "layers", diff_ids: [`sha256:${layer}`] },
    }),
  );
  const manifest = enc.encode(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: `sha256:${sha(config)}`,
        size: config.length,
      },
      layers: [
        { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: `sha256:${layer}`, size: layerTar.length },
      ],
    }),
  );
  const index = enc.encode(
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          digest: `sha256:${sha(manifest)}`,
          size: manifest.length,
          annotations: { "io.containerd.image.name": ref, "org.opencontainers.image.ref.name": ref },
        },
      ],
    }),
  );
  return new Map([
    ["oci-layout", enc.encode(JSON.stringify({ imageLayoutVersion: "1.0.0" }))],
    ["index.json", index],
    [`blobs/sha256/${sha(manifest)}`, manifest],
    [`blobs/sha256/${sha(config)}`, config],
    [`blobs/sha256/${layer}`, layerTar],
  ]);
}

async function pauseSource(): Promise<string> {
  const env = goEnv();
  const modCache = (await run([goBinary(), "env", "GOMODCACHE"], { cwd: KUBE_MODULE_DIR, env })).trim();
  const file = join(modCache, `k8s.io/kubernetes@${VERSIONS.kubernetes}`, "build/pause/linux/pause.c");
  if (!existsSync(file)) await run([goBinary(), "mod", "download", "k8s.io/kubernetes"], { cwd: KUBE_MODULE_DIR, env });
  if (!existsSync(file)) throw new Error(`pause.c is missing from the kubernetes module (${file})`);
  return file;
}

export async function ensurePauseArchive(cacheDir: string): Promise<string> {
  const archive = join(cacheDir, `pause-${VERSIONS.kubernetes}.oci.tar`);
  if (existsSync(archive)) return archive;
  const work = join(cacheDir, `.pause-${process.pid}`);
  await rm(work, { recursive: true, force: true });
  await mkdir(join(work, "rootfs"), { recursive: true });
  try {
    await run(["gcc", "-Os", "-static", "-o", join(work, "rootfs/pause"), await pauseSource()]);
    await run([
      "tar",
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "-C",
      join(work, "rootfs"),
      "-cf",
      join(work, "layer.tar"),
      "pause",
    ]);
    const layout = join(work, "layout");
    const files = ociArchive(await Bun.file(join(work, "layer.tar")).bytes(), PAUSE_IMAGE, ["/pause"]);
    for (const [path, bytes] of files) {
      await mkdir(join(layout, path, ".."), { recursive: true });
      await Bun.write(join(layout, path), bytes);
    }
    await run(["tar", "--owner=0", "--group=0", "--numeric-owner", "-C", layout, "-cf", `${archive}.tmp`, "."]);
    await rename(`${archive}.tmp`, archive);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return archive;
}
