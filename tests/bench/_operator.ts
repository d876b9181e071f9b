/**
 * One operator under test, as a process: either devctl (`devctl operator run` from a private copy of
 * dist/devctl, or, when profiling, the sources under `bun --cpu-prof-md`) or the Go peer (the seed's
 * controller-runtime operator, see _peer.ts), on free loopback ports, with its own /metrics read back.
 *
 * Properties:
 * - One interface for both (BenchOperator: start, wait ready, scrape, RSS, CPU, stop). Both take the
 *   same argument list (the Go peer's flags carry devctl's names: --namespaces, --concurrency,
 *   --leader-elect, --resync-period) and expose the same metric families (controller-runtime's
 *   names, which devctl mirrors), so a scenario runs either without knowing which it has.
 * - Requests are counted the same way for both: rest_client_requests_total{code,method}, one per
 *   HTTP request the client sends, watches included (client-go's metric in the peer, devctl's
 *   transport in devctl).
 * - `spawnedAt` is taken immediately before the spawn, so `waitReady()` measures process start to
 *   /readyz 200 (polled every 5 ms: the poll adds at most that much).
 * - Counters come from the operator's own /metrics (rest_client_requests_total and friends); CPU and
 *   RSS from /proc, so they work even when the metrics endpoint is busy.
 * - devctl runs with the environment the install gives it (AS_INSTALLED_ENV); the Go peer with the bench's own.
 * - `stop()` sends a signal and waits for the exit; `kill()` is SIGKILL. Output is kept for errors (the
 *   last 200 KB), and all of it goes to `logFile` when one is given.
 */
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { quantityValue } from "../../src/api/quantity.ts";
import { RUNTIME_HEAP_ENV, RUNTIME_MEMORY_ENV } from "../../src/install/deployment.ts";
import { DEFAULT_MEMORY } from "../../src/install/resources.ts";
import { appender } from "./_evidence.ts";
import { cpuSeconds, rssBytes } from "./_proc.ts";

/**
 * What devctl's environment has as `devctl operator install` deploys it: its runtime told the default memory limit
 * (install/deployment.ts RUNTIME_MEMORY_ENV, from the downward API there) and the heap-growth fractions
 * (RUNTIME_HEAP_ENV).
 */
export const AS_INSTALLED_ENV: Record<string, string> = {
  [RUNTIME_MEMORY_ENV]: String(quantityValue(DEFAULT_MEMORY.limit)),
  ...RUNTIME_HEAP_ENV,
};

const ROOT = resolve(import.meta.dir, "../..");
export const DEVCTL = resolve(ROOT, "dist/devctl");
/** The executable every benchmark process runs: a private copy of dist/devctl (see useBinary). */
export let binary = DEVCTL;

/**
 * Copies dist/devctl to `dir` and runs that copy from now on, so a rebuild of dist/devctl by someone
 * else during the run cannot change what is measured halfway through.
 */
export function useBinary(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const copy = resolve(dir, "devctl");
  copyFileSync(DEVCTL, copy);
  chmodSync(copy, 0o755);
  binary = copy;
  return copy;
}

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** Which operator a process runs. */
export type OperatorImpl = "devctl" | "peer";
export const IMPL_LABEL: Record<OperatorImpl, string> = { devctl: "devctl", peer: "Go peer" };

/** The Go peer's executable, set once it is built (see _peer.ts ensurePeer). */
let peerBinary: string | undefined;
export function usePeerBinary(path: string): void {
  peerBinary = path;
}

