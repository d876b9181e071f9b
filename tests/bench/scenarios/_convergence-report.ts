/**
 * The report section of the convergence scenario, from its runs. Pure.
 *
 * Properties:
 * - Ratios are taken within a repeat (devctl / floor, devctl / Go peer, Go peer / floor: both ran in
 *   the same repeat, minutes apart) and their median is shown, never a ratio of medians.
 * - Columns of the Go peer appear only when the peer ran; a missing figure is "n/a".
 * - Charts: per N, the WebApps Available over time in the last repeat (devctl, the Go peer, the
 *   floor's Deployments Available); for the largest N, the operators' RSS over the same runs.
 * - The goals, the busy-machine table, the evidence of every run and the outliers come from
 *   _convergence-goals.ts; the section's verdict is that of its time goals (quiet and busy).
 */
import type { Chart, Context, Section, Table } from "../_context.ts";
import { overall } from "../_goals.ts";
import { IMPL_LABEL, type OperatorImpl, sumOf } from "../_operator.ts";
import { cpuRows } from "../_report.ts";
import { fmt, fmtMiB, fmtMs, spread } from "../_stats.ts";
import { lineChart, type Series } from "../_svg.ts";
import {
  availableMs,
  type Busy,
  busyTable,
  type ConvergenceRun,
  convergenceGoals,
  evidenceTable,
  medianOf,
  of,
  outlierNotes,
  perRepeat,
  pick,
  type Repeat,
} from "./_convergence-goals.ts";

export type { Busy, BusyRepeat, ConvergenceRun, FloorRun, Repeat } from "./_convergence-goals.ts";
export { convergenceGoals, medianOf } from "./_convergence-goals.ts";
function timeTable(runs: Map<number, Repeat[]>, peer: boolean, ctx: Context): Table {
  const ms = (i: OperatorImpl) => (r: Repeat) => r.ops[i]?.availableMs;
  const ratio = (a: (r: Repeat) => number | undefined, b: (r: Repeat) => number | undefined) => (r: Repeat) => {
    const x = a(r);
    const y = b(r);
    return x === undefined || y === undefined ? undefined : x / y;
  };
  const floor = (r: Repeat) => r.floor.availableMs;
  const head = ["N", "devctl: all Available", "floor: all Available", "devctl / floor"];
  if (peer) head.push("Go peer: all Available", "Go peer / floor", "**devctl / Go**");
  head.push("devctl: all children exist", "floor: all written", "WebApps/s (devctl)");
  const rows = [...runs].map(([n, list]) => {
    const row = [
      String(n),
      spread(pick(list, ms("devctl")), fmtMs),
      spread(pick(list, floor), fmtMs),
      fmt(medianOf(list, ratio(ms("devctl"), floor)), 2),
    ];
    if (peer)
      row.push(
        spread(pick(list, ms("peer")), fmtMs),
        fmt(medianOf(list, ratio(ms("peer"), floor)), 2),
        `**${fmt(medianOf(list, ratio(ms("devctl"), ms("peer"))), 2)}**`,
      );
    row.push(
      spread(
        pick(list, (r) => r.ops.devctl?.childrenMs),
        fmtMs,
      ),
      spread(
        pick(list, (r) => r.floor.writtenMs),
        fmtMs,
      ),
      fmt(n / (medianOf(list, ms("devctl")) / 1000), 0),
    );
    return row;
  });
  return {
    caption: `Medians over the repeats (min–max, n = repeats); ratios are medians of the per-repeat ratios. Operators at --concurrency ${ctx.opts.concurrency}; WebApps created by ${ctx.opts.clientConcurrency} parallel requests; floor: ${ctx.opts.concurrency} parallel server-side applies of the same Deployment + Service pairs.`,
    head,
    rows,
  };
}

/** The minimal operator beside the floor, devctl and the Go peer: runtime cost (devctl / minimal) against write cost (minimal / Go). */
function minimalTable(runs: Map<number, Repeat[]>, peer: boolean): Table | undefined {
  const withMinimal = [...runs].filter(([, list]) => list.some((r) => r.minimal));
  if (withMinimal.length === 0) return undefined;
  const minimal = (r: Repeat) => r.minimal?.availableMs;
  const per = (a: (r: Repeat) => number | undefined, b: (r: Repeat) => number | undefined) => (r: Repeat) => {
    const x = a(r);
    const y = b(r);
    return x === undefined || y === undefined ? undefined : x / y;
  };
  const devctl = (r: Repeat) => r.ops.devctl?.availableMs;
  const go = (r: Repeat) => r.ops.peer?.availableMs;
  const head = ["N", "minimal operator: all Available", "minimal / floor", "devctl / minimal"];
  if (peer) head.push("**minimal / Go**", "0.9× Go");
  const rows = withMinimal.map(([n, list]) => {
    const row = [
      String(n),
      spread(pick(list, minimal), fmtMs),
      fmt(
        medianOf(
          list,
          per(minimal, (r) => r.floor.availableMs),
        ),
        2,
      ),
      fmt(medianOf(list, per(devctl, minimal)), 2),
    ];
    if (peer) row.push(`**${fmt(medianOf(list, per(minimal, go)), 2)}**`, fmtMs(0.9 * medianOf(list, go)));
    return row;
  });
  return {
    caption:
      "The minimal operator, in the same repeats (scenarios/_references.ts): the bench client sends only the writes devctl's design needs (in its order: the Deployment POST as each WebApp's create returns, the Service POST behind the Deployment POSTs waiting, one status write with devctl's conditions once the Deployment is Available and the Service exists, ahead of both) at the same concurrency, with no operator process, cache, queue or events. devctl / minimal is what devctl's runtime adds to its writes; minimal / Go is what those writes and their order cost against the Go peer's. It is not a lower bound for every operator: other writes, or another order, can be faster.",
    head,
    rows,
  };
}

