/**
 * The Go peer: the seed's controller-runtime operator (peers/controller-runtime), built from its Go
 * modules into a cache outside the clone, like the control-plane binaries (tests/cluster/build.ts).
 *
 * Properties:
 * - Location: `${XDG_CACHE_HOME:-$HOME/.cache}/devctl/bench/peer/<key>/webapp-operator`, key =
 *   controller-runtime's version from go.mod plus 8 hex digits of sha256 over go.mod, go.sum and the
 *   .go sources (a pin or code change gives a new key). Built only when absent.
 * - Complete or absent: `go build` writes a temp file that is renamed into place.
 * - `go build -trimpath -ldflags "-s -w"` with CGO off, the flags the control-plane build uses, so
 *   Go's build cache is shared with it. A failed build is an error carrying go's output.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

export const PEER_DIR = join(import.meta.dir, "peers", "controller-runtime");
export const PEER_BINARY_NAME = "webapp-operator";

/** controller-runtime's version as go.mod pins it, e.g. "v0.24.1". */
export function peerVersion(goMod = readFileSync(join(PEER_DIR, "go.mod"), "utf8")): string {
  const m = /^\s*(?:require\s+)?sigs\.k8s\.io\/controller-runtime\s+(v\S+)/m.exec(goMod);
  if (!m?.[1]) throw new Error("the Go peer's go.mod does not require sigs.k8s.io/controller-runtime");
  return m[1];
}

/** The cache key: version plus a hash of everything the binary is built from. */
export function peerKey(dir = PEER_DIR): string {
  const hash = createHash("sha256");
  const files = ["go.mod", "go.sum", ...readdirSync(dir).filter((f) => f.endsWith(".go"))].sort();
  for (const f of new Set(files)) {
    hash.update(f);
    hash.update(readFileSync(join(dir, f)));
  }
  return `controller-runtime-${peerVersion(readFileSync(join(dir, "go.mod"), "utf8"))}_${hash.digest("hex").slice(0, 8)}`;
}

export function peerCacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "devctl", "bench", "peer");
}

export interface PeerBuild {
  binary: string;
  /** Wall time of `go build`; undefined when the cached binary was used. */
  buildMs?: number;
}

/**
 * The peer's binary, built first if the cache does not hold it for the current key. `where` is for
 * tests: another module directory and cache root.
 */
export async function ensurePeer(
  log: (line: string) => void,
  where: { source?: string; cacheRoot?: string } = {},
): Promise<PeerBuild> {
  const source = where.source ?? PEER_DIR;
  const dir = join(where.cacheRoot ?? peerCacheRoot(), peerKey(source));
  const binary = join(dir, PEER_BINARY_NAME);
  if (existsSync(binary)) return { binary };
  await mkdir(dir, { recursive: true });
  const tmp = `${binary}.tmp-${process.pid}`;
  log(
    `building the Go peer (controller-runtime ${peerVersion(readFileSync(join(source, "go.mod"), "utf8"))}) into ${dir}`,
  );
  const started = performance.now();
  const child = Bun.spawn(["go", "build", "-trimpath", "-ldflags", "-s -w", "-o", tmp, "."], {
    cwd: source,
    env: { ...process.env, CGO_ENABLED: "0", PATH: `${process.env.PATH ?? ""}:/usr/local/go/bin` },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) {
    await rm(tmp, { force: true });
    throw new Error(`go build of the Go peer failed (exit ${code}) in ${source}:\n${out}${err}`);
  }
  await rename(tmp, binary);
  const buildMs = performance.now() - started;
  log(`built the Go peer in ${(buildMs / 1000).toFixed(1)} s`);
  return { binary, buildMs };
}
