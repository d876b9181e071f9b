/**
 * Control-plane binaries, built from the pinned Go modules under ./go into a cache outside the clone.
 *
 * Contract:
 * - Location: `${XDG_CACHE_HOME:-$HOME/.cache}/devctl/cluster/bin/<key>/`, where key names the
 *   versions plus 8 hex digits of sha256 over KEY_FILES (a pin or forwarder change gives a new key).
 * - Binaries: the control plane, kubelet + kube-proxy (the real node) and kubectl (pinned for tests and docs).
 * - Complete or absent: a build writes into a sibling temp dir and renames it into place, so an
 *   interrupted build never looks complete. Nothing is built when all binaries are present.
 * - Build flags match a plain `go build -trimpath` with CGO off (goEnv), so Go's build cache is shared.
 * - Progress goes to stderr: what is building, then elapsed time and packages compiled every 30 s.
 * - kwokStages(): absolute paths of the five KWOK stage YAMLs, fetched with `go mod download` if missing,
 *   then the suites' own stages in ./stages.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join, relative } from "node:path";
import { run, tail } from "./processes.ts";

export const VERSIONS = { kubernetes: "v1.36.3", etcd: "v3.6.14", kwok: "v0.8.0" } as const;
/** The control plane, the real node's kubelet and kube-proxy, and the kubectl every suite and doc uses. */
export const BINARIES = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kwok",
  "kubelet",
  "kube-proxy",
  "kubectl",
  "forward",
] as const;
export type BinaryName = (typeof BINARIES)[number];

const GO_DIR = join(import.meta.dir, "go");
const PROGRESS_EVERY_MS = 30_000;

interface GoBuild {
  /** Module directory under ./go */
  module: "kube" | "etcd" | "kwok" | "forward";
  packages: string[];
  binaries: BinaryName[];
  ldflags: string;
}

/** The version stamps upstream's hack/lib/version.sh sets (kubectl reads client-go's, servers component-base's). */
const K8S_LDFLAGS = [
  "-s -w",
  ...["k8s.io/component-base/version", "k8s.io/client-go/pkg/version"].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${VERSIONS.kubernetes}`,
    `-X ${pkg}.gitMajor=1`,
    `-X ${pkg}.gitMinor=36`,
  ]),
].join(" ");

const KUBE_COMMANDS = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubelet",
  "kube-proxy",
  "kubectl",
] as const;

const BUILDS: GoBuild[] = [
  {
    module: "kube",
    packages: KUBE_COMMANDS.map((c) => `k8s.io/kubernetes/cmd/${c}`),
    binaries: [...KUBE_COMMANDS],
    ldflags: K8S_LDFLAGS,
  },
  { module: "etcd", packages: ["go.etcd.io/etcd/server/v3"], binaries: ["etcd"], ldflags: "-s -w" },
  { module: "kwok", packages: ["sigs.k8s.io/kwok/cmd/kwok"], binaries: ["kwok"], ldflags: "-s -w" },
  { module: "forward", packages: ["."], binaries: ["forward"], ldflags: "-s -w" },
];
/** Files whose content decides the cache key: the pinned module sums and the forwarder's source. */
export const KEY_FILES = ["kube/go.sum", "etcd/go.sum", "kwok/go.sum", "forward/go.mod", "forward/main.go"];

export const KWOK_STAGES = [
  "node/fast/node-initialize.yaml",
  "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
  "pod/fast/pod-ready.yaml",
  "pod/fast/pod-complete.yaml",
  "pod/fast/pod-delete.yaml",
] as const;

export function binaryCacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(base, "devctl", "cluster", "bin");
}

export async function binaryKey(): Promise<string> {
  const hash = createHash("sha256");
  for (const f of KEY_FILES) hash.update(await Bun.file(join(GO_DIR, f)).bytes());
  return keyName(hash.digest("hex"));
}

export function keyName(sha256Hex: string): string {
  const v = VERSIONS;
  return `k8s-${v.kubernetes}_etcd-${v.etcd}_kwok-${v.kwok}_${sha256Hex.slice(0, 8)}`;
}

export function binaryPath(binDir: string, name: BinaryName): string {
  return join(binDir, name);
}

/** Returns the directory holding all five binaries, building them first if any is missing. */
export async function ensureBinaries(log: (line: string) => void): Promise<string> {
  const root = binaryCacheRoot();
  const key = await binaryKey();
  const dir = join(root, key);
  if (BINARIES.every((b) => existsSync(join(dir, b)))) return dir;

  await mkdir(root, { recursive: true });
  await removeAbandonedTempDirs(root, key);
  const tmp = join(root, `.tmp-${key}-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp);
  const started = Date.now();
  log(`building control-plane binaries into ${dir}`);
  log("(with an empty Go build cache this compiles ~3,000 packages: about 7 min on 2 cores; with a warm one ~15 s)");
  try {
    for (const b of BUILDS) await goBuild(b, tmp, log);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  log(`binaries built in ${formatDuration(Date.now() - started)}`);
  return dir;
}

