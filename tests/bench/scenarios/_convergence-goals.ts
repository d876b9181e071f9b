/**
 * The runs of the convergence scenario as data, and what the issue asks of them: the goals (devctl / Go
 * per N, beside a CPU hog, requests and CPU per WebApp), the busy-machine table, and the evidence kept
 * for every run with the outliers among them. Pure.
 *
 * Properties:
 * - A ratio over repeats is the median of the per-repeat ratios (both operators ran in the same repeat,
 *   minutes apart), never a ratio of medians; medians skip repeats where a figure is missing.
 * - An outlier is a run slower than 1.3x the median of the other runs of the same operator and kind
 *   (see _evidence.ts outliers); its log file is named.
 */
import type { Table } from "../_context.ts";
import { describeEvidence, type Evidence, outliers } from "../_evidence.ts";
import { type Goal, ratioGoal } from "../_goals.ts";
import { IMPL_LABEL, type OperatorImpl, sumOf } from "../_operator.ts";
import type { CpuUsage } from "../_proc.ts";
import { fmt, fmtMs, median, spread } from "../_stats.ts";
export interface ConvergenceRun {
  impl: OperatorImpl;
  availableMs: number;
  childrenMs: number;
  createMs: number;
  op: CpuUsage;
  /** Operator RSS right after convergence. */
  rss: number;
  requests: Record<string, number>;
  namespace: string;
  /** [ms since t0, WebApps Available] at every change. */
  curve: [number, number][];
  /** [ms since t0, RSS bytes] every 250 ms. */
  rssCurve: [number, number][];
  /** Where its log and metric timeline are, and what they say (see _evidence.ts). */
  evidence: Evidence;
}

export interface FloorRun {
  writtenMs: number;
  availableMs: number;
  usage: CpuUsage;
  namespace: string;
  curve: [number, number][];
}

export interface Repeat {
  floor: FloorRun;
  /** The minimal operator (_references.ts), when it ran. */
  minimal?: FloorRun;
  ops: Partial<Record<OperatorImpl, ConvergenceRun>>;
}

/** A repeat of the busy-machine convergence: the operators beside a CPU hog, no floor. */
export type BusyRepeat = Pick<Repeat, "ops">;

/** The busy-machine runs and their size. */
export interface Busy {
  n: number;
  list: BusyRepeat[];
}

/** Median over repeats of f(repeat), skipping repeats where f is undefined; NaN when none. */
export function medianOf<R>(list: readonly R[], f: (r: R) => number | undefined): number {
  return median(list.flatMap((r) => (f(r) === undefined ? [] : [f(r) as number])));
}

export const pick = <R>(list: readonly R[], f: (r: R) => number | undefined): number[] =>
  list.flatMap((r) => (f(r) === undefined ? [] : [f(r) as number]));

/** devctl's figure over the peer's within one repeat; undefined unless both ran. */
export const perRepeat =
  (f: (r: ConvergenceRun) => number) =>
  (rep: BusyRepeat): number | undefined =>
    rep.ops.devctl && rep.ops.peer ? f(rep.ops.devctl) / f(rep.ops.peer) : undefined;

export const availableMs = (r: ConvergenceRun) => r.availableMs;
const requestsPerWebApp = (n: number) => (r: ConvergenceRun) => sumOf(r.requests) / n;
const cpuMsPerWebApp = (n: number) => (r: ConvergenceRun) => (1000 * (r.op.byProcess.operator ?? Number.NaN)) / n;
export const of = (impl: OperatorImpl, f: (r: ConvergenceRun) => number) => (rep: BusyRepeat) =>
  rep.ops[impl] ? f(rep.ops[impl] as ConvergenceRun) : undefined;

