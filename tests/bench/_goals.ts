/**
 * The goals of issue #11 as rows of the report's summary: devctl's figure, the Go peer's, their ratio and
 * a verdict from this run. Pure.
 *
 * Properties:
 * - A ratio goal is met when devctl / Go <= its bound (`ratioAtMost`); a value goal when devctl's own
 *   figure <= its bound (`valueAtMost`, e.g. 0 writes on a restart), the Go peer's shown beside it.
 * - A figure that is missing or not a number (the peer did not run, the scenario failed) gives
 *   "not measured", never "met".
 * - Rows keep the order in which the scenarios report them (the order, see run.ts ORDER and
 *   SCENARIOS); goalsTable() lays them out for the top of BENCHMARKS.md.
 */
import type { Table, Verdict } from "./_context.ts";
import { fmt } from "./_stats.ts";

export interface GoalSpec {
  /** What is compared, e.g. "convergence of 1,000 WebApps (all Available)". */
  name: string;
  /** devctl / Go must be at most this. */
  ratioAtMost?: number;
  /** devctl's own figure must be at most this (the peer's is shown for reference). */
  valueAtMost?: number;
}

export interface Goal {
  name: string;
  bound: string;
  devctl: string;
  peer: string;
  ratio: string;
  verdict: Verdict;
}

const measured = (x: number | undefined): x is number => x !== undefined && !Number.isNaN(x);

/** One goal row from devctl's and the peer's figures (either may be missing), each shown by `show`. */
export function goal(
  spec: GoalSpec,
  devctl: number | undefined,
  peer: number | undefined,
  show: (x: number) => string,
): Goal {
  const ratio = measured(devctl) && measured(peer) && peer !== 0 ? devctl / peer : Number.NaN;
  let verdict: Verdict = "not measured";
  let bound = "";
  if (spec.ratioAtMost !== undefined) {
    bound = `devctl / Go ≤ ${spec.ratioAtMost.toFixed(1)}`;
    if (measured(ratio)) verdict = ratio <= spec.ratioAtMost ? "met" : "missed";
  } else if (spec.valueAtMost !== undefined) {
    bound = `devctl ≤ ${spec.valueAtMost}`;
    if (measured(devctl)) verdict = devctl <= spec.valueAtMost ? "met" : "missed";
  }
  return {
    name: spec.name,
    bound,
    devctl: measured(devctl) ? show(devctl) : "n/a",
    peer: measured(peer) ? show(peer) : "n/a",
    ratio: measured(ratio) ? fmt(ratio, 2) : "n/a",
    verdict,
  };
}

/** A goal whose ratio is already known (a median of per-repeat ratios), with the medians of both figures. */
export function ratioGoal(
  spec: GoalSpec,
  devctl: number | undefined,
  peer: number | undefined,
  ratio: number,
  show: (x: number) => string,
): Goal {
  const g = goal(spec, devctl, peer, show);
  if (spec.ratioAtMost === undefined) return g;
  const ok = measured(ratio);
  return {
    ...g,
    ratio: ok ? fmt(ratio, 2) : "n/a",
    verdict: ok ? (ratio <= spec.ratioAtMost ? "met" : "missed") : "not measured",
  };
}

/** The summary table of every goal reported. */
export function goalsTable(goals: readonly Goal[]): Table {
  return {
    caption:
      "Goals of issue #11, devctl beside the Go peer (the seed's controller-runtime operator), all from this run (medians; a convergence ratio is the median of the per-repeat ratios):",
    head: ["goal", "bound", "devctl", "Go peer", "devctl / Go", "verdict"],
    left: 2,
    rows: goals.map((g) => [g.name, g.bound, g.devctl, g.peer, `**${g.ratio}**`, `**${g.verdict}**`]),
  };
}

/** The verdict of several goals: missed if any is, else not measured if any is, else met. */
export function overall(goals: readonly Goal[]): Verdict {
  if (goals.length === 0) return "not measured";
  if (goals.some((g) => g.verdict === "missed")) return "missed";
  if (goals.some((g) => g.verdict !== "met")) return "not measured";
  return "met";
}
