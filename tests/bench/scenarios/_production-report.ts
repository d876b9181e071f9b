/**
 * The report section of the production-shaped scenario (production.ts), from its measurements. Pure.
 *
 * Properties:
 * - Every production-shaped figure stands beside devctl's own seed-shaped figure of the same run, never beside the
 *   Go peer's (the peer knows only image, replicas and port): the Go-peer goals of the other sections are untouched.
 * - The goals (issue #31 item 7): requests per extra child on creation ≤ EXTRA_CHILD_REQUESTS_MAX, where an extra
 *   child is one the production shape wants beyond the seed's (a PodDisruptionBudget, an Ingress, an autoscaler on
 *   half); 0 requests in steady state; RSS at the large point ≤ RSS_RATIO_MAX × the seed-shaped RSS there. Both RSS
 *   figures are the larger of "5 s after the queue drained" and "fresh start", as scenario 3 checks its own goal.
 * - A part that failed or a figure that is missing gives "not measured" for its goal, never "met".
 */
import type { Section, Table, Verdict } from "../_context.ts";
import { addRequests, sumOf } from "../_operator.ts";
import { fmt, fmtMiB, fmtMs, median } from "../_stats.ts";

export const EXTRA_CHILD_REQUESTS_MAX = 1.2;
export const RSS_RATIO_MAX = 1.3;

export interface KindCount {
  kind: string;
  count: number;
}

export interface SteadyFigures {
  /**
   * How long the bench waited, after the convergence and before starting this devctl, for the controllers to finish
   * with the children (every autoscaler past its first sync, every disruption budget's status current): a status that
   * changes in the window is news the WebApp must report, not steady state.
   */
  settledMs: number;
  readyMs: number;
  resyncS: number;
  /** Requests by method from the process start to the end of its start-up pass (LISTs and WATCHes included). */
  startup: Record<string, number>;
  startupReconciles: number;
  /** Requests by method from the end of the start-up pass to the end of one resync pass. */
  resync: Record<string, number>;
  resyncReconciles: number;
  windowMs: number;
  errors: number;
}

export interface LargeFigures {
  drained: number;
  fresh: number;
  peak?: number;
  /** Measured by this scenario (scenario 3 did not run, or at another size). */
  here?: boolean;
}

export interface ProductionInputs {
  n: number;
  hpa: boolean;
  /** What the N WebApps of each shape want, by kind (_shape.ts wantedChildren). */
  children: { seed: KindCount[]; production: KindCount[] };
  seed?: { runs: { availableMs: number; requests: Record<string, number> }[]; here: boolean };
  production?: { availableMs: number; childrenMs: number; requests: Record<string, number>; rss: number };
  steady?: SteadyFigures;
  large?: { n: number; seed?: LargeFigures; production?: LargeFigures & { readyMs: number; createMs: number } };
  /** Errors of the parts that failed, in words. */
  errors: string[];
  /** An example of the production-shaped spec, shown in the notes (JSON). */
  example: string;
}

const measured = (x: number | undefined): x is number => x !== undefined && Number.isFinite(x);
const atMost = (x: number | undefined, bound: number): Verdict =>
  measured(x) ? (x <= bound ? "met" : "missed") : "not measured";
const childrenOf = (list: readonly KindCount[]) => list.reduce((s, k) => s + k.count, 0);
const rssOf = (l: LargeFigures | undefined) => (l ? Math.max(l.drained, l.fresh) : Number.NaN);

/** The figures the goals judge, from the inputs (NaN where a part is missing). */
export function productionFigures(p: ProductionInputs) {
  const seedRequests = p.seed ? median(p.seed.runs.map((r) => sumOf(r.requests) / p.n)) : Number.NaN;
  const requests = p.production ? sumOf(p.production.requests) / p.n : Number.NaN;
  const extraChildren = (childrenOf(p.children.production) - childrenOf(p.children.seed)) / p.n;
  const steady = p.steady ? sumOf(p.steady.resync) : Number.NaN;
  const seedRss = rssOf(p.large?.seed);
  const rss = rssOf(p.large?.production);
  return {
    seedRequests,
    requests,
    extraChildren,
    perExtraChild: extraChildren > 0 ? (requests - seedRequests) / extraChildren : Number.NaN,
    steady,
    steadyPerWebApp: steady / p.n,
    restartWrites: p.steady ? sumOf(p.steady.startup) - (p.steady.startup.GET ?? 0) : Number.NaN,
    seedMs: p.seed ? median(p.seed.runs.map((r) => r.availableMs)) : Number.NaN,
    ms: p.production?.availableMs ?? Number.NaN,
    seedRss,
    rss,
    rssRatio: rss / seedRss,
  };
}

/** "Deployment, Service" of a shape's kinds, with the count per WebApp where not every WebApp wants one. */
export function describeKinds(list: readonly KindCount[], n: number): string {
  return list.map((k) => (k.count === n ? k.kind : `${k.kind} (${fmt(k.count / n, 2)})`)).join(", ");
}

