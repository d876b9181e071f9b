/**
 * The two references an operator run is compared with, each on its own empty cluster.
 *
 * The floor: our client applies the same Deployments and Services server-side, at the operators'
 * concurrency, with no WebApps; the end is the event after which all N Deployments are Available.
 *
 * The minimal operator: devctl's writes without devctl's runtime. The bench client itself does, for N new
 * WebApps, only the writes devctl's design needs, in its order: one POST for the Deployment as soon as the
 * WebApp's create returns, one for the Service (the operator's own builders, owner references included) behind
 * every Deployment create waiting, and one status write (devctl's computeStatus, its conditions, a merge patch of
 * the status subresource) as soon as the Deployment is Available and the Service exists, ahead of both. No cache of its own, no queue, no events,
 * no reconcile passes; the same --concurrency for its requests as the operators' workers, the same WebApp
 * creates (--client-concurrency) and the same three watches of the bench as an operator run.
 *
 * Properties:
 * - Timing as for the operators: t0 just before the first WebApp create; the end is the watch event after
 *   which all N WebApps report Available=True (writtenMs: the last child POST answered).
 * - What it separates: devctl / minimal is what devctl's runtime (cache, queue, passes, events, its CPU) adds
 *   to its writes; minimal / Go is what devctl's writes and their order cost against the Go peer's. It is not
 *   a lower bound for every operator: another order of the same writes, or cheaper writes, can be faster.
 */
import { parseWebApp } from "../../../src/api/parse.ts";
import { DEPLOYMENT_SUFFIX, type WebAppObject } from "../../../src/api/webapp.ts";
import type { KubeObject } from "../../../src/kube/types.ts";
import { deploymentName, desiredDeployment, desiredService } from "../../../src/operator/desired.ts";
import { FIELD_MANAGER } from "../../../src/operator/reconciler.ts";
import { computeStatus } from "../../../src/operator/status.ts";
import type { Context } from "../_context.ts";
import {
  applyFloorObjects,
  appNames,
  convergenceTimeout,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  deploymentAvailable,
  image,
  pool,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
  webappAvailable,
  webappObject,
} from "../_kube.ts";
import { createTracker } from "../_tracker.ts";
import type { FloorRun } from "./_convergence-goals.ts";

/** The lanes of workQueue, first to last: a status write ends a WebApp's wait; a Service can wait for rollouts. */
type Lane = "status" | "deployment" | "service";

/**
 * Jobs run by `workers` concurrent loops, lane by lane (Lane), FIFO within each; close() ends them once all are
 * empty.
 */
function workQueue(workers: number) {
  const lanes: Record<Lane, (() => Promise<unknown>)[]> = { status: [], deployment: [], service: [] };
  const idle: (() => void)[] = [];
  let closed = false;
  let failed: unknown;
  const loops = Array.from({ length: workers }, async () => {
    for (;;) {
      const job = lanes.status.shift() ?? lanes.deployment.shift() ?? lanes.service.shift();
      if (job) {
        await job().catch((e) => {
          failed ??= e;
        });
      } else if (closed) return;
      else await new Promise<void>((r) => idle.push(r));
    }
  });
  return {
    push(lane: Lane, job: () => Promise<unknown>) {
      lanes[lane].push(job);
      idle.shift()?.();
    },
    async close() {
      closed = true;
      for (const wake of idle.splice(0)) wake();
      await Promise.all(loops);
      if (failed) throw failed;
    },
  };
}

/** The floor: our client applies the N Deployments and Services itself (no WebApps); the end is all Deployments Available. */
export async function floorRun(ctx: Context, n: number): Promise<FloorRun> {
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
      convergenceTimeout(n),
      `${n} floor Deployments to be Available`,
      (k, now) => curve.push([now - t0, k]),
    );
    await applyFloorObjects(ctx.kube, appNames(n), namespace, img, ctx.opts.concurrency);
    const writtenMs = performance.now() - t0;
    const availableMs = (await avail) - t0;
    return { writtenMs, availableMs, usage: meter.read(), namespace, curve };
  } finally {
    deployments.stop();
  }
}

/** The minimal operator (see the contract above). */
export async function minimalRun(ctx: Context, n: number): Promise<FloorRun> {
  const namespace = await createNamespace(ctx.kube, `minimal${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  const webapps = createTracker(ctx.kube, WEBAPP_RESOURCE, namespace);
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace);
  const services = createTracker(ctx.kube, SERVICE_RESOURCE, namespace);
  const curve: [number, number][] = [];
  const created = new Map<string, { webapp: WebAppObject; service?: KubeObject }>();
  const statusWritten = new Set<string>();
  const queue = workQueue(ctx.opts.concurrency);
  let unsubscribe = () => {};
  try {
    await Promise.all([webapps.start(), deployments.start(), services.start()]);
    await ctx.settle();
    const meter = await ctx.meter({});
    const writeStatus = (name: string, dep: KubeObject) => {
      const own = created.get(name);
      if (!own?.service || statusWritten.has(name) || !deploymentAvailable(dep)) return;
      statusWritten.add(name);
      const status = computeStatus(own.webapp, { Deployment: dep, Service: own.service }, [], Date.now());
      const write = () =>
        ctx.kube.patch(WEBAPP_RESOURCE, name, namespace, { status }, "merge", {
          subresource: "status",
          fieldManager: FIELD_MANAGER,
          discardResponse: true,
        });
      queue.push("status", write);
    };
    unsubscribe = deployments.subscribe((dep, obj) => {
      if (obj) writeStatus(dep.slice(0, -DEPLOYMENT_SUFFIX.length), obj);
    });
    let writtenAt = 0;
    const t0 = performance.now();
    const avail = webapps.until(
      n,
      webappAvailable,
      convergenceTimeout(n),
      `${n} minimal WebApps to be Available`,
      (k, now) => curve.push([now - t0, k]),
    );
    await pool(appNames(n), ctx.opts.clientConcurrency, async (name) => {
      const webapp = (await ctx.kube.create(WEBAPP_RESOURCE, webappObject(name, namespace, img))) as WebAppObject;
      const parsed = parseWebApp(webapp);
      if (!parsed.ok) throw new Error(`the API server returned an invalid WebApp ${name}`);
      created.set(name, { webapp });
      const opts = { fieldManager: FIELD_MANAGER };
      queue.push("deployment", async () => {
        await ctx.kube.create(DEPLOYMENT_RESOURCE, desiredDeployment(parsed.webapp) as KubeObject, opts);
        writtenAt = Math.max(writtenAt, performance.now());
      });
      queue.push("service", async () => {
        const service = await ctx.kube.create(SERVICE_RESOURCE, desiredService(parsed.webapp) as KubeObject, opts);
        created.set(name, { webapp, service });
        writtenAt = Math.max(writtenAt, performance.now());
        const dep = deployments.get(deploymentName(name));
        if (dep) writeStatus(name, dep);
      });
    });
    const availableMs = (await avail) - t0;
    const usage = meter.read();
    await queue.close();
    return { writtenMs: writtenAt - t0, availableMs, usage, namespace, curve };
  } finally {
    unsubscribe();
    for (const t of [webapps, deployments, services]) t.stop();
  }
}
