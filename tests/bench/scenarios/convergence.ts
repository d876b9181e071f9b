/**
 * Scenario 1, convergence: N WebApps created at once (1 replica each) -> every one has its
 * Deployment, its Service and Available=True, for devctl and (unless --no-peer) the Go peer. Beside
 * them, in the same repeat, the floor: our client with the operators' concurrency applies the same N
 * Deployments and N Services directly, and the time until every Deployment is Available.
 *
 * Repeats: --repeats at the largest N, --small-repeats (at least as many) below it.
 * Timing: t0 just before the first WebApp create; the end is the watch event after which all N
 * WebApps report Available=True (children-written: the event after which N Deployments and N
 * Services exist). Every change of the Available count is kept as a curve, and the operator's RSS is
 * sampled every 250 ms, for the charts. CPU seconds of the operator, the control-plane processes,
 * the bench client and the whole machine are read from /proc at t0 and at the end. Requests come
 * from the operator's /metrics (rest_client_requests_total, the same family in both operators), counted
 * until the operator stops sending (requestsOnceQuiet: devctl's Events go out once its reconciles are quiet).
 * Where the cluster is one this run started, every run gets a new empty cluster (see freshCluster):
 * Service creation slows down as Services accumulate, so runs must not inherit each other's objects.
 * The operators alternate (odd repeats devctl first, even ones the peer first), except in the last
 * repeat of the largest N, where devctl runs last: its cluster is kept as the shared fixture, and the
 * floor's objects are added to it only after its timed run (floorFixture, untimed), so every timed
 * run still starts on an empty cluster. With --profile, one extra untimed devctl run under
 * `bun --cpu-prof-md --heap-prof-md` comes first.
 * Busy machine (--busy-n, default the largest N with the peer): before the quiet runs, `repeats` pairs
 * of devctl and the Go peer alternating, each on a fresh cluster with one CPU hog (_hog.ts) started
 * right before the first create and stopped after the last Available (bounded by the run's timeout +
 * 30 s if the bench dies); no floor. Every operator run keeps its evidence (its log and /metrics every
 * second, _evidence.ts) and a run 1.3x slower than its operator's others is warned about, naming it.
 * devctl's quiet runs at the largest N are kept in ctx.seed for the production-shaped scenario (production.ts).
 * operatorRun takes the WebApps' shape (_shape.ts; the seed's here): it waits for every child the shape wants.
 * With --warm, every operator run first converges N WebApps in a second namespace the same process watches
 * (warmUpRun, untimed, then settle), so the timed burst shows the operator with its code already warm.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../../../src/kube/types.ts";
import { EVENT_DEFAULTS } from "../../../src/runtime/events.ts";
import type { Context, Section, Table } from "../_context.ts";
import {
  appNames,
  convergenceTimeout,
  createNamespace,
  image,
  pool,
  WEBAPP_RESOURCE,
  webappAvailable,
} from "../_kube.ts";
import { describeEvidence, outliers, startRecorder } from "../_evidence.ts";
import { floorFixture } from "../_fixture.ts";
import { floorRun, minimalRun } from "./_references.ts";
import { type Hog, startHog } from "../_hog.ts";
import { IMPL_LABEL, type OperatorImpl, requestsByMethod, requestsOnceQuiet } from "../_operator.ts";
import { hotFunctions, latestProfile } from "../_profile.ts";
import { fmt, fmtMs } from "../_stats.ts";
import { SEED_SHAPE, type Shape, type WantedChildren, wantedChildren } from "../_shape.ts";
import { createTracker, type Tracker } from "../_tracker.ts";
import {
  type BusyRepeat,
  type ConvergenceRun,
  convergenceReport,
  type FloorRun,
  type Repeat,
} from "./_convergence-report.ts";

const RSS_EVERY_MS = 250;

/** How a run is named in its evidence files and whether a CPU hog runs beside it. */
export interface RunSpec {
  n: number;
  impl: OperatorImpl;
  /** e.g. "conv1000-r2": names the evidence files. */
  label: string;
  profileDir?: string;
  /** Run one CPU hog beside the operator, bounded to this many seconds (see _hog.ts). */
  hogSeconds?: number;
  /** The WebApps' shape (_shape.ts); default the seed's. */
  shape?: Shape;
}

