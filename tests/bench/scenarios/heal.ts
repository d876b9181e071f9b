/**
 * Scenario 4, heal latency: delete the Deployment of a converged WebApp -> time until a Deployment of
 * that name exists again (a new uid on a watch), over `healTrials` trials. Goal: p99 < 1 s.
 *
 * Timing: t0 just before the DELETE is sent; the end is the watch event that shows the new Deployment.
 * Each trial uses the next WebApp of the fixture, and the next trial starts once that WebApp is
 * Available again (also reported: delete -> Available), so trials do not overlap.
 * Also reported: the operator's API requests per trial by method (its rest_client_requests_total, scraped before
 * the first trial and after the last), which shows what each operator sends between the delete and the heal.
 * Floor: our client deletes a floor Deployment and applies it again at once, timed the same way:
 * what two API round trips and a watch event cost here, with no operator in between. The floor runs only
 * where ctx.measuresFloor (once per run: not again for the Go peer, see _compare.ts).
 */
import type { Context, Section } from "../_context.ts";
import { ensureFixture } from "../_fixture.ts";
import { applyFloor, appName, DEPLOYMENT_RESOURCE, floorObjects, WEBAPP_RESOURCE, webappAvailable } from "../_kube.ts";
import { IMPL_LABEL, requestsByMethod, requestsOnceQuiet, total } from "../_operator.ts";
import { fmtMs, median, percentile } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";
import { deploymentName } from "../../../src/operator/desired.ts";

const RECOVERY_TIMEOUT_MS = 30_000;
const row = (label: string, xs: number[]) => [
  label,
  String(xs.length),
  fmtMs(median(xs)),
  fmtMs(percentile(xs, 90)),
  fmtMs(percentile(xs, 99)),
  fmtMs(Math.max(...xs)),
];

/** The floor's heal: our client deletes a floor Deployment and applies it again at once, `healTrials` times. */
async function healFloor(ctx: Context, floor: number[]): Promise<void> {
  const fx = ctx.fixture as NonNullable<Context["fixture"]>;
  const trials = ctx.opts.healTrials;
  ctx.log(`heal floor: ${trials} direct delete + re-apply round trips`);
  const floorDeps = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.floorNamespace);
  try {
    await floorDeps.start();
    await ctx.settle();
    for (let i = 0; i < trials; i++) {
      const name = appName(i % fx.n);
      const dep = deploymentName(name);
      const old = floorDeps.get(dep)?.metadata.uid;
      const t0 = performance.now();
      const back = floorDeps.untilObject(
        dep,
        (o) => !!o && o.metadata.uid !== old,
        30_000,
        `floor Deployment ${dep} to be re-created`,
      );
      await ctx.kube.delete(DEPLOYMENT_RESOURCE, dep, fx.floorNamespace);
      await applyFloor(ctx.kube, DEPLOYMENT_RESOURCE, floorObjects(name, fx.floorNamespace, fx.image).deployment);
      floor.push((await back) - t0);
      await Bun.sleep(200);
    }
  } finally {
    floorDeps.stop();
  }
}

/** Requests per method counted between two scrapes (methods seen in either), sorted by method. */
export function requestsSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const methods = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return Object.fromEntries(methods.map((m) => [m, (after[m] ?? 0) - (before[m] ?? 0)]));
}