function costTable(runs: Map<number, Repeat[]>, impls: readonly OperatorImpl[]): Table {
  const figures: [string, (r: ConvergenceRun, n: number) => number, (x: number) => string][] = [
    ["API requests per WebApp", (r, n) => sumOf(r.requests) / n, (x) => fmt(x, 2)],
    ["operator CPU ms per WebApp", (r, n) => (1000 * (r.op.byProcess.operator ?? Number.NaN)) / n, (x) => fmt(x, 2)],
    ["operator RSS right after", (r) => r.rss, fmtMiB],
  ];
  const head = ["N", "figure", ...impls.map((i) => IMPL_LABEL[i])];
  if (impls.includes("peer")) head.push("devctl / Go");
  const rows: string[][] = [];
  for (const [n, list] of runs)
    for (const [name, f, show] of figures) {
      const of = (i: OperatorImpl) => (r: Repeat) => (r.ops[i] ? f(r.ops[i] as ConvergenceRun, n) : undefined);
      const row = [String(n), name, ...impls.map((i) => show(medianOf(list, of(i))))];
      if (impls.includes("peer"))
        row.push(
          `**${fmt(
            medianOf(list, (r) => {
              const a = of("devctl")(r);
              const b = of("peer")(r);
              return a === undefined || b === undefined ? undefined : a / b;
            }),
            2,
          )}**`,
        );
      rows.push(row);
    }
  return { caption: "What converging cost each operator (medians over the repeats):", head, left: 2, rows };
}

function requestTable(last: Repeat, n: number, impls: readonly OperatorImpl[]): Table {
  const methods = new Set(impls.flatMap((i) => Object.keys(last.ops[i]?.requests ?? {})));
  const rows = [...methods, "all"].map((m) => [
    m,
    ...impls.flatMap((i) => {
      const req = last.ops[i]?.requests ?? {};
      const v = m === "all" ? sumOf(req) : (req[m] ?? 0);
      return [String(v), fmt(v / n, 2)];
    }),
  ]);
  return {
    caption: `API requests sent while converging N=${n}, until they stop (last repeat; each operator's own rest_client_requests_total, one per HTTP request, watches included):`,
    head: ["method", ...impls.flatMap((i) => [IMPL_LABEL[i], "per WebApp"])],
    rows,
  };
}

const seconds = (ms: number) => `${fmt(ms / 1000, ms < 10_000 ? 1 : 0)} s`;

export function charts(runs: Map<number, Repeat[]>, impls: readonly OperatorImpl[]): Chart[] {
  const out: Chart[] = [];
  const largest = Math.max(...runs.keys());
  for (const [n, list] of runs) {
    const last = list.at(-1);
    if (!last) continue;
    const series: Series[] = impls.map((i) => ({ name: IMPL_LABEL[i], step: true, points: last.ops[i]?.curve ?? [] }));
    series.push({ name: "floor (Deployments Available)", step: true, dashed: true, points: last.floor.curve });
    if (last.minimal) series.push({ name: "minimal operator", step: true, dashed: true, points: last.minimal.curve });
    out.push({
      file: `bench-convergence-${n}.svg`,
      alt: `WebApps Available over time, N=${n}, last repeat: ${series.map((s) => s.name).join(", ")}`,
      svg: lineChart({
        title: `Convergence of ${n} WebApps (last repeat)`,
        xLabel: "time since the first create",
        yLabel: "Available",
        series,
        formatX: seconds,
      }),
    });
    if (n !== largest) continue;
    out.push({
      file: `bench-rss-${n}.svg`,
      alt: `Operator RSS over time while converging ${n} WebApps, last repeat: ${impls.map((i) => IMPL_LABEL[i]).join(", ")}`,
      svg: lineChart({
        title: `Operator RSS while converging ${n} WebApps (last repeat)`,
        xLabel: "time since the first create",
        yLabel: "RSS",
        // In MiB, so the axis ticks are round numbers of MiB.
        series: impls.map((i) => ({
          name: IMPL_LABEL[i],
          points: (last.ops[i]?.rssCurve ?? []).map(([t, b]): [number, number] => [t, b / 2 ** 20]),
        })),
        formatX: seconds,
        formatY: (mib) => `${mib} MiB`,
      }),
    });
  }
  return out;
}