/** The issue's convergence goals: time at every quiet N and beside the hog (<= 0.9x Go), requests and CPU per WebApp at the largest N (<= 1.0x). */
export function convergenceGoals(runs: Map<number, Repeat[]>, busy: Busy | undefined): Goal[] {
  const goals: Goal[] = [];
  const timeGoal = (name: string, list: readonly BusyRepeat[]) =>
    ratioGoal(
      { name, ratioAtMost: 0.9 },
      medianOf(list, of("devctl", availableMs)),
      medianOf(list, of("peer", availableMs)),
      medianOf(list, perRepeat(availableMs)),
      fmtMs,
    );
  for (const [n, list] of runs)
    goals.push(timeGoal(`convergence of ${n.toLocaleString("en")} WebApps → all Available`, list));
  if (busy)
    goals.push(timeGoal(`the same for ${busy.n.toLocaleString("en")} beside a CPU hog (busy machine)`, busy.list));
  const largest = Math.max(...runs.keys());
  const list = runs.get(largest) ?? [];
  for (const [name, f, show] of [
    [
      `API requests per WebApp while converging ${largest.toLocaleString("en")}`,
      requestsPerWebApp(largest),
      (x: number) => fmt(x, 2),
    ],
    [
      `operator CPU ms per WebApp while converging ${largest.toLocaleString("en")}`,
      cpuMsPerWebApp(largest),
      (x: number) => fmt(x, 2),
    ],
  ] as const)
    goals.push(
      ratioGoal(
        { name, ratioAtMost: 1 },
        medianOf(list, of("devctl", f)),
        medianOf(list, of("peer", f)),
        medianOf(list, perRepeat(f)),
        show,
      ),
    );
  return goals;
}

/** The busy-machine rows: each operator beside one CPU hog, and what the hog got of the machine. */
export function busyTable(busy: Busy, impls: readonly OperatorImpl[]): Table {
  const peer = impls.includes("peer");
  const hogCpu = (impl: OperatorImpl) => (rep: BusyRepeat) => rep.ops[impl]?.op.byProcess["CPU hog"];
  const rows = impls.map((impl) => [
    IMPL_LABEL[impl],
    spread(pick(busy.list, of(impl, availableMs)), fmtMs),
    spread(
      pick(
        busy.list,
        of(impl, (r) => r.childrenMs),
      ),
      fmtMs,
    ),
    fmt(
      medianOf(
        busy.list,
        of(impl, (r) => r.op.byProcess.operator ?? Number.NaN),
      ),
      2,
    ),
    fmt(medianOf(busy.list, hogCpu(impl)), 1),
  ]);
  return {
    caption: `Convergence of ${busy.n} WebApps with one CPU hog (a busy loop, started right before the first create, stopped after the last Available, bounded by the run's timeout) beside the operator and the control plane, ${busy.list.length} repeat(s), operators alternating, each on a fresh cluster (no floor run).${peer ? ` devctl / Go: **${fmt(medianOf(busy.list, perRepeat(availableMs)), 2)}** (median of the per-repeat ratios).` : ""}`,
    head: ["operator", "all Available", "all children exist", "operator CPU s", "CPU hog's CPU s"],
    rows,
  };
}

/** One row per measured operator run: what its evidence says and where it is. */
export function evidenceTable(runs: Map<number, Repeat[]>, busy: Busy | undefined): Table {
  const rows: string[][] = [];
  const add = (what: string, list: readonly BusyRepeat[]) =>
    list.forEach((rep, r) => {
      for (const op of Object.values(rep.ops))
        rows.push([
          `${what}, repeat ${r + 1}`,
          IMPL_LABEL[op.impl],
          describeEvidence(op.evidence),
          `\`${op.evidence.log}\``,
          fmtMs(op.availableMs),
        ]);
    });
  if (busy) add(`N=${busy.n} beside a CPU hog`, busy.list);
  for (const [n, list] of runs) add(`N=${n}`, list);
  return {
    caption:
      "Evidence kept for every run (the operator's whole output, and its /metrics every second in the .metrics.jsonl beside it):",
    head: ["run", "operator", "what its metrics say", "log", "all Available"],
    left: 4,
    rows,
  };
}

/** Notes naming every run slower than 1.3x the median of its operator's other runs of the same kind. */
export function outlierNotes(runs: Map<number, Repeat[]>, busy: Busy | undefined): string[] {
  const groups = [
    ...(busy ? [[`N=${busy.n} beside a CPU hog`, busy.list] as const] : []),
    ...[...runs].map(([n, l]) => [`N=${n}`, l] as const),
  ];
  return groups.flatMap(([what, list]) =>
    outliers(
      list.flatMap((rep, r) =>
        Object.values(rep.ops).map((op) => ({
          label: `${what}, repeat ${r + 1}, ${IMPL_LABEL[op.impl]}`,
          ms: op.availableMs,
          file: op.evidence.log,
          group: op.impl,
        })),
      ),
    ).map(
      (o) =>
        `Outlier: ${o.label} took ${fmtMs(o.ms)}, more than 1.3× the median of the others (${fmtMs(o.othersMedian)}); its log is ${o.file}.`,
    ),
  );
}
