/**
 * The large memory point: a namespace of `n` WebApps with their Deployments and Services, and the
 * operator's RSS over it.
 *
 * Properties:
 * - The namespace has a ResourceQuota of 0 ReplicaSets (no ReplicaSets, no Pods: see memory.ts), enforced before
 *   anything is made there (_kube.ts noReplicaSets; a quota the quota controller has not taken up refuses nothing).
 * - The WebApps are of `how.shape` (_shape.ts; default the seed's), in a namespace of their own.
 * - fromScratch=false (default): the benchmark creates the WebApps, then every child their spec wants
 *   (child-kinds.ts) with the operator's own pure builders and field manager, owner references included; then an
 *   operator starts and works through them (its first pass only writes statuses). The Services are
 *   headless (clusterIP None, a field the operator does not own): allocating 10,000 ClusterIPs costs this
 *   API server O(Services) each, i.e. about ten minutes. This keeps the point within the run's time
 *   budget; converging 10,000 from scratch (--memory-from-scratch) takes the operator 10+ minutes here.
 * - fromScratch=true: an operator runs while the WebApps are created and creates every child itself
 *   (bounded: whatever it cached after 10 minutes is what is measured, and the report says how many).
 * - Either way: peak RSS of that (devctl) operator (sampled every second), its RSS 5 s after its queue
 *   drained, then a fresh devctl's start → ready and RSS 5 s after its first pass, and the same for a
 *   fresh Go peer when it runs and `how.peer` is not false (`peerFresh`).
 */
import { parseWebApp } from "../../../src/api/parse.ts";
import type { WebApp, WebAppObject } from "../../../src/api/webapp.ts";
import { CHILD_KINDS, isWanted, SERVICE_KIND } from "../../../src/operator/child-kinds.ts";
import { FIELD_MANAGER } from "../../../src/operator/reconciler.ts";
import type { Context } from "../_context.ts";
import {
  appNames,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  image,
  noReplicaSets,
  pool,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
} from "../_kube.ts";
import { type BenchOperator, type OperatorImpl, requestsOnceQuiet, total } from "../_operator.ts";
import { residentOf } from "../_proc.ts";
import { SEED_SHAPE, type Shape } from "../_shape.ts";
import { fmtMiB, fmtMs } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";

export async function reconciledAll(op: BenchOperator, n: number, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (total(await op.scrape(), "controller_runtime_reconcile_total") >= n) return true;
    await Bun.sleep(200);
  }
  return false;
}

async function drained(op: BenchOperator, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const m = await op.scrape();
    if (total(m, "workqueue_depth") === 0 && total(m, "controller_runtime_active_workers") === 0) return;
    await Bun.sleep(500);
  }
}

/** A fresh operator over `namespace`: RSS 5 s after its first pass, and its start → ready time. */
export async function freshRss(
  ctx: Context,
  namespace: string,
  n: number,
  impl: OperatorImpl = "devctl",
): Promise<{ rss: number; anon: number; readyMs: number; passed: boolean }> {
  const op = await ctx.operator(namespace, [], { impl });
  try {
    const readyMs = await op.waitReady(120_000);
    const passed = n === 0 || (await reconciledAll(op, n, 60_000 + n * 20));
    await Bun.sleep(5000);
    const resident = residentOf(op.pid);
    return { rss: resident?.rss ?? Number.NaN, anon: resident?.anon ?? Number.NaN, readyMs, passed };
  } finally {
    await op.stop();
  }
}

export interface LargePoint {
  fromScratch: boolean;
  cached: { webapps: number; deployments: number; services: number };
  /** Benchmark's own creates (pre-created path). */
  createMs: number;
  /** The operator's work: its first pass (pre-created) or creating every child (from scratch). */
  workMs: number;
  firstPass: { posts: number; patches: number };
  peak: number;
  drained: number;
  fresh: { rss: number; anon: number; readyMs: number; passed: boolean };
  peerFresh?: { rss: number; anon: number; readyMs: number; passed: boolean };
}

/** How long the quota controller may take to enforce a fixture's quota (it is behind after the earlier scenarios). */
const QUOTA_LIMIT_MS = 300_000;

async function quotaNamespace(ctx: Context, prefix: string): Promise<string> {
  const ns = await createNamespace(ctx.kube, prefix);
  ctx.leftovers.push(ns);
  await noReplicaSets(ctx.kube, ns, QUOTA_LIMIT_MS);
  return ns;
}