interface Trackers {
  webapps: Tracker<KubeObject>;
  /** One per kind of child the WebApps want, with how many they want (a seed-shaped N: N Deployments, N Services). */
  children: { wanted: WantedChildren; tracker: Tracker<KubeObject> }[];
}

/** Resolves with the times at which all N WebApps were Available and all their children of each kind existed. */
function untilConverged(t: Trackers, n: number, onAvailable: (k: number, now: number) => void) {
  return Promise.all([
    t.webapps.until(n, webappAvailable, convergenceTimeout(n), `${n} WebApps to be Available`, onAvailable),
    ...t.children.map(({ wanted: w, tracker }) =>
      tracker.until(w.count, () => true, convergenceTimeout(n), `${w.count} ${w.kind}s to exist`),
    ),
  ]);
}

/** How long devctl's overall Event bucket takes to fill up from empty (runtime/events.ts). */
const EVENT_REFILL_MS = EVENT_DEFAULTS.overall.burst * EVENT_DEFAULTS.overall.refillMs;

/**
 * --warm: the operator `pid` converges N WebApps of `shape` in `namespace`, untimed; then the bench waits until
 * devctl's Event budget is full again (EVENT_REFILL_MS) and the cluster settles. Without that wait the timed burst
 * would send fewer Events (the warm-up spent the overall bucket) and look cheaper for a reason other than warm code.
 */
async function warmUpRun(ctx: Context, pid: number, shape: Shape, namespace: string, n: number): Promise<void> {
  const tracker = createTracker(ctx.kube, WEBAPP_RESOURCE, namespace);
  try {
    await tracker.start();
    const t0 = performance.now();
    const meter = await ctx.meter({ operator: pid });
    const done = tracker.until(n, webappAvailable, convergenceTimeout(n), `${n} warm-up WebApps to be Available`);
    const webapps = appNames(n).map((name, i) => shape.webapp(name, namespace, image("v1"), i));
    await pool(webapps, ctx.opts.clientConcurrency, (w) => ctx.kube.create(WEBAPP_RESOURCE, w));
    await done;
    const cpu = meter.read().byProcess.operator;
    ctx.log(`  warm-up: ${n} Available after ${fmtMs(performance.now() - t0)}; CPU ${fmt(cpu, 2)} s (untimed)`);
  } finally {
    tracker.stop();
  }
  await Bun.sleep(EVENT_REFILL_MS);
  await ctx.settle();
}