export function convergenceReport(
  ctx: Context,
  runs: Map<number, Repeat[]>,
  profile: Table[],
  allFresh: boolean,
  busy?: Busy,
): Section {
  const impls = ctx.impls;
  const peer = impls.includes("peer");
  const largest = Math.max(...runs.keys());
  const tables: Table[] = [timeTable(runs, peer, ctx)];
  const minimal = minimalTable(runs, peer);
  if (minimal) tables.push(minimal);
  if (busy) tables.push(busyTable(busy, impls));
  tables.push(costTable(runs, impls));
  const last = runs.get(largest)?.at(-1);
  const notes: string[] = [];
  if (last) {
    for (const i of impls) {
      const run = last.ops[i];
      if (run)
        tables.push({
          caption: `Where the CPU went, N=${largest}, ${IMPL_LABEL[i]} run (last repeat, ${fmtMs(run.availableMs)} wall):`,
          head: ["process", "CPU s", "cores used"],
          rows: cpuRows(run.op),
        });
    }
    tables.push({
      caption: `The same for the floor run (${fmtMs(last.floor.availableMs)} wall):`,
      head: ["process", "CPU s", "cores used"],
      rows: cpuRows(last.floor.usage),
    });
    if (last.minimal)
      tables.push({
        caption: `The same for the minimal operator (${fmtMs(last.minimal.availableMs)} wall; its requests are the bench client's):`,
        head: ["process", "CPU s", "cores used"],
        rows: cpuRows(last.minimal.usage),
      });
    tables.push(requestTable(last, largest, impls));
  }
  tables.push(evidenceTable(runs, busy));
  notes.push(
    `Every operator process of this run, in every scenario, wrote its whole output to a file in ${ctx.evidenceDir} (the runs above also their /metrics every second); they stay after the run, so that an outlier can be explained.`,
  );
  tables.push(...profile);
  notes.push(...outlierNotes(runs, busy));
  notes.push(
    "“Available” is the WebApp's own Available=True condition, seen on a watch: devctl sets it when the Deployment is Available and the Service exists; the Go peer (the seed's code) when readyReplicas reaches spec.replicas. The floor's is the Deployment's Available=True. All include the controller-manager creating the ReplicaSet and the Pod, the scheduler binding it and KWOK marking it Ready.",
    "Ratio devctl / floor: 1.0 would mean devctl adds nothing to what the API server and the controllers need anyway. devctl / Go below 1.0 means devctl is faster (or cheaper) than the seed's controller-runtime operator.",
    allFresh
      ? `Every floor run and every operator run started on a new, empty local cluster. The operators alternate (odd repeats devctl first, even repeats the Go peer first), except in the last repeat at N=${largest}: there devctl runs last, and its cluster, with the floor's objects added after the timed run, is the fixture of the later scenarios.`
      : "The cluster could not be replaced between runs (it is not one this run started), so every run uses new namespaces beside the old ones and the cluster grows during the run; creating Services gets slower as their number grows (see the analysis).",
  );
  const headline = [...runs]
    .map(([n, list]) => {
      const ms = medianOf(list, (r) => r.ops.devctl?.availableMs);
      const vsFloor = medianOf(list, (r) =>
        r.ops.devctl ? r.ops.devctl.availableMs / r.floor.availableMs : undefined,
      );
      const vsGo = medianOf(list, (r) =>
        r.ops.devctl && r.ops.peer ? r.ops.devctl.availableMs / r.ops.peer.availableMs : undefined,
      );
      return `N=${n}: ${fmtMs(ms)}, ${fmt(vsFloor, 2)}× floor${peer ? `, ${fmt(vsGo, 2)}× Go` : ""}`;
    })
    .join("; ");
  const busyHeadline = busy
    ? `; N=${busy.n} beside a CPU hog: ${fmtMs(medianOf(busy.list, of("devctl", availableMs)))}${peer ? `, ${fmt(medianOf(busy.list, perRepeat(availableMs)), 2)}× Go` : ""}`
    : "";
  const goals = convergenceGoals(runs, busy);
  const timeGoals = goals.filter((g) => g.name.includes("Available") || g.name.includes("CPU hog"));
  return {
    id: "convergence",
    title: "1. Convergence",
    goal: peer
      ? "N=100 and 1,000, quiet and beside a CPU hog → all Available in ≤ 0.9× the Go peer's time"
      : "N=100 and 1,000 → all Available",
    verdict: peer ? overall(timeGoals) : "no goal",
    headline: headline + busyHeadline,
    goals,
    tables,
    notes,
    charts: charts(runs, impls),
  };
}