export interface BenchOperator {
  impl: OperatorImpl;
  pid: number;
  spawnedAt: number;
  url: string;
  logs(): string;
  exited(): boolean;
  /** ms from spawn until /readyz answered 200. */
  waitReady(timeoutMs?: number): Promise<number>;
  scrape(): Promise<Map<string, Sample[]>>;
  cpuSeconds(): number | undefined;
  rssBytes(): number | undefined;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface OperatorSpawnOptions {
  impl?: OperatorImpl;
  kubeconfig: string;
  args: string[];
  /** Run the sources under `bun --cpu-prof-md --heap-prof-md` and write both profiles (on exit) into this directory. */
  profileDir?: string;
  /** Also write everything the process prints (stdout and stderr, as it arrives) to this file. */
  logFile?: string;
}

export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * The families the benchmark reads, asked for by name (`/metrics?name[]=...`): it polls up to 5 times a second, and
 * devctl's per-WebApp series (10,000 WebApps: 7.5 MB, ~100 ms of CPU per scrape) would make the instrument part of
 * what it measures. The Go peer's controller-runtime ignores the parameter and answers everything, as before.
 */
export const SCRAPED_FAMILIES = [
  "controller_runtime_active_workers",
  "controller_runtime_reconcile_errors_total",
  "controller_runtime_reconcile_total",
  "leader_election_master_status",
  "process_resident_memory_bytes",
  "rest_client_request_duration_seconds",
  "rest_client_requests_total",
  "workqueue_depth",
  "workqueue_longest_running_processor_seconds",
  "workqueue_retries_total",
] as const;
const SCRAPED = SCRAPED_FAMILIES.map((n) => `name[]=${n}`).join("&");

export function parseMetrics(text: string): Map<string, Sample[]> {
  const families = new Map<string, Sample[]>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1] as string] = l[2] as string;
    const list = families.get(m[1] as string) ?? [];
    list.push({ labels, value: Number(m[4]) });
    families.set(m[1] as string, list);
  }
  return families;
}

/** Sum of a family's samples whose labels match every given label. */
export function total(metrics: Map<string, Sample[]>, name: string, match: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of metrics.get(name) ?? [])
    if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  return sum;
}

/** The total of counts per key (requests per method). */
export const sumOf = (r: Record<string, number>) => Object.values(r).reduce((s, v) => s + v, 0);

/** rest_client_requests_total summed per HTTP method. */
export function requestsByMethod(metrics: Map<string, Sample[]>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of metrics.get("rest_client_requests_total") ?? []) {
    const method = s.labels.method ?? "?";
    out[method] = (out[method] ?? 0) + s.value;
  }
  return out;
}

/** Requests per method counted between two scrapes (methods seen in either), sorted by method. */
export function requestsSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const methods = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return Object.fromEntries(methods.map((m) => [m, (after[m] ?? 0) - (before[m] ?? 0)]));
}

/** Counts per method added up (methods seen in either), sorted by method. */
export function addRequests(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  const sum = { ...a };
  for (const [m, n] of Object.entries(b)) sum[m] = (sum[m] ?? 0) + n;
  return Object.fromEntries(Object.entries(sum).sort(([x], [y]) => x.localeCompare(y)));
}

/** How long the request count must stand still for requestsOnceQuiet. */
export const REQUESTS_QUIET_MS = 1_500;

/**
 * requestsByMethod once the operator has stopped sending: scraped every 250 ms until the total has not moved
 * for REQUESTS_QUIET_MS (at most 20 s). What an operator sends after the work is done still counts (an Event, a
 * status written by the pass after the one that wrote a child).
 */
export async function requestsOnceQuiet(scrape: () => Promise<Map<string, Sample[]>>): Promise<Record<string, number>> {
  let last = requestsByMethod(await scrape());
  let since = performance.now();
  const deadline = since + 20_000;
  while (performance.now() - since < REQUESTS_QUIET_MS && performance.now() < deadline) {
    await Bun.sleep(250);
    const now = requestsByMethod(await scrape());
    if (sumOf(now) !== sumOf(last)) [last, since] = [now, performance.now()];
  }
  return last;
}

/** The argv of devctl (`operator run`, or the sources under the profiler) with metrics and probes on `port`. */
function devctlArgv(opts: OperatorSpawnOptions, port: number): string[] {
  const runArgs = [
    "operator",
    "run",
    "--kubeconfig",
    opts.kubeconfig,
    "--metrics-bind-address",
    `127.0.0.1:${port}`,
    "--health-probe-bind-address",
    `127.0.0.1:${port}`,
    // Plain HTTP on loopback, probes and scrapes on one port: these suites measure the operator, not its auth.
    "--metrics-secure=false",
    "--log-format",
    "json",
    "--log-level",
    "warn",
    ...opts.args,
  ];
  return opts.profileDir
    ? [
        process.execPath,
        "--cpu-prof-md",
        `--cpu-prof-dir=${opts.profileDir}`,
        "--heap-prof-md",
        `--heap-prof-dir=${opts.profileDir}`,
        resolve(ROOT, "src/main.ts"),
        ...runArgs,
      ]
    : [binary, ...runArgs];
}

