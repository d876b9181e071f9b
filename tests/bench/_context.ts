/**
 * What every scenario gets (options, the cluster, a client, progress output, CPU meters, operator
 * processes) and what it gives back (a report section).
 *
 * Properties:
 * - ctx.fixture, once set, is a namespace holding `n` converged WebApps (1 replica, image
 *   `image`) and a floor namespace holding the same Deployments and Services without WebApps;
 *   scenarios after convergence reuse them, and ensureFixture() makes them when convergence did not run.
 * - At most one operator without leader election runs against a namespace at a time: a scenario
 *   stops every operator it starts before it returns (also on failure).
 * - freshCluster() replaces the local cluster by an empty one when this run owns it (then ctx.kube,
 *   the fixture and the leftovers are renewed, the CRD is installed again and the API server warmed up
 *   with one request of each kind the measurements send) and resolves true; on any
 *   other cluster it does nothing and resolves false. Scenarios read ctx.kube at each use.
 * - Every operator started through ctx.operator() writes its whole output to a file of its own in
 *   ctx.evidenceDir (named `<sequence>-<impl>-<namespace>.log`, or as `how.logName` says), which stays after the run.
 * - settle() waits until the local API server and controller-manager are both nearly idle (each below 20% of a
 *   core over 1 s, at most 30 s), so background work of one measurement does not leak into the next (after a
 *   burst the controller-manager keeps writing ReplicaSet and Deployment status for a while).
 */
import { join } from "node:path";
import { createKubeClient } from "../../src/kube/client.ts";
import type { KubeClient } from "../../src/kube/types.ts";
import type { BenchCluster } from "./_cluster.ts";
import type { Goal, GoalSpec } from "./_goals.ts";
import type { BenchOptions } from "./_options.ts";
import { ensureCrd, warmUp } from "./_kube.ts";
import { type BenchOperator, type OperatorImpl, spawnOperator } from "./_operator.ts";
import { cpuMeter, cpuSeconds, type CpuMeter } from "./_proc.ts";

export interface Table {
  caption?: string;
  /** Leading columns aligned left (text); the rest are numbers, aligned right. Default 1. */
  left?: number;
  head: string[];
  rows: string[][];
}

export type Verdict = "met" | "missed" | "not measured" | "no goal";

export interface Section {
  id: string;
  title: string;
  /** The goal, in words. */
  goal?: string;
  verdict: Verdict;
  /** The figure(s) that matter, for the summary table. */
  headline: string;
  /** The scenario threw: the report shows the error and the run exits non-zero. */
  failed?: boolean;
  tables: Table[];
  notes: string[];
  /** SVG charts, written beside the report and shown after the tables. */
  charts?: Chart[];
  /** The figures another operator's run can be compared with (see _compare.ts). */
  figures?: Figure[];
  /** The goals this section measured, for the summary at the top (see _goals.ts). */
  goals?: Goal[];
}

export interface Figure {
  name: string;
  value: number;
  show(value: number): string;
  /** This figure is one of the goals: compared with the Go peer's (see _compare.ts). */
  goal?: GoalSpec;
}

export interface Chart {
  /** File name beside the report, e.g. "bench-convergence-1000.svg". */
  file: string;
  /** What it shows, in words (the image's alt text). */
  alt: string;
  svg: string;
}

export interface Fixture {
  namespace: string;
  floorNamespace: string;
  n: number;
  image: string;
}

/** devctl's seed-shaped figures of this run that the production-shaped scenario reports its own beside. */
export interface SeedFigures {
  /** devctl's quiet convergence runs at the largest N (convergence.ts). */
  convergence?: { n: number; runs: { availableMs: number; requests: Record<string, number> }[] };
  /** The large memory point (memory.ts): devctl's peak RSS, 5 s after its queue drained, and of a fresh start. */
  large?: { n: number; peak: number; drained: number; fresh: number };
}

