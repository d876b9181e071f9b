/**
 * Scenario 4, heal latency: delete the Deployment of a converged WebApp -> time until a Deployment of
 * that name exists again (a new uid on a watch), over `healTrials` trials. Goal: p99 < 1 s, and ≤ 1.0× the
 * Go peer's. The trials are split into HEAL_PARTS (4) parts, the operators taking turns part by part (_compare.ts
 * alternated): each part starts its operator over the fixture, waits for its first pass, for the controller-manager's
 * retry backlog to drain (_retry-gate.ts: making the fixture leaves one that held a re-created Deployment whose first
 * sync failed for minutes, in the first part only) and for a quiet control plane (settle), runs its trials and stops it.
 *
 * Timing: t0 just before the DELETE is sent; the end is the watch event that shows the new Deployment.
 * Each trial uses the next WebApp of the fixture, and the next trial starts once that WebApp is
 * Available again (also reported: delete -> Available), so trials do not overlap.
 * Also reported: the operator's API requests per trial by method (its rest_client_requests_total, scraped before
 * the first trial of a part and after the last), which shows what each operator sends between the delete and the heal.
 * Floor: our client deletes a floor Deployment and applies it again at once, timed the same way:
 * what two API round trips and a watch event cost here, with no operator in between. The floor runs only
 * where ctx.measuresFloor (in devctl's parts, after its trials: not again for the Go peer, see _compare.ts).
 */
import { alternated, type Parted } from "../_compare.ts";
import type { Context, Fixture, Section } from "../_context.ts";
import { ensureFixture, operatorOverFixture } from "../_fixture.ts";
import { applyFloor, appName, DEPLOYMENT_RESOURCE, floorObjects, WEBAPP_RESOURCE, webappAvailable } from "../_kube.ts";
import { addRequests, IMPL_LABEL, requestsByMethod, requestsOnceQuiet, requestsSince } from "../_operator.ts";
import { waitOutRetryBacklog } from "../_retry-gate.ts";
import { fmtMs, median, percentile } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";
import { deploymentName } from "../../../src/operator/desired.ts";

const RECOVERY_TIMEOUT_MS = 30_000;
/** Parts the trials are split into, the operators taking turns (fewer when there are fewer trials). */
const HEAL_PARTS = 4;
const partsOf = (ctx: Context) => Math.min(HEAL_PARTS, ctx.opts.healTrials);
const row = (label: string, xs: number[]) => [
  label,
  String(xs.length),
  fmtMs(median(xs)),
  fmtMs(percentile(xs, 90)),
  fmtMs(percentile(xs, 99)),
  fmtMs(Math.max(...xs)),
];

/** The trials of part `part` of `parts`: consecutive indices, the remainder spread over the first parts. */
export function partTrials(trials: number, parts: number, part: number): number[] {
  const base = Math.floor(trials / parts);
  const extra = trials % parts;
  const first = part * base + Math.min(part, extra);
  return Array.from({ length: base + (part < extra ? 1 : 0) }, (_, i) => first + i);
}

/** What one operator's parts measured, joined. */
interface HealSamples {
  heals: number[];
  recoveries: number[];
  floor: number[];
  /** WebApps not Available again within RECOVERY_TIMEOUT_MS of their trial. */
  stuck: string[];
  /** The operator's requests by method over all its trials (each part's scrape after its last trial minus before its first). */
  requests: Record<string, number>;
}

/** The floor's heal: our client deletes a floor Deployment and applies it again at once, for each of `trials`. */
async function healFloor(ctx: Context, fx: Fixture, trials: readonly number[], floor: number[]): Promise<void> {
  ctx.log(`  heal floor: ${trials.length} direct delete + re-apply round trips`);
  const floorDeps = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.floorNamespace);
  try {
    await floorDeps.start();
    await ctx.settle();
    for (const i of trials) {
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

/** The trials of one part for ctx's operator: each deletes a converged WebApp's Deployment and times its return. */
async function measure(ctx: Context, part: number, into: HealSamples): Promise<void> {
  const fx = await ensureFixture(ctx);
  const trials = partTrials(ctx.opts.healTrials, partsOf(ctx), part);
  const op = await operatorOverFixture(ctx, fx);
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.namespace);
  const webapps = createTracker(ctx.kube, WEBAPP_RESOURCE, fx.namespace);
  try {
    await Promise.all([deployments.start(), webapps.start()]);
    await waitOutRetryBacklog(ctx.kube).then(
      (ms) => ctx.log(`  the controller-manager retried a failing probe ${fmtMs(ms)} after it could succeed`),
      (e: Error) => ctx.log(`  the controller-manager's retry backlog was not waited out: ${e.message}`),
    );
    await ctx.settle();
    ctx.log(`  heal: ${trials.length} trials, each deleting the Deployment of another converged WebApp`);
    const before = requestsByMethod(await op.scrape());
    for (const i of trials) {
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
      into.heals.push((await back) - t0);
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
        into.stuck.push(
          `${name} (its new Deployment ${Object.keys(deployments.get(dep)?.status ?? {}).length ? "had a status" : "had no status yet: the controller-manager had not synced it"})`,
        );
      else into.recoveries.push(recovered - t0);
    }
    ctx.log(`  median ${fmtMs(median(into.heals))}, max ${fmtMs(Math.max(...into.heals))} so far`);
    into.requests = addRequests(into.requests, requestsSince(before, await requestsOnceQuiet(() => op.scrape())));
  } finally {
    deployments.stop();
    webapps.stop();
    await op.stop();
  }
  if (ctx.measuresFloor) await healFloor(ctx, fx, trials, into.floor);
}

function report(ctx: Context, samples: HealSamples): Section {
  const fx = ctx.fixture as Fixture;
  const impl = ctx.impls[0] ?? "devctl";
  const { heals, recoveries, floor, stuck, requests } = samples;
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
        caption: `${fx.n} converged WebApps cached; one Deployment deleted at a time (watch-based timing, from just before the DELETE), in ${partsOf(ctx)} parts.`,
        head: ["measurement", "trials", "p50", "p90", "p99", "max"],
        rows: [
          row(`${IMPL_LABEL[impl]}: Deployment exists again`, heals),
          // The floor is measured in devctl's parts only; the other's table leaves it out.
          ...(floor.length > 0 ? [row("floor: client deletes and re-applies it", floor)] : []),
          row(`${IMPL_LABEL[impl]}: WebApp Available again`, recoveries),
        ],
      },
      {
        caption: `API requests the operator sent per trial, by method (its rest_client_requests_total over the ${heals.length} trials).`,
        head: ["operator", ...Object.keys(requests)],
        rows: [[IMPL_LABEL[impl], ...Object.values(requests).map((n) => (n / Math.max(1, heals.length)).toFixed(2))]],
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

const healScenario: Parted<HealSamples> = {
  parts: partsOf,
  empty: () => ({ heals: [], recoveries: [], floor: [], stuck: [], requests: {} }),
  measure,
  report,
};

export const heal = (ctx: Context): Promise<Section> => alternated(ctx, healScenario);
