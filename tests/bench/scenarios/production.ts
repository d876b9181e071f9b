/**
 * Scenario 8, production shape (issue #31 item 7): devctl with production-shaped WebApps (_shape.ts: healthCheck,
 * env, resources, 2 replicas and so a PodDisruptionBudget, expose and so an Ingress; an autoscaler on half once the
 * API has spec.autoscaling) beside devctl's own seed-shaped figures of the same run. devctl only: the Go peer knows
 * only image, replicas and port.
 *
 * 1. Convergence of N (the largest --n) production-shaped WebApps on a fresh cluster, timed and counted exactly as
 *    scenario 1 times and counts (convergence.ts measured: requests from just before the first create until the
 *    operator stops sending), once.
 * 2. Steady state over them: once the controllers are done with the children (childrenSettled: a status they write
 *    later is news the WebApp must report), a new devctl with a short --resync-period; requests from the end of its
 *    start-up pass to the end of one resync pass, a window that also holds the status updates the controllers keep
 *    making to the children (the PodDisruptionBudgets' and autoscalers'). Goal: 0.
 * 3. RSS with --memory-n (10,000) production-shaped WebApps cached, on a fresh cluster, as scenario 3 measures its
 *    large point (_large.ts, the children pre-created with the operator's builders).
 * The seed-shaped figures come from scenarios 1 and 3 of this run (ctx.seed); when they did not run at these sizes,
 * this scenario measures them itself first (devctl only). Runs last: its fresh clusters drop the shared fixture.
 * A part that fails is reported as not measured, with its error, and the other still runs.
 */
import { messageOf } from "../../../src/kube/errors.ts";
import type { KubeObject } from "../../../src/kube/types.ts";
import { HORIZONTAL_POD_AUTOSCALERS, POD_DISRUPTION_BUDGETS } from "../../../src/kube/resources.ts";
import type { Context, Section } from "../_context.ts";
import { appNames, image } from "../_kube.ts";
import { requestsByMethod, requestsSince, total } from "../_operator.ts";
import { fixtureSize } from "../_options.ts";
import { productionShape, productionSpec, SEED_SHAPE, type Shape, wantedChildren } from "../_shape.ts";
import { fmt, fmtMiB, fmtMs } from "../_stats.ts";
import { measured } from "./convergence.ts";
import { largePoint } from "./_large.ts";
import { type ProductionInputs, productionReport, type SteadyFigures } from "./_production-report.ts";
import { awaitPass } from "./steady.ts";

const kindsOf = (shape: Shape, n: number) =>
  wantedChildren(appNames(n).map((name, i) => shape.webapp(name, "bench", image("v1"), i))).map(({ kind, count }) => ({
    kind,
    count,
  }));

type WithStatus = KubeObject & {
  status?: { observedGeneration?: number; conditions?: { type?: string }[] };
};

/**
 * Waits until the controllers are done with the children in `namespace` (see SteadyFigures.settledMs): every
 * HorizontalPodAutoscaler has a ScalingActive condition (written by its first sync) and every PodDisruptionBudget's
 * status.observedGeneration is its generation. Resolves with the milliseconds waited; rejects after `timeoutMs`,
 * saying how many are not yet done.
 */
async function childrenSettled(ctx: Context, namespace: string, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const [hpas, pdbs] = await Promise.all([
      ctx.kube.listAll<WithStatus>(HORIZONTAL_POD_AUTOSCALERS, { namespace }),
      ctx.kube.listAll<WithStatus>(POD_DISRUPTION_BUDGETS, { namespace }),
    ]);
    const unsynced = hpas.items.filter((h) => !h.status?.conditions?.some((c) => c.type === "ScalingActive")).length;
    const stale = pdbs.items.filter((p) => p.status?.observedGeneration !== p.metadata.generation).length;
    if (unsynced === 0 && stale === 0) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) {
      throw new Error(
        `after ${fmtMs(timeoutMs)}, ${unsynced} of ${hpas.items.length} autoscalers had not synced and ` +
          `${stale} of ${pdbs.items.length} disruption budgets had a stale status`,
      );
    }
    await Bun.sleep(1000);
  }
}