export interface Context {
  opts: BenchOptions;
  /** Replaced by freshCluster(): read it at each use. */
  kube: KubeClient;
  cluster: BenchCluster;
  log(line: string): void;
  fixture?: Fixture;
  /** Set by convergence and memory; kept across freshCluster(). */
  seed: SeedFigures;
  /** Where operator logs and metric timelines of this run are kept (see _evidence.ts). */
  evidenceDir: string;
  /** Extra things to delete at the end (namespaces of external clusters). */
  leftovers: string[];
  meter(pids: Record<string, number | undefined>): Promise<CpuMeter>;
  settle(): Promise<void>;
  freshCluster(): Promise<boolean>;
  /**
   * Starts an operator (devctl unless `how.impl` says "peer") for `namespace` with the run's
   * --concurrency and leader election off unless `args` say otherwise.
   */
  operator(
    namespace: string,
    args?: string[],
    how?: { impl?: OperatorImpl; profileDir?: string; logName?: string },
  ): Promise<BenchOperator>;
  /** The operators every comparison runs: devctl, and the Go peer unless --no-peer. */
  impls: OperatorImpl[];
  /** Whether a scenario measures its floor here (false in the Go peer's pass of a comparison: it ran once already). */
  measuresFloor: boolean;
  /** Stops every operator started through ctx.operator() that still runs. */
  stopOperators(): Promise<void>;
}

/** The control-plane processes settle() waits to be idle. */
const SETTLING = ["kube-apiserver", "kube-controller-manager"];

export function createContext(
  opts: BenchOptions,
  kube: KubeClient,
  cluster: BenchCluster,
  log: (line: string) => void,
  evidenceDir: string,
): Context {
  const running = new Set<BenchOperator>();
  let started = 0;
  const ctx: Context = {
    opts,
    kube,
    cluster,
    log,
    evidenceDir,
    leftovers: [],
    seed: {},
    async meter(pids) {
      return cpuMeter({ ...pids, ...(await cluster.controlPlanePids()) });
    },
    async settle() {
      const all = await cluster.controlPlanePids();
      const pids = SETTLING.flatMap((name) => (all[name] === undefined ? [] : [all[name]]));
      if (pids.length === 0) return Bun.sleep(2000);
      const deadline = performance.now() + 30_000;
      while (performance.now() < deadline) {
        const a = pids.map((pid) => cpuSeconds(pid) ?? 0);
        await Bun.sleep(1000);
        if (pids.every((pid, i) => (cpuSeconds(pid) ?? 0) - (a[i] ?? 0) < 0.2)) return;
      }
    },
    async freshCluster() {
      if (!cluster.canReset) return false;
      await ctx.stopOperators();
      const t = performance.now();
      await cluster.reset();
      ctx.kube = createKubeClient({ kubeconfig: cluster.kubeconfig });
      await ensureCrd(ctx.kube);
      await warmUp(ctx.kube);
      delete ctx.fixture;
      ctx.leftovers.length = 0;
      log(`  fresh cluster in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return true;
    },
    impls: opts.peer ? ["devctl", "peer"] : ["devctl"],
    measuresFloor: true,
    async operator(namespace, args = [], how = {}) {
      const withLe = args.some((a) => a.startsWith("--leader-elect"));
      const impl = how.impl ?? "devctl";
      const name = how.logName ?? `${String(++started).padStart(3, "0")}-${impl}-${namespace}`;
      const op = await spawnOperator({
        impl,
        logFile: join(evidenceDir, `${name}.log`),
        kubeconfig: cluster.kubeconfig,
        args: [
          "--namespaces",
          namespace,
          "--concurrency",
          String(opts.concurrency),
          ...(withLe ? [] : ["--leader-elect=false"]),
          ...args,
        ],
        ...(how.profileDir ? { profileDir: how.profileDir } : {}),
      });
      running.add(op);
      const stop = op.stop.bind(op);
      op.stop = async (signal) => {
        const code = await stop(signal);
        running.delete(op);
        return code;
      };
      return op;
    },
    async stopOperators() {
      await Promise.all([...running].map((op) => op.stop("SIGKILL")));
    },
  };
  return ctx;
}
