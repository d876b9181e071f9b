/**
 * Every long-running command stops what it started on SIGINT, SIGTERM and SIGHUP and exits 128 + signo
 * (issue #30, item 7; src/build/signals.ts). The commands run for real, each against a local control plane of
 * its own: DEVCTL_CLUSTER_DIR under a scratch directory (free ports, its own state), without the real node
 * (DEVCTL_REAL_NODE=0: one kubelet per machine), so the suite's own cluster is never touched.
 *
 * Each command runs in a session of its own and is signalled at a point it reaches quickly mid-run:
 * - cluster:up, all three signals: etcd answered, kube-apiserver just started;
 * - npm start (SIGHUP): the operator it runs has started, the example has not converged yet;
 * - npm run bench (SIGTERM to its whole process group, as `timeout` sends it): an operator under test runs;
 * - npm run chaos (SIGINT): its two operator replicas run, on a cluster the test started for it;
 * - npm test (SIGTERM): bun test runs a test file (tests/_signals-sleeper.ts) with a child of its own, on the
 *   cluster npm test started; and (SIGHUP) the same on a cluster it found running, which must survive.
 * Then nothing of it may be left: no process carrying the run's marker in its environment (every process
 * the command starts inherits it) or naming its state directory on its command line, no mount under that
 * directory, no network namespace or cgroup named for it. About 2 min on 2 cores (1.8 min measured: the two
 * `npm test` runs take a third each, their static checks and build included). Only cluster:up, the cheapest,
 * takes all three signals; every other command one, and the three signals share one handler (signals.ts, whose
 * unit tests map each to its code). Without the real node nothing makes a mount, netns or cgroup here: those
 * checks guard against a regression to a real node, which cannot run beside the suite's own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exitCodeFor, type StopSignal } from "../src/build/signals.ts";
import { createKubeClient } from "../src/kube/client.ts";
import { NAMESPACES } from "../src/kube/resources.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { KUBECTL_CACHE_ENV } from "./cluster/kubectl.ts";
import { mountsUnder } from "./cluster/mounts.ts";
import { networkName } from "./cluster/netns.ts";
import { cgroupMounts } from "./cluster/nodes/real.ts";

const ROOT = resolve(import.meta.dir, "..");
const BUN = process.execPath;
const MARKER_ENV = "DEVCTL_SIGNALS_RUN";
const scratch = mkdtempSync(join(tmpdir(), "devctl-signals-"));
const runId = scratch.slice(-6);

/** A command's environment: its own cluster dir, marker and TMPDIR, no real node, nothing of the suite's cluster. */
function envFor(dir: string, marker: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DEVCTL_CLUSTER_DIR: dir,
    DEVCTL_REAL_NODE: "0",
    [MARKER_ENV]: marker,
    TMPDIR: scratch, // the bench's and the soak's logs and copies go where afterAll removes them
  };
  for (const name of [
    "DEVCTL_TEST_KUBECONFIG",
    "KUBECONFIG",
    "DEVCTL_SKIP_LOG",
    "DEVCTL_KEEP_CLUSTER",
    KUBECTL_CACHE_ENV,
  ])
    delete env[name];
  return env;
}

interface Proc {
  pid: number;
  argv: string[];
  env: string;
  state: string;
}

/** Every process of the machine but this one, with its command line and environment (when readable). */
function processes(): Proc[] {
  return readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n) && Number(n) !== process.pid)
    .flatMap((n) => {
      try {
        const stat = readFileSync(`/proc/${n}/stat`, "utf8");
        const argv = readFileSync(`/proc/${n}/cmdline`, "utf8").split("\0").filter(Boolean);
        const env = readFileSync(`/proc/${n}/environ`, "utf8");
        return [{ pid: Number(n), argv, env, state: stat.slice(stat.lastIndexOf(")") + 2)[0] ?? "" }];
      } catch {
        return [];
      }
    });
}

const hasMarker = (p: Proc, marker: string) => `\0${p.env}`.includes(`\0${MARKER_ENV}=${marker}\0`);

/** What is left of a command: processes with its marker (or naming `dir`), mounts, its netns and cgroups. */
function leftovers(marker: string, dir: string | undefined, except: ReadonlySet<number> = new Set()): string[] {
  const procs = processes()
    .filter((p) => p.state !== "Z" && !except.has(p.pid))
    .filter((p) => hasMarker(p, marker) || (dir !== undefined && p.argv.some((a) => a.includes(dir))))
    .map((p) => `process ${p.pid}: ${p.argv.join(" ")}`);
  if (!dir) return procs;
  const net = networkName(dir);
  return [
    ...procs,
    ...mountsUnder(dir).map((m) => `mount ${m}`),
    ...(existsSync(`/run/netns/${net}`) ? [`network namespace ${net}`] : []),
    ...cgroupMounts()
      .filter((m) => existsSync(join(m, net)))
      .map((m) => `cgroup ${join(m, net)}`),
  ];
}

