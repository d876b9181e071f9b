/**
 * The shared fixture: a namespace of N converged WebApps and a floor namespace with the same
 * Deployments and Services and no WebApps (see Context.fixture).
 *
 * Properties:
 * - ensureFixture() returns ctx.fixture when convergence left one of the wanted size; otherwise it
 *   builds one (an operator converges the WebApps and is stopped again; the floor objects are applied
 *   directly) and waits until every WebApp and every floor Deployment is Available. Nothing is timed.
 * - floorFixture() adds only the floor half to a cluster whose converged WebApps a timed run left behind.
 * - operatorOverFixture() starts ctx's operator over the fixture and resolves once it is ready and has reconciled
 *   every WebApp once (at most FIRST_PASS_MS): a measurement then starts after its first pass.
 */
import type { Context, Fixture } from "./_context.ts";
import {
  applyFloorObjects,
  appNames,
  convergenceTimeout,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  deploymentAvailable,
  image,
  pool,
  WEBAPP_RESOURCE,
  webappAvailable,
  webappObject,
} from "./_kube.ts";
import { type BenchOperator, total } from "./_operator.ts";
import { fixtureSize } from "./_options.ts";
import { createTracker } from "./_tracker.ts";

/** A new namespace with the floor's N Deployments and Services, all Available (untimed). */
export async function floorFixture(ctx: Context, n: number, img: string): Promise<string> {
  const namespace = await createNamespace(ctx.kube, "fixture-floor");
  ctx.leftovers.push(namespace);
  const floor = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace);
  await floor.start();
  try {
    await applyFloorObjects(ctx.kube, appNames(n), namespace, img, ctx.opts.concurrency);
    await floor.until(n, deploymentAvailable, convergenceTimeout(n), `${n} floor Deployments to be Available`);
  } finally {
    floor.stop();
  }
  return namespace;
}

export async function ensureFixture(ctx: Context): Promise<Fixture> {
  const n = fixtureSize(ctx.opts);
  if (ctx.fixture && ctx.fixture.n === n) return ctx.fixture;
  ctx.log(`preparing ${n} converged WebApps (and the same objects without WebApps for the floor)`);
  const namespace = await createNamespace(ctx.kube, "fixture");
  const floorNamespace = await createNamespace(ctx.kube, "fixture-floor");
  ctx.leftovers.push(namespace, floorNamespace);
  const img = image("v1");
  const names = appNames(n);
  const webapps = createTracker(ctx.kube, WEBAPP_RESOURCE, namespace);
  const floor = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, floorNamespace);
  await Promise.all([webapps.start(), floor.start()]);
  const op = await ctx.operator(namespace);
  try {
    await op.waitReady();
    await pool(names, ctx.opts.clientConcurrency, (name) =>
      ctx.kube.create(WEBAPP_RESOURCE, webappObject(name, namespace, img)),
    );
    await applyFloorObjects(ctx.kube, names, floorNamespace, img, ctx.opts.concurrency);
    await Promise.all([
      webapps.until(n, webappAvailable, convergenceTimeout(n), `${n} fixture WebApps to be Available`),
      floor.until(n, deploymentAvailable, convergenceTimeout(n), `${n} floor Deployments to be Available`),
    ]);
  } finally {
    webapps.stop();
    floor.stop();
    await op.stop();
  }
  ctx.fixture = { namespace, floorNamespace, n, image: img };
  return ctx.fixture;
}

/** How long operatorOverFixture waits for the first pass over the fixture (a slow one is measured as it is). */
const FIRST_PASS_MS = 60_000;

/** ctx's operator started over the fixture, ready, its first pass over every WebApp done (see the contract above). */
export async function operatorOverFixture(ctx: Context, fx: Fixture): Promise<BenchOperator> {
  const op = await ctx.operator(fx.namespace);
  await op.waitReady();
  const deadline = performance.now() + FIRST_PASS_MS;
  while (total(await op.scrape(), "controller_runtime_reconcile_total") < fx.n && performance.now() < deadline)
    await Bun.sleep(100);
  return op;
}