/** One timed convergence of N WebApps of `spec.shape` by one operator on the current cluster (see the contract above). */
async function operatorRun(ctx: Context, spec: RunSpec): Promise<ConvergenceRun> {
  const { n, impl } = spec;
  const shape = spec.shape ?? SEED_SHAPE;
  const namespace = await createNamespace(ctx.kube, `${shape.prefix}${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  for (const p of shape.prerequisites(namespace)) await ctx.kube.create(p.rt, p.object);
  const webapps = appNames(n).map((name, i) => shape.webapp(name, namespace, img, i));
  const logName = `${spec.label}-${impl}`;
  const warmNs = ctx.opts.warm ? await createNamespace(ctx.kube, `warm${shape.prefix}${n}`) : undefined;
  if (warmNs) ctx.leftovers.push(warmNs);
  const op = await ctx.operator(warmNs ? `${namespace},${warmNs}` : namespace, [], {
    impl,
    logName,
    ...(spec.profileDir ? { profileDir: spec.profileDir } : {}),
  });
  const trackers: Trackers = {
    webapps: createTracker(ctx.kube, WEBAPP_RESOURCE, namespace),
    children: wantedChildren(webapps).map((wanted) => ({
      wanted,
      tracker: createTracker(ctx.kube, wanted.rt, namespace),
    })),
  };
  const all = () => [trackers.webapps, ...trackers.children.map((c) => c.tracker)];
  const curve: [number, number][] = [];
  const rssCurve: [number, number][] = [];
  let sampler: ReturnType<typeof setInterval> | undefined;
  let hog: Hog | undefined;
  try {
    await op.waitReady();
    if (warmNs) await warmUpRun(ctx, op.pid, shape, warmNs, n);
    await Promise.all(all().map((t) => t.start()));
    await ctx.settle();
    const before = requestsByMethod(await op.scrape());
    let t0 = performance.now();
    const files = {
      log: join(ctx.evidenceDir, `${logName}.log`),
      metrics: join(ctx.evidenceDir, `${logName}.metrics.jsonl`),
    };
    const recorder = await startRecorder(
      () => op.scrape(),
      files,
      () => t0,
    );
    // The hog starts right before the WebApps are created and is bounded by the run's own timeout.
    if (spec.hogSeconds) hog = startHog(spec.hogSeconds);
    const meter = await ctx.meter({ operator: op.pid, ...(hog ? { "CPU hog": hog.pid } : {}) });
    t0 = performance.now();
    const sample = () => {
      const rss = op.rssBytes();
      if (rss !== undefined) rssCurve.push([performance.now() - t0, rss]);
    };
    sample();
    sampler = setInterval(sample, RSS_EVERY_MS);
    const converged = untilConverged(trackers, n, (k, now) => curve.push([now - t0, k]));
    await pool(webapps, ctx.opts.clientConcurrency, (w) => ctx.kube.create(WEBAPP_RESOURCE, w));
    const createMs = performance.now() - t0;
    const [avail, ...children] = await converged;
    const usage = meter.read();
    await hog?.stop();
    clearInterval(sampler);
    sample();
    const rss = op.rssBytes() ?? Number.NaN;
    const evidence = await recorder.stop();
    const after = await requestsOnceQuiet(() => op.scrape());
    const requests = Object.fromEntries(Object.entries(after).map(([m, v]) => [m, v - (before[m] ?? 0)]));
    return {
      impl,
      availableMs: avail - t0,
      childrenMs: Math.max(...children) - t0,
      createMs,
      op: usage,
      requests,
      namespace,
      rss,
      curve,
      rssCurve,
      evidence,
    };
  } finally {
    await hog?.stop();
    clearInterval(sampler);
    for (const t of all()) t.stop();
    await op.stop();
  }
}

async function profileRun(ctx: Context, n: number): Promise<Table[]> {
  const dir = `${tmpdir()}/devctl-bench-profile`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await ctx.freshCluster();
  ctx.log(
    `profiling: a convergence of ${n} with devctl from source under bun --cpu-prof-md --heap-prof-md (not timed)`,
  );
  await operatorRun(ctx, { n, impl: "devctl", label: `profile${n}`, profileDir: dir });
  const file = latestProfile(dir, "CPU");
  if (!file) throw new Error(`the CPU profile was not written (looked in ${dir})`);
  const prof = hotFunctions(readFileSync(file, "utf8"), 15);
  const heap = latestProfile(dir, "Heap");
  return [
    {
      caption: `CPU profile of devctl over a whole convergence of ${n} (from start to exit; ${prof.summary}; profile kept in ${file}${heap ? `, heap profile in ${heap}` : ""}):`,
      head: ["self %", "self", "function", "location"],
      rows: prof.rows,
    },
  ];
}

/** The order of one repeat: the floor, the minimal operator, then the operators alternating; the fixture repeat ends with devctl. */
export function repeatOrder(
  impls: readonly OperatorImpl[],
  r: number,
  keepsFixture: boolean,
): ("floor" | "minimal" | OperatorImpl)[] {
  if (keepsFixture) return ["floor", "minimal", ...impls.filter((i) => i !== "devctl"), "devctl"];
  return ["floor", "minimal", ...(r % 2 === 1 ? impls : [...impls].reverse())];
}

/** A measured operator run, logged with its evidence. */
export async function measured(ctx: Context, spec: RunSpec): Promise<ConvergenceRun> {
  const op = await operatorRun(ctx, spec);
  ctx.log(
    `  all ${spec.n} Available after ${fmtMs(op.availableMs)} (children written after ${fmtMs(op.childrenMs)}); CPU ${fmt(op.op.byProcess.operator, 2)} s`,
  );
  ctx.log(`  evidence: ${describeEvidence(op.evidence)}`);
  return op;
}

/** One warning line per run slower than 1.3x the median of the others of its operator, naming its evidence. */
function warnOutliers(ctx: Context, what: string, list: readonly BusyRepeat[]): void {
  const flat = list.flatMap((rep, r) =>
    Object.values(rep.ops).map((op) => ({
      label: `${what}, repeat ${r + 1}, ${IMPL_LABEL[op.impl]}`,
      ms: op.availableMs,
      file: op.evidence.log,
      group: op.impl,
    })),
  );
  for (const o of outliers(flat))
    ctx.log(
      `  WARNING: ${o.label} took ${fmtMs(o.ms)}, more than 1.3x the others' median (${fmtMs(o.othersMedian)}): see ${o.file} and its .metrics.jsonl`,
    );
}