const operatorsOf = (marker: string) =>
  processes().filter((p) => hasMarker(p, marker) && p.argv.includes("operator") && p.argv.includes("run"));

interface Stopped {
  code: number | null;
  output: string;
  /** From the signal to the command's exit. */
  ms: number;
}

/**
 * Starts `cmd` in a session of its own, waits until `midRun()` holds, sends `signal` (to its process group with
 * `group`, else to its PID alone) and waits for its exit.
 */
async function signalMidRun(o: {
  cmd: string[];
  env: Record<string, string | undefined>;
  midRun: () => boolean;
  signal: StopSignal;
  group?: boolean;
  startMs: number;
}): Promise<Stopped> {
  const log = join(scratch, `${o.env[MARKER_ENV]}.log`);
  const fd = openSync(log, "a");
  const proc = Bun.spawn(o.cmd, { cwd: ROOT, env: o.env, detached: true, stdin: "ignore", stdout: fd, stderr: fd });
  closeSync(fd);
  const output = () => Bun.file(log).text();
  const deadline = Date.now() + o.startMs;
  while (!o.midRun()) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      proc.kill("SIGKILL");
      await proc.exited;
      throw new Error(
        `${o.cmd.join(" ")} did not reach the point to signal it at (exit ${proc.exitCode}):\n${(await output()).slice(-4000)}`,
      );
    }
    await Bun.sleep(50);
  }
  const t0 = Date.now();
  process.kill(o.group ? -proc.pid : proc.pid, o.signal);
  const exited = await Promise.race([proc.exited, Bun.sleep(120_000).then(() => "timeout" as const)]);
  const ms = Date.now() - t0;
  if (exited === "timeout") {
    process.kill(-proc.pid, "SIGKILL");
    throw new Error(`${o.cmd.join(" ")} did not exit within 120 s of ${o.signal}:\n${(await output()).slice(-4000)}`);
  }
  console.log(`${o.cmd.slice(2).join(" ")}: ${o.signal} -> exit ${proc.exitCode} after ${(ms / 1000).toFixed(1)} s`);
  return { code: proc.exitCode, output: await output(), ms };
}

function stateOf(dir: string): { ready?: boolean; components?: Record<string, { pid: number }> } | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
  } catch {
    return undefined;
  }
}

/** `npm run cluster:up` into `dir`; the kubeconfig path. */
function clusterUp(dir: string): string {
  const r = Bun.spawnSync([BUN, "run", "tests/cluster/cli.ts", "up"], {
    cwd: ROOT,
    env: envFor(dir, `${runId}-cluster`),
    stdout: "pipe",
    stderr: "pipe",
  });
  const kubeconfig = /^KUBECONFIG=(.+)$/m.exec(r.stdout.toString())?.[1];
  if (r.exitCode !== 0 || !kubeconfig) throw new Error(`cluster up in ${dir} failed:\n${r.stderr.toString()}`);
  return kubeconfig;
}

const dirs: string[] = [];
function clusterDir(name: string): string {
  const dir = join(scratch, name);
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  // Whatever a failed case left: stop it, so that no test run leaves a cluster behind.
  for (const p of processes()) {
    if (`\0${p.env}`.includes(`\0${MARKER_ENV}=${runId}`)) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
  }
  for (const dir of dirs)
    Bun.spawnSync([BUN, "run", "tests/cluster/cli.ts", "down"], { cwd: ROOT, env: envFor(dir, `${runId}-down`) });
  rmSync(scratch, { recursive: true, force: true });
});

describe("cluster:up, stopped while it starts the control plane", () => {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    test(`${signal}: it stops the components it started and exits ${exitCodeFor(signal)}`, async () => {
      const dir = clusterDir(`up-${signal}`);
      const marker = `${runId}-up-${signal}`;
      const r = await signalMidRun({
        cmd: [BUN, "run", "tests/cluster/cli.ts", "up"],
        env: envFor(dir, marker),
        midRun: () => stateOf(dir)?.components?.["kube-apiserver"] !== undefined,
        signal,
        startMs: 120_000,
      });
      expect(r.code).toBe(exitCodeFor(signal));
      expect(r.output).toContain("interrupted: stopping what was started");
      expect(leftovers(marker, dir)).toEqual([]);
      expect(stateOf(dir)).toBeUndefined();
    }, 200_000);
  }
});

test("npm start, stopped before the example converged, stops its operator and the cluster it started", async () => {
  const dir = clusterDir("start");
  const marker = `${runId}-start`;
  const env = envFor(dir, marker);
  // No cluster configured, so that npm start brings up the local one: HOME without ~/.kube/config.
  if (existsSync(join(homedir(), ".kube", "config"))) {
    env.XDG_CACHE_HOME ??= join(homedir(), ".cache"); // the cluster's binaries stay where they are
    env.HOME = scratch;
  }
  const r = await signalMidRun({
    cmd: [BUN, "run", "src/build/start.ts"],
    env,
    midRun: () => operatorsOf(marker).length > 0,
    signal: "SIGHUP",
    startMs: 240_000,
  });
  expect(r.output).not.toMatch(/\] converged$/m);
  expect(r.code).toBe(129);
  expect(r.output).toContain("stopping the local control plane this job started");
  expect(leftovers(marker, dir)).toEqual([]);
}, 300_000);

