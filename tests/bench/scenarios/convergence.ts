/**
 * Scenario 1, convergence: N WebApps created at once (1 replica each) -> every one has its
 * Deployment, its Service and Available=True, for devctl and (unless --no-peer) the Go peer. Beside
 * them, in the same repeat, the floor: our client with the operators' concurrency applies the same N
 * Deployments and N Services directly, and the time until every Deployment is Available.
 *
 * Timing: t0 just before the first WebApp create; the end is the watch event after which all N
 * WebApps report Available=True (children-written: the event after which N Deployments and N
 * Services exist). Every change of the Available count is kept as a curve, and the operator's RSS is
 * sampled every 250 ms, for the charts. CPU seconds of the operator, the control-plane processes,
 * the bench client and the whole machine are read from /proc at t0 and at the end. Requests come
 * from the operator's /metrics (rest_client_requests_total, the same family in both operators).
 * Where the cluster is one this run started, every run gets a new empty cluster (see freshCluster):
 * Service creation slows down as Services accumulate, so runs must not inherit each other's objects.
 * The operators alternate (odd repeats devctl first, even ones the peer first), except in the last
 * repeat of the largest N, where devctl runs last and shares its cluster with the floor run before
 * it, which is kept as the shared fixture. With --profile, one extra untimed devctl run under
 * `bun --cpu-prof-md --heap-prof-md` comes first.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import type { Context, Section, Table } from "../_context.ts";
import {
  applyFloor,
  appNames,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  deploymentAvailable,
  floorObjects,
  image,
  pool,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
  webappAvailable,
  webappObject,
} from "../_kube.ts";
import { IMPL_LABEL, type OperatorImpl, requestsByMethod } from "../_operator.ts";
import { hotFunctions, latestProfile } from "../_profile.ts";
import { fmt, fmtMs } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";
import { type ConvergenceRun, convergenceReport, type FloorRun, type Repeat } from "./_convergence-report.ts";

const timeoutFor = (n: number) => 120_000 + n * 300;
const RSS_EVERY_MS = 250;

async function operatorRun(ctx: Context, n: number, impl: OperatorImpl, profileDir?: string): Promise<ConvergenceRun> {
  const namespace = await createNamespace(ctx.kube, `conv${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  const names = appNames(n);
  const op = await ctx.operator(namespace, [], { impl, ...(profileDir ? { profileDir } : {}) });
  const trackers = {
    webapps: createTracker(ctx.kube, WEBAPP_RESOURCE, namespace),
    deployments: createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace),
    services: createTracker(ctx.kube, SERVICE_RESOURCE, namespace),
  };
  const curve: [number, number][] = [];
  const rssCurve: [number, number][] = [];
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    await op.waitReady();
    await Promise.all(Object.values(trackers).map((t) => t.start()));
    await ctx.settle();
    const before = requestsByMethod(await op.scrape());
    const meter = await ctx.meter({ operator: op.pid });
    const t0 = performance.now();
    const sample = () => {
      const rss = op.rssBytes();
      if (rss !== undefined) rssCurve.push([performance.now() - t0, rss]);
    };
    sample();
    sampler = setInterval(sample, RSS_EVERY_MS);
    const all = Promise.all([
      trackers.webapps.until(n, webappAvailable, timeoutFor(n), `${n} WebApps to be Available`, (k, now) =>
        curve.push([now - t0, k]),
      ),
      trackers.deployments.until(n, () => true, timeoutFor(n), `${n} Deployments to exist`),
      trackers.services.until(n, () => true, timeoutFor(n), `${n} Services to exist`),
    ]);
    await pool(names, ctx.opts.clientConcurrency, (name) =>
      ctx.kube.create(WEBAPP_RESOURCE, webappObject(name, namespace, img)),
    );
    const createMs = performance.now() - t0;
    const [avail, deps, svcs] = await all;
    const usage = meter.read();
    clearInterval(sampler);
    sample();
    const rss = op.rssBytes() ?? Number.NaN;
    const after = requestsByMethod(await op.scrape());
    const requests = Object.fromEntries(Object.entries(after).map(([m, v]) => [m, v - (before[m] ?? 0)]));
    return {
      impl,
      availableMs: avail - t0,
      childrenMs: Math.max(deps, svcs) - t0,
      createMs,
      op: usage,
      requests,
      namespace,
      rss,
      curve,
      rssCurve,
    };
  } finally {
    clearInterval(sampler);
    for (const t of Object.values(trackers)) t.stop();
    await op.stop();
  }
}

async function floorRun(ctx: Context, n: number): Promise<FloorRun> {
  const namespace = await createNamespace(ctx.kube, `floor${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace);
  const curve: [number, number][] = [];
  try {
    await deployments.start();
    await ctx.settle();
    const meter = await ctx.meter({});
    const t0 = performance.now();
    const avail = deployments.until(
      n,
      deploymentAvailable,
      timeoutFor(n),
      `${n} floor Deployments to be Available`,
      (k, now) => curve.push([now - t0, k]),
    );
    await pool(appNames(n), ctx.opts.concurrency, async (name) => {
      const o = floorObjects(name, namespace, img);
      await applyFloor(ctx.kube, DEPLOYMENT_RESOURCE, o.deployment);
      await applyFloor(ctx.kube, SERVICE_RESOURCE, o.service);
    });
    const writtenMs = performance.now() - t0;
    const availableMs = (await avail) - t0;
    return { writtenMs, availableMs, usage: meter.read(), namespace, curve };
  } finally {
    deployments.stop();
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
  await operatorRun(ctx, n, "devctl", dir);
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

/** The order of one repeat: operators alternate; the fixture repeat ends with the floor, then devctl on its cluster. */
export function repeatOrder(
  impls: readonly OperatorImpl[],
  r: number,
  keepsFixture: boolean,
): ("floor" | OperatorImpl)[] {
  if (keepsFixture) return [...impls.filter((i) => i !== "devctl"), "floor", "devctl"];
  return ["floor", ...(r % 2 === 1 ? impls : [...impls].reverse())];
}