const byMethodPerWebApp = (runs: readonly { requests: Record<string, number> }[], n: number) => {
  const methods = [...new Set(runs.flatMap((r) => Object.keys(r.requests)))].sort();
  return Object.fromEntries(methods.map((m) => [m, median(runs.map((r) => (r.requests[m] ?? 0) / n))]));
};

function methodTable(p: ProductionInputs): Table {
  const seed = p.seed ? byMethodPerWebApp(p.seed.runs, p.n) : {};
  const prod = p.production ? byMethodPerWebApp([p.production], p.n) : {};
  const methods = Object.keys(addRequests(seed, prod));
  const f = productionFigures(p);
  const rows = methods.map((m) => [m, fmt(seed[m], 2), fmt(prod[m], 2), fmt((prod[m] ?? 0) - (seed[m] ?? 0), 2)]);
  rows.push(["all", fmt(f.seedRequests, 2), fmt(f.requests, 2), fmt(f.requests - f.seedRequests, 2)]);
  return {
    caption: `API requests per WebApp while converging ${p.n}, by method (seed-shaped: median of each over its runs):`,
    head: ["method", "seed-shaped", "production-shaped", "difference"],
    rows,
  };
}

function steadyTable(s: SteadyFigures, n: number): Table {
  const show = (r: Record<string, number>) =>
    Object.entries(r)
      .filter(([, v]) => v > 0)
      .map(([m, v]) => `${m} ${v}`)
      .join(", ") || "none";
  return {
    caption:
      `A new devctl over the ${n} converged production-shaped WebApps, started with --resync-period ${s.resyncS}s ` +
      `(±10% jitter), once the controllers were done with the children (${fmtMs(s.settledMs)} after the convergence: ` +
      "every autoscaler past its first sync, every disruption budget's status current); deltas of its own " +
      "rest_client_requests_total.",
    head: ["window", "reconciles", "requests by method", "requests per WebApp"],
    rows: [
      [
        `start-up pass (ready after ${fmtMs(s.readyMs)})`,
        String(s.startupReconciles),
        show(s.startup),
        fmt(sumOf(s.startup) / n, 3),
      ],
      [
        `steady: from the end of the start-up pass to the end of a resync pass (${fmtMs(s.windowMs)})`,
        String(s.resyncReconciles),
        show(s.resync),
        fmt(sumOf(s.resync) / n, 3),
      ],
    ],
  };
}

function rssTable(large: NonNullable<ProductionInputs["large"]>): Table {
  const row = (what: string, a: number | undefined, b: number | undefined) => [
    what,
    fmtMiB(a),
    fmtMiB(b),
    measured(a) && measured(b) ? fmt(b / a, 2) : "n/a",
  ];
  const { seed, production: prod } = large;
  return {
    caption:
      `Operator RSS with ${large.n} WebApps cached (their children pre-created with the operator's builders; ` +
      "ReplicaSets blocked by a quota, as in scenario 3):",
    head: ["reading", "seed-shaped", "production-shaped", "production / seed"],
    rows: [
      row("the operator working through them: peak (sampled every second)", seed?.peak, prod?.peak),
      row("the same process, 5 s after its queue drained", seed?.drained, prod?.drained),
      row("fresh start, 5 s after its first pass", seed?.fresh, prod?.fresh),
      row("**the larger of the two (the goal's)**", rssOf(seed), rssOf(prod)),
    ],
  };
}