async function goBuild(b: GoBuild, outDir: string, log: (line: string) => void): Promise<void> {
  const out = b.binaries.length === 1 ? join(outDir, b.binaries[0] ?? "") : `${outDir}/`;
  const dir = join(GO_DIR, b.module);
  await goBuildPackages({ dir, packages: b.packages, out, ldflags: b.ldflags, label: b.binaries.join(", ") }, log);
}

/**
 * `go build -trimpath` of `packages` in the module at `dir` into `out` (a file, or a directory ending in /), with
 * goEnv(); logs progress every PROGRESS_EVERY_MS and rejects with the tail of Go's output.
 */
export async function goBuildPackages(
  b: { dir: string; packages: string[]; out: string; ldflags: string; label: string },
  log: (line: string) => void,
): Promise<void> {
  const { label } = b;
  const argv = [goBinary(), "build", "-v", "-trimpath", "-ldflags", b.ldflags, "-o", b.out, ...b.packages];
  const started = Date.now();
  log(`building ${label} (go/${relative(GO_DIR, b.dir)})`);
  const child = Bun.spawn(argv, {
    cwd: b.dir,
    env: goEnv(),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let compiled = 0;
  let output = "";
  const count = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      compiled += text.split("\n").length - 1;
      output = tail(output + text, 60);
    }
  };
  const timer = setInterval(() => {
    log(`  still building ${label}: ${formatDuration(Date.now() - started)} elapsed, ${compiled} packages compiled`);
  }, PROGRESS_EVERY_MS);
  try {
    const [code] = await Promise.all([child.exited, count(child.stdout), count(child.stderr)]);
    if (code !== 0) throw new Error(`go build of ${label} failed (exit ${code}):\n${output}`);
  } finally {
    clearInterval(timer);
  }
  log(`built ${label} in ${formatDuration(Date.now() - started)}`);
}

/** Temp dirs of builds whose process is gone (interrupted); a running build's dir is left alone. */
export async function removeAbandonedTempDirs(root: string, key: string): Promise<void> {
  for (const name of await readdir(root)) {
    const m = name.startsWith(`.tmp-${key}-`) ? /-(\d+)$/.exec(name) : null;
    if (m && !existsSync(`/proc/${m[1]}`)) {
      await rm(join(root, name), { recursive: true, force: true });
    }
  }
}

export async function kwokStages(): Promise<string[]> {
  const cwd = join(GO_DIR, "kwok");
  const modCache = (await run([goBinary(), "env", "GOMODCACHE"], { cwd, env: goEnv() })).trim();
  const base = join(modCache, `sigs.k8s.io/kwok@${VERSIONS.kwok}`, "kustomize", "stage");
  const files = KWOK_STAGES.map((s) => join(base, s));
  if (files.some((f) => !existsSync(f)))
    await run([goBinary(), "mod", "download", "sigs.k8s.io/kwok"], { cwd, env: goEnv() });
  const missing = files.filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`KWOK stage files missing after go mod download: ${missing.join(", ")}`);
  // The suites' own stages (stages/*.yaml), e.g. pods stuck in ImagePullBackOff for the status tests.
  const own = (await readdir(join(import.meta.dir, "stages"))).filter((f) => f.endsWith(".yaml")).sort();
  return [...files, ...own.map((f) => join(import.meta.dir, "stages", f))];
}

/** `go` from PATH, else the official install location (/usr/local/go); prereqs.ts checks its version. */
export function goBinary(): string {
  return Bun.which("go") ?? (existsSync(GO_FALLBACK) ? GO_FALLBACK : "go");
}
const GO_FALLBACK = "/usr/local/go/bin/go";

/**
 * The Go environment every build uses, set here rather than inherited from the machine: no cgo, no VCS
 * stamping (the modules sit inside this git clone, possibly a worktree), the installed toolchain only.
 */
export function goEnv(): Record<string, string | undefined> {
  return { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-buildvcs=false", GOTOOLCHAIN: "local" };
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}