export async function convergence(ctx: Context): Promise<Section> {
  const sizes = ctx.opts.sizes;
  const largest = Math.max(...sizes);
  const fresh: boolean[] = [];
  const profile = ctx.opts.profile ? await profileRun(ctx, largest) : [];
  const runs = new Map<number, Repeat[]>();
  for (const n of sizes) {
    const list: Repeat[] = [];
    runs.set(n, list);
    for (let r = 1; r <= ctx.opts.repeats; r++) {
      const keepsFixture = n === largest && r === ctx.opts.repeats;
      const rep: Partial<Repeat> & { ops: Repeat["ops"] } = { ops: {} };
      let previous: string | undefined;
      for (const step of repeatOrder(ctx.impls, r, keepsFixture)) {
        // Each run on an empty cluster where possible: creating a Service costs the API server more the
        // more Services exist (its ClusterIP allocator recounts them), so a run after another would pay for it.
        if (!(keepsFixture && step === "devctl" && previous === "floor")) fresh.push(await ctx.freshCluster());
        previous = step;
        ctx.log(
          `convergence N=${n}, repeat ${r}/${ctx.opts.repeats}: ${step === "floor" ? "floor" : IMPL_LABEL[step]}`,
        );
        if (step === "floor") {
          rep.floor = await floorRun(ctx, n);
          ctx.log(
            `  floor: written after ${fmtMs(rep.floor.writtenMs)}, all Available after ${fmtMs(rep.floor.availableMs)}`,
          );
          continue;
        }
        const op = await operatorRun(ctx, n, step);
        rep.ops[step] = op;
        ctx.log(
          `  all ${n} Available after ${fmtMs(op.availableMs)} (children written after ${fmtMs(op.childrenMs)}); CPU ${fmt(op.op.byProcess.operator, 2)} s`,
        );
      }
      const floor = rep.floor as FloorRun;
      list.push({ floor, ops: rep.ops });
      const devctl = rep.ops.devctl;
      if (keepsFixture && devctl)
        ctx.fixture = { namespace: devctl.namespace, floorNamespace: floor.namespace, n, image: image("v1") };
    }
  }
  return convergenceReport(ctx, runs, profile, fresh.every(Boolean));
}