test("npm run bench, its process group sent SIGTERM as `timeout` does, stops its operators and the cluster it started", async () => {
  const dir = clusterDir("bench");
  const marker = `${runId}-bench`;
  const r = await signalMidRun({
    cmd: [BUN, "run", "tests/bench/run.ts", "--quick", "--no-peer", "--no-build", "--scenario", "startup"],
    env: envFor(dir, marker),
    midRun: () => operatorsOf(marker).length > 0,
    signal: "SIGTERM",
    group: true,
    startMs: 240_000,
  });
  expect(r.code).toBe(143);
  expect(r.output).toContain("stopping the local control plane this run started");
  expect(r.output).not.toContain("# Benchmarks"); // no report from an interrupted run
  expect(leftovers(marker, dir)).toEqual([]);
  const copy = /a private copy of dist\/devctl: (\S+)\/devctl/.exec(r.output)?.[1];
  expect(copy && existsSync(copy)).toBe(false);
}, 300_000);

describe("on a cluster the command did not start", () => {
  const dir = clusterDir("shared");
  let kubeconfig = "";
  const clusterPids = () => new Set(Object.values(stateOf(dir)?.components ?? {}).map((c) => c.pid));
  /** Every component recorded for the cluster runs, none stopped (frozen), and the API server answers. */
  const clusterRuns = async () => {
    const pids = [...clusterPids()];
    const procs = processes();
    const running = pids.every((pid) => procs.some((p) => p.pid === pid && !["Z", "T", "t"].includes(p.state)));
    const api = await createKubeClient({ kubeconfig, timeoutMs: 5_000 })
      .raw("GET", "/readyz")
      .then(() => true)
      .catch(() => false);
    return pids.length === 5 && running && api;
  };
  beforeAll(() => {
    kubeconfig = clusterUp(dir);
  }, 200_000);

  test("npm run chaos stops its replicas, deletes its namespaces, leaves the cluster running and exits 130 on SIGINT", async () => {
    const marker = `${runId}-chaos`;
    const caches = () => readdirSync(scratch).filter((f) => f.startsWith("devctl-kubectl-cache-"));
    const cachesBefore = caches();
    const r = await signalMidRun({
      cmd: [BUN, "run", "tests/chaos/soak.ts", "--webapps", "5", "--minutes", "1"],
      env: envFor(dir, marker),
      midRun: () => operatorsOf(marker).length === 2,
      signal: "SIGINT",
      startMs: 180_000,
    });
    expect(r.code).toBe(130);
    expect(caches()).toEqual(cachesBefore); // the kubectl cache directory it made is gone too
    // An API server restarted by a fault is the cluster's, whoever started it.
    expect(leftovers(marker, undefined, clusterPids())).toEqual([]);
    expect(await clusterRuns()).toBe(true);
    const left = (
      await createKubeClient({ kubeconfig }).list<KubeObject & { status?: { phase?: string } }>(NAMESPACES)
    ).items
      .filter((ns) => ns.metadata.name?.startsWith("chaos-") && ns.status?.phase !== "Terminating")
      .map((ns) => ns.metadata.name);
    expect(left).toEqual([]);
  }, 240_000);

  test("npm test stops bun test and what its tests started, leaves the cluster it found running and exits 129 on SIGHUP", async () => {
    const marker = `${runId}-test-reused`;
    const r = await signalMidRun({
      cmd: [BUN, "run", "tests/run.ts", "tests/_signals-sleeper.ts"],
      env: envFor(dir, marker),
      midRun: () => processes().some((p) => hasMarker(p, marker) && p.argv.join(" ") === "sleep 86400"),
      signal: "SIGHUP",
      startMs: 240_000,
    });
    expect(r.code).toBe(129);
    expect(r.output).not.toContain("stopping the local control plane");
    expect(leftovers(marker, undefined, clusterPids())).toEqual([]);
    expect(await clusterRuns()).toBe(true);
  }, 300_000);
});

test("npm test stops bun test, what its tests started and the cluster it started, and exits 143 on SIGTERM", async () => {
  const dir = clusterDir("test");
  const marker = `${runId}-test`;
  const r = await signalMidRun({
    cmd: [BUN, "run", "tests/run.ts", "tests/_signals-sleeper.ts"],
    env: envFor(dir, marker),
    midRun: () => processes().some((p) => hasMarker(p, marker) && p.argv.join(" ") === "sleep 86400"),
    signal: "SIGTERM",
    startMs: 240_000,
  });
  expect(r.code).toBe(143);
  expect(r.output).toContain("stopping the local control plane this run started");
  expect(leftovers(marker, dir)).toEqual([]);
}, 300_000);