/** The Go peer's argv: metrics on `port`, probes on `probePort` (controller-runtime serves them apart). */
function peerArgv(opts: OperatorSpawnOptions, port: number, probePort: number): string[] {
  if (!peerBinary) throw new Error("the Go peer was not built (usePeerBinary was never called)");
  if (opts.profileDir) throw new Error("profiling is for devctl only");
  return [
    peerBinary,
    "--kubeconfig",
    opts.kubeconfig,
    "--metrics-bind-address",
    `127.0.0.1:${port}`,
    "--health-probe-bind-address",
    `127.0.0.1:${probePort}`,
    // zap knows debug, info, error, panic: error is the nearest to devctl's warn.
    "--zap-log-level=error",
    ...opts.args,
  ];
}

export async function spawnOperator(opts: OperatorSpawnOptions): Promise<BenchOperator> {
  const impl = opts.impl ?? "devctl";
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const probeUrl = impl === "peer" ? `http://127.0.0.1:${await freePort()}` : url;
  const argv = impl === "peer" ? peerArgv(opts, port, Number(new URL(probeUrl).port)) : devctlArgv(opts, port);
  let out = "";
  const spawnedAt = performance.now();
  const env = impl === "devctl" ? { ...process.env, ...AS_INSTALLED_ENV } : process.env;
  const proc = Bun.spawn(argv, { cwd: ROOT, stdout: "pipe", stderr: "pipe", env });
  const file = opts.logFile ? appender(opts.logFile) : undefined;
  file?.write(`# ${argv.join(" ")}\n# pid ${proc.pid}, spawned at ${new Date().toISOString()}\n`);
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const c of s) {
      const text = d.decode(c, { stream: true });
      file?.write(text);
      out = (out + text).slice(-200_000);
    }
  };
  const drained = Promise.all([
    drain(proc.stdout as ReadableStream<Uint8Array>),
    drain(proc.stderr as ReadableStream<Uint8Array>),
  ]).finally(() => {
    file?.write(`# exited (${proc.exitCode ?? proc.signalCode}) at ${new Date().toISOString()}\n`);
    file?.close();
  });
  const exited = () => proc.exitCode !== null || proc.signalCode !== null;

  return {
    impl,
    pid: proc.pid,
    spawnedAt,
    url,
    logs: () => out,
    exited,
    async waitReady(timeoutMs = 60_000) {
      const deadline = spawnedAt + timeoutMs;
      while (performance.now() < deadline) {
        if (exited())
          throw new Error(
            `the ${IMPL_LABEL[impl]} operator exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${out.slice(-3000)}`,
          );
        const ok = await fetch(`${probeUrl}/readyz`, { signal: AbortSignal.timeout(1000) }).then(
          (r) => r.status === 200,
          () => false,
        );
        if (ok) return performance.now() - spawnedAt;
        await Bun.sleep(5);
      }
      throw new Error(`the ${IMPL_LABEL[impl]} operator was not ready within ${timeoutMs} ms:\n${out.slice(-3000)}`);
    },
    async scrape() {
      const res = await fetch(`${url}/metrics?${SCRAPED}`, { signal: AbortSignal.timeout(10_000) });
      return parseMetrics(await res.text());
    },
    cpuSeconds: () => cpuSeconds(proc.pid),
    rssBytes: () => rssBytes(proc.pid),
    async stop(signal = "SIGTERM") {
      if (!exited()) proc.kill(signal);
      // Under the profiler the process writes its profiles on exit: a heap snapshot of a large heap takes minutes.
      const timer = setTimeout(() => !exited() && proc.kill("SIGKILL"), opts.profileDir ? 600_000 : 40_000);
      const code = await proc.exited;
      clearTimeout(timer);
      await Promise.race([drained, Bun.sleep(2000)]);
      return code;
    },
  };
}