/** Busy-machine pairs: devctl and the Go peer alternate, each on a fresh cluster beside one CPU hog; no floor. */
async function busyRuns(ctx: Context, n: number, fresh: boolean[]): Promise<BusyRepeat[]> {
  const list: BusyRepeat[] = [];
  for (let r = 1; r <= ctx.opts.repeats; r++) {
    const ops: BusyRepeat["ops"] = {};
    for (const impl of r % 2 === 1 ? ctx.impls : [...ctx.impls].reverse()) {
      fresh.push(await ctx.freshCluster());
      ctx.log(`convergence N=${n} beside a CPU hog, repeat ${r}/${ctx.opts.repeats}: ${IMPL_LABEL[impl]}`);
      ops[impl] = await measured(ctx, {
        n,
        impl,
        label: `busy${n}-r${r}`,
        hogSeconds: convergenceTimeout(n) / 1000 + 30,
      });
    }
    list.push({ ops });
  }
  warnOutliers(ctx, `N=${n} beside a CPU hog`, list);
  return list;
}

export async function convergence(ctx: Context): Promise<Section> {
  const sizes = ctx.opts.sizes;
  const largest = Math.max(...sizes);
  const fresh: boolean[] = [];
  const profile = ctx.opts.profile ? await profileRun(ctx, largest) : [];
  // Before the quiet runs: the last quiet run leaves the shared fixture, which a fresh cluster would drop.
  const busyN = ctx.opts.busyN;
  const busy = busyN > 0 ? { n: busyN, list: await busyRuns(ctx, busyN, fresh) } : undefined;
  const runs = new Map<number, Repeat[]>();
  for (const n of sizes) {
    const list: Repeat[] = [];
    runs.set(n, list);
    const repeats = n === largest ? ctx.opts.repeats : Math.max(ctx.opts.repeats, ctx.opts.smallRepeats);
    for (let r = 1; r <= repeats; r++) {
      const keepsFixture = n === largest && r === repeats;
      const rep: Partial<Repeat> & { ops: Repeat["ops"] } = { ops: {} };
      for (const step of repeatOrder(ctx.impls, r, keepsFixture)) {
        // Each run on an empty cluster: creating a Service costs the API server more the more Services
        // exist (its ClusterIP allocator recounts them), so a run after another would pay for it.
        fresh.push(await ctx.freshCluster());
        ctx.log(
          `convergence N=${n}, repeat ${r}/${repeats}: ${step in IMPL_LABEL ? IMPL_LABEL[step as OperatorImpl] : step}`,
        );
        if (step === "floor" || step === "minimal") {
          const run = step === "floor" ? await floorRun(ctx, n) : await minimalRun(ctx, n);
          rep[step] = run;
          ctx.log(`  ${step}: written after ${fmtMs(run.writtenMs)}, all Available after ${fmtMs(run.availableMs)}`);
          continue;
        }
        rep.ops[step] = await measured(ctx, { n, impl: step, label: `conv${n}-r${r}` });
      }
      const floor = rep.floor as FloorRun;
      list.push({ floor, ops: rep.ops, ...(rep.minimal ? { minimal: rep.minimal } : {}) });
      const devctl = rep.ops.devctl;
      if (keepsFixture && devctl) {
        ctx.log(
          `  keeping devctl's ${n} WebApps as the shared fixture; adding the floor's objects beside them (untimed)`,
        );
        const floorNamespace = await floorFixture(ctx, n, image("v1"));
        ctx.fixture = { namespace: devctl.namespace, floorNamespace, n, image: image("v1") };
      }
    }
    warnOutliers(ctx, `N=${n}`, list);
  }
  const seedRuns = (runs.get(largest) ?? []).flatMap((r) => (r.ops.devctl ? [r.ops.devctl] : []));
  ctx.seed.convergence = { n: largest, runs: seedRuns.map(({ availableMs, requests }) => ({ availableMs, requests })) };
  return convergenceReport(ctx, runs, profile, fresh.every(Boolean), busy);
}