export function productionReport(p: ProductionInputs): Section {
  const f = productionFigures(p);
  const n = p.n;
  const large = p.large?.n ?? Number.NaN;
  const verdicts = [
    atMost(f.perExtraChild, EXTRA_CHILD_REQUESTS_MAX),
    atMost(f.steady, 0),
    atMost(f.rssRatio, RSS_RATIO_MAX),
  ];
  const verdict: Verdict = verdicts.includes("missed")
    ? "missed"
    : verdicts.includes("not measured")
      ? "not measured"
      : "met";
  const seedKinds = describeKinds(p.children.seed, n);
  const prodKinds = describeKinds(p.children.production, n);
  const goals: Table = {
    caption:
      "devctl with production-shaped WebApps beside devctl with seed-shaped ones, same run (the Go peer knows only " +
      `image, replicas and port). N=${n} for requests and time, ${large} for RSS.`,
    head: ["figure", "seed-shaped", "production-shaped", "production vs seed", "bound", "verdict"],
    rows: [
      [
        "children per WebApp",
        `${fmt(childrenOf(p.children.seed) / n, 2)} (${seedKinds})`,
        `${fmt(childrenOf(p.children.production) / n, 2)} (${prodKinds})`,
        `+${fmt(f.extraChildren, 2)}`,
        "",
        "",
      ],
      [
        `API requests per WebApp while converging ${n}`,
        fmt(f.seedRequests, 2),
        fmt(f.requests, 2),
        `+${fmt(f.requests - f.seedRequests, 2)}`,
        "",
        "",
      ],
      [
        "**requests per extra child, on creation**",
        "",
        "",
        `**${fmt(f.perExtraChild, 2)}**`,
        `≤ ${EXTRA_CHILD_REQUESTS_MAX}`,
        `**${verdicts[0]}**`,
      ],
      [
        "**requests in steady state** (a resync pass, and the wait before it)",
        "—",
        measured(f.steady) ? `${f.steady} (${fmt(f.steadyPerWebApp, 3)} per WebApp)` : "n/a",
        "",
        "0",
        `**${verdicts[1]}**`,
      ],
      ["restart: API writes of the start-up pass", "—", fmt(f.restartWrites, 0), "", "", ""],
      [`convergence of ${n} → all Available`, fmtMs(f.seedMs), fmtMs(f.ms), `${fmt(f.ms / f.seedMs, 2)}×`, "", ""],
      [
        `**RSS with ${large} WebApps cached**`,
        fmtMiB(f.seedRss),
        fmtMiB(f.rss),
        `**${fmt(f.rssRatio, 2)}×**`,
        `≤ ${RSS_RATIO_MAX}×`,
        `**${verdicts[2]}**`,
      ],
    ],
  };
  const tables = [goals];
  if (p.seed || p.production) tables.push(methodTable(p));
  if (p.steady) tables.push(steadyTable(p.steady, n));
  if (p.large) tables.push(rssTable(p.large));
  const seedFrom = p.seed?.here
    ? "requests and time from one devctl run of this scenario (scenario 1 did not run at this N)"
    : `requests and time from scenario 1's ${p.seed?.runs.length ?? 0} quiet devctl run(s) at N=${n} (medians)`;
  const largeFrom = p.large?.seed?.here
    ? "RSS from a large point of this scenario (scenario 3 did not run at this size)"
    : "RSS from scenario 3's large point";
  const hpa = p.hpa
    ? "Every other WebApp autoscales instead: autoscaling {minReplicas 2, maxReplicas 4} and no replicas."
    : "Autoscaling (spec.autoscaling, an HPA on half the WebApps) is not in this build's WebApp API, so no WebApp " +
      "autoscales; HPA_ON_HALF in _shape.ts turns it on by itself once the field exists.";
  const notes = [
    `The production shape (tests/bench/_shape.ts), e.g. ${p.example}. ${hpa} The Secret its env reads is created ` +
      "with the namespace; the Ingress names no class (the cluster has none).",
    "Requests are counted as in scenario 1: the operator's own rest_client_requests_total, from just before the first " +
      "create until it stops sending. An extra child is one the production shape wants beyond the seed's; requests " +
      "per extra child = (production-shaped − seed-shaped requests per WebApp) / extra children per WebApp, so " +
      "whatever else the shape costs (status writes while 2 replicas become ready, more GETs) counts against the children.",
    `Seed-shaped figures: ${seedFrom}; ${largeFrom}; steady state and restart in scenario 2. The production-shaped ` +
      "convergence is one devctl run on a fresh cluster; its WebApps run 2 replicas (the seed's 1), so the " +
      "controller-manager, the scheduler and KWOK do twice the pod work: the time is reported, with no goal.",
    ...(p.large?.production
      ? [
          `Large point: the bench created the ${large} production-shaped WebApps and their children in ` +
            `${fmtMs(p.large.production.createMs)}; a fresh devctl over them was ready after ` +
            `${fmtMs(p.large.production.readyMs)}.`,
        ]
      : []),
    ...(p.steady ? [`Reconcile errors in the steady window: ${p.steady.errors}.`] : []),
    ...p.errors.map((e) => `Not measured: ${e}`),
  ];
  const headline = [
    `N=${n}: ${fmt(f.perExtraChild, 2)} requests per extra child (${fmt(f.requests, 2)} per WebApp, seed-shaped ${fmt(f.seedRequests, 2)})`,
    `steady ${measured(f.steady) ? f.steady : "n/a"} requests`,
    `all Available in ${fmtMs(f.ms)} (seed-shaped ${fmtMs(f.seedMs)})`,
    `RSS at ${large}: ${fmtMiB(f.rss)} (${fmt(f.rssRatio, 2)}× seed-shaped)`,
  ].join("; ");
  return {
    id: "production",
    title: "8. Production shape",
    goal:
      `beside devctl's seed-shaped figures: ≤ ${EXTRA_CHILD_REQUESTS_MAX} requests per extra child on creation, ` +
      `0 in steady state; RSS with 10,000 ≤ ${RSS_RATIO_MAX}×`,
    verdict,
    headline,
    ...(p.errors.length > 0 ? { failed: true } : {}),
    tables,
    notes,
  };
}