/** A new devctl over `namespace` with a short resync: its start-up pass, then one resync pass (see the contract). */
async function steadyOver(ctx: Context, namespace: string, n: number): Promise<SteadyFigures> {
  const settledMs = await childrenSettled(ctx, namespace, 60_000 + n * 100);
  const resyncS = ctx.opts.quick ? 10 : 20;
  const op = await ctx.operator(namespace, ["--resync-period", `${resyncS}s`]);
  try {
    const readyMs = await op.waitReady();
    await awaitPass(op, 0, n, 60_000 + n * 50);
    await Bun.sleep(1000);
    const m0 = await op.scrape();
    const t0 = performance.now();
    const startup = requestsByMethod(m0);
    const count = total(m0, "controller_runtime_reconcile_total");
    // Events from the controllers also count as reconciles: wait for the resync's time as well as the count.
    await Promise.all([
      awaitPass(op, count, count + n, resyncS * 1.2 * 1000 + 60_000 + n * 50),
      Bun.sleep(resyncS * 1100 + 2000),
    ]);
    await Bun.sleep(500);
    const m1 = await op.scrape();
    return {
      settledMs,
      readyMs,
      resyncS,
      startup,
      startupReconciles: count,
      resync: requestsSince(startup, requestsByMethod(m1)),
      resyncReconciles: total(m1, "controller_runtime_reconcile_total") - count,
      windowMs: performance.now() - t0,
      errors: total(m1, "controller_runtime_reconcile_errors_total"),
    };
  } finally {
    await op.stop();
  }
}

export async function production(ctx: Context): Promise<Section> {
  const n = fixtureSize(ctx.opts);
  const shape = productionShape();
  const inputs: ProductionInputs = {
    n,
    hpa: shape.hpa,
    children: { seed: kindsOf(SEED_SHAPE, n), production: kindsOf(shape, n) },
    errors: [],
    example: JSON.stringify(productionSpec(appNames(1)[0] as string, image("v1"), 1, shape.hpa)),
  };
  try {
    const known = ctx.seed.convergence;
    if (known?.n === n && known.runs.length > 0) inputs.seed = { runs: known.runs, here: false };
    else {
      await ctx.freshCluster();
      ctx.log(`production: scenario 1 did not run at N=${n}; a seed-shaped convergence with devctl first`);
      const r = await measured(ctx, { n, impl: "devctl", label: `seed${n}` });
      inputs.seed = { runs: [{ availableMs: r.availableMs, requests: r.requests }], here: true };
    }
    await ctx.freshCluster();
    ctx.log(`production: convergence of ${n} production-shaped WebApps (${shape.hpa ? "HPA on half" : "no HPA"})`);
    const run = await measured(ctx, { n, impl: "devctl", label: `prod${n}`, shape });
    inputs.production = run;
    inputs.steady = await steadyOver(ctx, run.namespace, n);
    ctx.log(
      `  steady: ${inputs.steady.resyncReconciles} reconciles, requests ${JSON.stringify(inputs.steady.resync)} in ${fmtMs(inputs.steady.windowMs)}`,
    );
  } catch (e) {
    ctx.log(`production: convergence or steady state failed: ${messageOf(e)}`);
    inputs.errors.push(`convergence or steady state: ${messageOf(e)}`);
  }
  const big = ctx.opts.memoryLarge;
  inputs.large = { n: big };
  try {
    const known = ctx.seed.large;
    if (known?.n === big) inputs.large.seed = known;
    else {
      await ctx.freshCluster();
      ctx.log(`production: scenario 3 did not run at ${big}; the seed-shaped large point with devctl first`);
      const b = await largePoint(ctx, big, false, { peer: false });
      inputs.large.seed = { drained: b.drained, fresh: b.fresh.rss, peak: b.peak, here: true };
    }
    await ctx.freshCluster();
    const b = await largePoint(ctx, big, false, { shape, peer: false });
    inputs.large.production = {
      drained: b.drained,
      fresh: b.fresh.rss,
      peak: b.peak,
      readyMs: b.fresh.readyMs,
      createMs: b.createMs,
    };
    const [rss, seedRss] = [
      Math.max(b.drained, b.fresh.rss),
      Math.max(inputs.large.seed.drained, inputs.large.seed.fresh),
    ];
    ctx.log(`production: RSS at ${big}: ${fmtMiB(rss)}, ${fmt(rss / seedRss, 2)}× seed-shaped`);
  } catch (e) {
    ctx.log(`production: the large point failed: ${messageOf(e)}`);
    inputs.errors.push(`RSS with ${big} WebApps: ${messageOf(e)}`);
  }
  return productionReport(inputs);
}