export async function heal(ctx: Context): Promise<Section> {
  const fx = await ensureFixture(ctx);
  const trials = ctx.opts.healTrials;
  const op = await ctx.operator(fx.namespace);
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.namespace);
  const webapps = createTracker(ctx.kube, WEBAPP_RESOURCE, fx.namespace);
  const heals: number[] = [];
  const recoveries: number[] = [];
  const floor: number[] = [];
  /** WebApps not Available again within RECOVERY_TIMEOUT_MS of their trial. */
  const stuck: string[] = [];
  /** The operator's requests by method over all trials (scrape after the last minus scrape before the first). */
  let requests: Record<string, number> = {};
  try {
    await op.waitReady();
    await Promise.all([deployments.start(), webapps.start()]);
    const deadline = performance.now() + 60_000;
    while (total(await op.scrape(), "controller_runtime_reconcile_total") < fx.n && performance.now() < deadline)
      await Bun.sleep(100);
    await ctx.settle();
    ctx.log(`heal: ${trials} trials, each deleting the Deployment of another converged WebApp`);
    const before = requestsByMethod(await op.scrape());
    for (let i = 0; i < trials; i++) {
      const name = appName(i % fx.n);
      const dep = deploymentName(name);
      const old = deployments.get(dep)?.metadata.uid;
      if (!old) throw new Error(`the fixture's Deployment ${dep} is missing`);
      const t0 = performance.now();
      const back = deployments.untilObject(
        dep,
        (o) => !!o && o.metadata.uid !== old,
        30_000,
        `Deployment ${dep} to be re-created`,
      );
      await ctx.kube.delete(DEPLOYMENT_RESOURCE, dep, fx.namespace);
      heals.push((await back) - t0);
      // The WebApp reports the loss (Available=False) and then the recovery; wait for both before the next trial.
      await webapps
        .untilObject(name, (o) => !webappAvailable(o), 5_000, `${name} to report the loss`)
        .catch(() => undefined);
      const recovered = await webapps
        .untilObject(name, webappAvailable, RECOVERY_TIMEOUT_MS, `${name} to be Available again`)
        .catch((e: Error) => {
          ctx.log(
            `  ${e.message}; its status: ${JSON.stringify(webapps.get(name)?.status)}; its Deployment: ${JSON.stringify(deployments.get(dep)?.status)}`,
          );
          return undefined;
        });
      if (recovered === undefined)
        stuck.push(
          `${name} (its new Deployment ${Object.keys(deployments.get(dep)?.status ?? {}).length ? "had a status" : "had no status yet: the controller-manager had not synced it"})`,
        );
      else recoveries.push(recovered - t0);
      if ((i + 1) % 20 === 0)
        ctx.log(`  ${i + 1}/${trials}: median ${fmtMs(median(heals))}, max ${fmtMs(Math.max(...heals))}`);
    }
    requests = requestsSince(before, await requestsOnceQuiet(() => op.scrape()));
  } finally {
    deployments.stop();
    webapps.stop();
    await op.stop();
  }

  if (ctx.measuresFloor) await healFloor(ctx, floor);
  const p99 = percentile(heals, 99);
  return {
    id: "heal",
    title: "4. Heal latency",
    goal: "p99 < 1 s (Deployment deleted → exists again)",
    verdict: p99 < 1000 ? "met" : "missed",
    headline: `p50 ${fmtMs(median(heals))}, p99 ${fmtMs(p99)} over ${heals.length} trials${floor.length > 0 ? ` (floor p99 ${fmtMs(percentile(floor, 99))})` : ""}`,
    figures: [
      { name: "Deployment exists again: p50", value: median(heals), show: fmtMs },
      {
        name: "Deployment exists again: p99",
        value: p99,
        show: fmtMs,
        goal: { name: "heal p99 (a Deployment deleted → it exists again)", ratioAtMost: 1 },
      },
      { name: "WebApp Available again: p50", value: median(recoveries), show: fmtMs },
      { name: "WebApp Available again: p99", value: percentile(recoveries, 99), show: fmtMs },
    ],
    tables: [
      {
        caption: `${fx.n} converged WebApps cached; one Deployment deleted at a time (watch-based timing, from just before the DELETE).`,
        head: ["measurement", "trials", "p50", "p90", "p99", "max"],
        rows: [
          row(`${IMPL_LABEL[op.impl]}: Deployment exists again`, heals),
          // The floor is measured once, beside the first operator; the other's table leaves it out.
          ...(floor.length > 0 ? [row("floor: client deletes and re-applies it", floor)] : []),
          row(`${IMPL_LABEL[op.impl]}: WebApp Available again`, recoveries),
        ],
      },
      {
        caption: `API requests the operator sent per trial, by method (its rest_client_requests_total over the ${heals.length} trials).`,
        head: ["operator", ...Object.keys(requests)],
        rows: [
          [IMPL_LABEL[op.impl], ...Object.values(requests).map((n) => (n / Math.max(1, heals.length)).toFixed(2))],
        ],
      },
    ],
    notes: [
      "The heal path: the Deployment's DELETED event reaches the operator's watch, maps to its owner WebApp, the reconcile finds it missing in the cache (which holds every Deployment of the namespace), and creates it (one POST) while it checks that the WebApp still exists (one GET beside it, the same round trip: it was reconciled before, so this may be the garbage collector's doing).",
      "“Available again” adds the controller-manager's ReplicaSet and Pod, KWOK's Ready and the operator's status update.",
      ...(stuck.length
        ? [
            `${stuck.length} WebApp(s) were not Available again within ${RECOVERY_TIMEOUT_MS / 1000} s of their trial (${stuck.slice(0, 5).join(", ")}); they are left out of that row.`,
          ]
        : []),
    ],
  };
}
