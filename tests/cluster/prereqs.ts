/**
 * What the test cluster and the suites need from the machine, checked in one place.
 *
 * Contract:
 * - PREREQUISITES lists every outside tool, what needs it, and its Debian package.
 * - ensurePrerequisites(needs): when something is missing and the machine can install it (root,
 *   apt-get), runs `apt-get update` once and `apt-get install` for the missing packages; resolves to
 *   the tools still missing afterwards (empty = all there). It never installs anything else.
 * - realNodeSupport(): whether this machine can run the real node (Linux, root, cgroup v1 or v2
 *   mounted), with the reason when not. DEVCTL_REAL_NODE=0 turns the real node off; on CI
 *   (CI=true) a machine that cannot run it is an error, never a silent fallback.
 * - Go: the `go` command (PATH or /usr/local/go) at least the version go/kube/go.mod asks for. The
 *   builds set GOFLAGS, GOTOOLCHAIN and CGO_ENABLED themselves (build.ts goEnv), whatever the machine has.
 */
import { existsSync } from "node:fs";
import { goBinary } from "./build.ts";

export type Need = "cluster" | "suites" | "realNode" | "image";

export interface Prerequisite {
  command: string;
  /** Debian package that provides it; undefined = cannot be installed by apt here. */
  aptPackage?: string;
  neededBy: Need;
  why: string;
}

export const PREREQUISITES: readonly Prerequisite[] = [
  { command: "openssl", aptPackage: "openssl", neededBy: "cluster", why: "the cluster's PKI (pki.ts)" },
  { command: "ip", aptPackage: "iproute2", neededBy: "cluster", why: "the cluster's network namespace" },
  { command: "nsenter", aptPackage: "util-linux", neededBy: "cluster", why: "starts components in the namespace" },
  { command: "unshare", aptPackage: "util-linux", neededBy: "suites", why: "the in-cluster entrypoint test" },
  { command: "setpriv", aptPackage: "util-linux", neededBy: "suites", why: "the in-cluster entrypoint test" },
  { command: "mount", aptPackage: "mount", neededBy: "suites", why: "the in-cluster entrypoint test" },
  { command: "script", aptPackage: "bsdutils", neededBy: "suites", why: "CLI tests on a pseudo-terminal" },
  { command: "faketime", aptPackage: "faketime", neededBy: "suites", why: "an operator whose clock is wrong" },
  { command: "containerd", aptPackage: "containerd", neededBy: "realNode", why: "the real node's runtime" },
  { command: "ctr", aptPackage: "containerd", neededBy: "realNode", why: "imports images into the node" },
  { command: "runc", aptPackage: "runc", neededBy: "realNode", why: "the real node's OCI runtime" },
  {
    command: "/usr/lib/cni/bridge",
    aptPackage: "containernetworking-plugins",
    neededBy: "realNode",
    why: "the pod network (bridge, host-local, loopback, portmap)",
  },
  { command: "iptables", aptPackage: "iptables", neededBy: "realNode", why: "kube-proxy (iptables mode)" },
  { command: "gcc", aptPackage: "gcc", neededBy: "realNode", why: "builds the pause image (static)" },
  { command: "tar", aptPackage: "tar", neededBy: "realNode", why: "writes the pause image archive" },
  {
    command: "/bin/busybox",
    aptPackage: "busybox-static",
    neededBy: "realNode",
    why: "the static HTTP server (httpd) image of tests/realnode/production.test.ts",
  },
  { command: "buildah", aptPackage: "buildah", neededBy: "image", why: "builds the Dockerfile offline" },
  { command: "ldd", aptPackage: "libc-bin", neededBy: "image", why: "lists the libraries the image carries" },
];

export const REAL_NODE_ENV = "DEVCTL_REAL_NODE";
export const onCi = (): boolean => process.env.CI === "true" || process.env.CI === "1";

export function isPresent(command: string): boolean {
  return command.startsWith("/") ? existsSync(command) : Bun.which(command) !== null;
}

export function missing(needs: readonly Need[]): Prerequisite[] {
  return PREREQUISITES.filter((p) => needs.includes(p.neededBy) && !isPresent(p.command));
}

let aptUpdated = false;

/** Installs what apt can provide; resolves to what is still missing. */
export async function ensurePrerequisites(
  needs: readonly Need[],
  log: (line: string) => void,
): Promise<Prerequisite[]> {
  const absent = missing(needs);
  const packages = [...new Set(absent.flatMap((p) => (p.aptPackage ? [p.aptPackage] : [])))];
  if (packages.length > 0 && canApt()) {
    log(`installing ${packages.join(", ")} (apt) for: ${absent.map((p) => `${p.command} (${p.why})`).join("; ")}`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    if (!aptUpdated) {
      await aptRun(["apt-get", "update", "-qq"], env);
      aptUpdated = true;
    }
    await aptRun(["apt-get", "install", "-y", "-qq", "--no-install-recommends", ...packages], env);
  }
  return missing(needs);
}

function canApt(): boolean {
  return process.getuid?.() === 0 && Bun.which("apt-get") !== null;
}

async function aptRun(argv: string[], env: Record<string, string | undefined>): Promise<void> {
  const child = Bun.spawn(argv, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`\`${argv.join(" ")}\` failed (exit ${code}):\n${`${out}${err}`.slice(-2000)}`);
}

/** One line per missing tool: what it is for and how to get it. */
export function describeMissing(absent: readonly Prerequisite[]): string {
  return absent
    .map((p) => `  - ${p.command}: ${p.why}; ${p.aptPackage ? `apt-get install ${p.aptPackage}` : "install it"}`)
    .join("\n");
}

export type Support = { kind: "supported" } | { kind: "unsupported"; reason: string };

export function realNodeSupport(): Support {
  if (process.env[REAL_NODE_ENV] === "0") return { kind: "unsupported", reason: `${REAL_NODE_ENV}=0 is set` };
  if (process.platform !== "linux")
    return { kind: "unsupported", reason: `the host is ${process.platform}, not Linux` };
  if (process.getuid?.() !== 0)
    return { kind: "unsupported", reason: "not running as root (kubelet and runc need it)" };
  if (!existsSync("/sys/fs/cgroup/cpu") && !existsSync("/sys/fs/cgroup/cgroup.controllers"))
    return { kind: "unsupported", reason: "no cgroup hierarchy is mounted at /sys/fs/cgroup" };
  return { kind: "supported" };
}

/** The Go toolchain the builds need: present, and at least go.mod's `go` line. */
export async function checkGo(goMod: string): Promise<string | undefined> {
  const want = /^go (\d+)\.(\d+)/m.exec(await Bun.file(goMod).text());
  const go = goBinary();
  let r: { exitCode: number | null; stdout: Buffer } | undefined;
  try {
    r = Bun.spawnSync([go, "env", "GOVERSION"], { stdout: "pipe", stderr: "pipe" });
  } catch {
    r = undefined; // not installed
  }
  if (r?.exitCode !== 0) {
    return `Go is missing: install Go ${want?.[1]}.${want?.[2]} or newer (https://go.dev/dl, into /usr/local/go or on PATH)`;
  }
  const have = /go(\d+)\.(\d+)/.exec(r.stdout.toString());
  const [hm, hn, wm, wn] = [have?.[1], have?.[2], want?.[1], want?.[2]].map(Number) as [number, number, number, number];
  if (hm < wm || (hm === wm && hn < wn)) return `Go ${wm}.${wn} or newer is needed; ${go} is go${hm}.${hn}`;
  return undefined;
}