export async function largePoint(
  ctx: Context,
  n: number,
  fromScratch: boolean,
  how: { shape?: Shape; peer?: boolean } = {},
): Promise<LargePoint> {
  const shape = how.shape ?? SEED_SHAPE;
  const ns = await quotaNamespace(ctx, shape.name === "seed" ? `memory${n}` : `memory-${shape.name}${n}`);
  const names = appNames(n);
  const cc = ctx.opts.clientConcurrency;
  const budgetMs = ctx.opts.quick ? 120_000 : 600_000;
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, ns);
  const services = createTracker(ctx.kube, SERVICE_RESOURCE, ns);
  await Promise.all([deployments.start(), services.start()]);
  let createMs = 0;
  const webapps: WebApp[] = [];
  for (const p of shape.prerequisites(ns)) await ctx.kube.create(p.rt, p.object);
  const createWebApps = () =>
    pool(names, cc, async (name, i) => {
      const created = await ctx.kube.create(WEBAPP_RESOURCE, shape.webapp(name, ns, image("v1"), i));
      const wa = parseWebApp(created as WebAppObject);
      if (!wa.ok) throw new Error(`WebApp ${name}: ${wa.issues.map((x) => `${x.path} ${x.message}`).join("; ")}`);
      webapps.push(wa.webapp);
      if (webapps.length % 2000 === 0)
        ctx.log(`  ${webapps.length} WebApps created, ${deployments.size()} Deployments so far`);
    });
  if (!fromScratch) {
    ctx.log(
      `memory: creating ${n} ${shape.name}-shaped WebApps and their children (operator's builders; ReplicaSets blocked by quota)`,
    );
    const t = performance.now();
    await createWebApps();
    await pool(webapps, cc, async (wa) => {
      for (const k of CHILD_KINDS.filter((kind) => isWanted(kind, wa.spec))) {
        const child = k.desired(wa);
        const obj = k === SERVICE_KIND ? { ...child, spec: { ...(child.spec as object), clusterIP: "None" } } : child;
        await ctx.kube.apply(k.rt, obj, { fieldManager: FIELD_MANAGER });
      }
    });
    createMs = performance.now() - t;
    ctx.log(`  created in ${fmtMs(createMs)}; starting the operator over them`);
  }
  const op = await ctx.operator(ns);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, op.rssBytes() ?? 0)), 1000);
  let workMs = Number.NaN;
  let firstPass = { posts: 0, patches: 0 };
  let drainedRss = Number.NaN;
  try {
    await op.waitReady(120_000);
    const t0 = performance.now();
    if (fromScratch) {
      ctx.log(
        `memory: creating ${n} WebApps, up to ${budgetMs / 60_000} min for the operator to create their children (ReplicaSets blocked by quota)`,
      );
      const children = Promise.all([
        deployments.until(n, () => true, budgetMs, `${n} Deployments`),
        services.until(n, () => true, budgetMs, `${n} Services`),
      ]);
      await createWebApps();
      const done = await children.then(
        (ts) => Math.max(...ts),
        () => undefined,
      );
      workMs = (done ?? Number.NaN) - t0;
    } else {
      await reconciledAll(op, n, budgetMs);
      workMs = performance.now() - t0;
    }
    await drained(op, 120_000);
    const reqs = await requestsOnceQuiet(() => op.scrape());
    firstPass = { posts: reqs.POST ?? 0, patches: reqs.PATCH ?? 0 };
    await Bun.sleep(5000);
    drainedRss = op.rssBytes() ?? Number.NaN;
  } finally {
    clearInterval(sampler);
    deployments.stop();
    services.stop();
    await op.stop();
  }
  const cached = { webapps: webapps.length, deployments: deployments.size(), services: services.size() };
  ctx.log(
    `memory: ${cached.webapps} WebApps: work took ${fmtMs(workMs)}, peak ${fmtMiB(peak)}, drained ${fmtMiB(drainedRss)}; now a fresh operator over them`,
  );
  const fresh = await freshRss(ctx, ns, cached.webapps);
  ctx.log(`  fresh: ready after ${fmtMs(fresh.readyMs)}, RSS ${fmtMiB(fresh.rss)}`);
  const peerFresh =
    ctx.impls.includes("peer") && how.peer !== false ? await freshRss(ctx, ns, cached.webapps, "peer") : undefined;
  if (peerFresh) ctx.log(`  fresh Go peer: ready after ${fmtMs(peerFresh.readyMs)}, RSS ${fmtMiB(peerFresh.rss)}`);
  return {
    fromScratch,
    cached,
    createMs,
    workMs,
    firstPass,
    peak,
    drained: drainedRss,
    fresh,
    ...(peerFresh ? { peerFresh } : {}),
  };
}
