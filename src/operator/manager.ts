/**
 * Wires the WebApp operator: one client, informers for WebApps and the Deployments and Services we
 * label as ours, the controller, leader election, events, and the health/metrics server.
 *
 * Lifecycle (controller-runtime's manager, reduced):
 * 1. preflight: the WebApp API must be served and listable, else a clear error (exit 1);
 * 2. caches start at once on every replica, so a standby takes over with warm caches;
 * 3. with leader election, workers run only while leading; a lost lease stops them and `run` returns
 *    exit code 1 (the process must restart: another replica may be reconciling already);
 * 4. on `signal` (SIGTERM/SIGINT): workers drain within `shutdownTimeoutMs`, the Lease is released
 *    so a standby takes over within about one retry period, then caches and the server stop (exit 0).
 * /readyz: every cache synced and no watch stale past its inactivity limit. /healthz: the process runs.
 */
import { hostname } from "node:os";
import type { WebAppObject } from "../api/webapp.ts";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { createKubeClient } from "../kube/client.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import { controllerBuilder } from "../runtime/builder.ts";
import { realClock, type Clock } from "../runtime/clock.ts";
import { createEventRecorder } from "../runtime/events.ts";
import { createInformer, mergeInformers, type Informer } from "../runtime/informer.ts";
import { createLeaderElector } from "../runtime/leader-election.ts";
import type { Logger } from "../runtime/logger.ts";
import { createRuntimeMetrics } from "../runtime/metrics.ts";
import { startServer, type RunningServer } from "../server/http.ts";
import { MANAGED_BY_VALUE } from "./desired.ts";
import { createOrphanCollector } from "./orphans.ts";
import { createWebAppReconciler } from "./reconciler.ts";

export const CONTROLLER_NAME = "webapp";
export const DEFAULT_LEASE_NAME = "webapp-operator-lock";

export interface OperatorOptions {
  kubeconfig?: string;
  context?: string;
  /** Namespaces to watch; empty = all. */
  namespaces: string[];
  concurrency: number;
  leaderElection:
    | false
    | {
        leaseName: string;
        namespace?: string;
        leaseDurationMs?: number;
        renewDeadlineMs?: number;
        retryPeriodMs?: number;
      };
  /** "host:port"; port 0 picks a free one; undefined disables the endpoint. */
  metricsAddress?: string;
  healthAddress?: string;
  resyncMs: number;
  shutdownTimeoutMs: number;
  reconcileTimeoutMs?: number;
  /** A watch with no event or bookmark for this long is re-opened and /readyz fails meanwhile. Default 90 s (watcher.ts). */
  watchInactivityMs?: number;
  identity?: string;
  logger: Logger;
  clock?: Clock;
  /** Called once servers listen: the bound URLs (tests use port 0). */
  onListening?: (urls: { metrics?: string; health?: string }) => void;
}

export class OperatorError extends Error {
  override readonly name = "OperatorError";
}

/** Runs until `signal` aborts (exit code 0) or leadership is lost (1). Throws OperatorError on a bad start. */
export async function runOperator(opts: OperatorOptions, signal: AbortSignal): Promise<number> {
  const clock = opts.clock ?? realClock;
  const log = opts.logger;
  const metrics = createRuntimeMetrics();
  const client = createKubeClient({
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    userAgent: "devctl-operator",
    observe: metrics.observeRequest,
  });
  const identity = opts.identity ?? `${hostname()}_${crypto.randomUUID().slice(0, 8)}`;
  log.info(`starting the WebApp operator against ${client.server}`, {
    identity,
    // Always a string, so that a log pipeline sees one type: "all" or "team-a,team-b".
    namespaces: opts.namespaces.length ? opts.namespaces.join(",") : "all",
  });
  await preflight(client, opts.namespaces);

  const informerOpts = {
    clock,
    logger: log,
    ...(opts.watchInactivityMs ? { inactivityMs: opts.watchInactivityMs } : {}),
  };
  const informers = <T extends KubeObject>(rt: ResourceType, labelSelector?: string): Informer<T> => {
    const each = (opts.namespaces.length ? opts.namespaces : [undefined]).map((namespace) =>
      createInformer<T>(client, rt, {
        ...informerOpts,
        ...(namespace ? { namespace } : {}),
        ...(labelSelector ? { labelSelector } : {}),
      }),
    );
    return each.length === 1 ? (each[0] as Informer<T>) : mergeInformers(each);
  };
  const ours = `managed-by=${MANAGED_BY_VALUE}`;
  const webapps = informers<KubeObject & WebAppObject>(WEBAPP_RESOURCE);
  const deployments = informers<KubeObject>(DEPLOYMENT_RESOURCE, ours);
  const services = informers<KubeObject>(SERVICE_RESOURCE, ours);
  const caches = [webapps, deployments, services];

  const recorder = createEventRecorder(client, {
    clock,
    logger: log,
    component: "webapp-operator",
    reportingController: "devctl.dev/webapp-operator",
    reportingInstance: identity,
  });
  const controller = controllerBuilder()
    .for(webapps, WEBAPP_RESOURCE)
    .owns(deployments)
    .owns(services)
    .build({
      name: CONTROLLER_NAME,
      reconcile: createWebAppReconciler({ client, webapps, deployments, services, recorder, clock, logger: log }),
      concurrency: opts.concurrency,
      ...(opts.reconcileTimeoutMs ? { reconcileTimeoutMs: opts.reconcileTimeoutMs } : {}),
      clock,
      metrics,
      logger: log,
      resync: { everyMs: opts.resyncMs },
    });

  const orphans = createOrphanCollector({
    client,
    webapps,
    children: [
      { rt: DEPLOYMENT_RESOURCE, source: deployments },
      { rt: SERVICE_RESOURCE, source: services },
    ],
    recorder,
    clock,
    logger: log,
  });
  /** The workers, and beside them the orphan collector, until `until` aborts or the workers end. */
  const work = async (until: AbortSignal): Promise<void> => {
    const workersEnded = new AbortController();
    const collecting = orphans.run(AbortSignal.any([until, workersEnded.signal]));
    try {
      await controller.run(until, { graceMs: opts.shutdownTimeoutMs });
    } finally {
      workersEnded.abort();
      await collecting;
    }
  };

  const servers: RunningServer[] = [];
  const readyz = () => {
    const notSynced = caches.filter((c) => !c.hasSynced()).map((c) => c.description);
    if (notSynced.length) return `caches not synced: ${notSynced.join(", ")}`;
    const stale = caches.filter((c) => c.isStale()).map((c) => c.description);
    return stale.length ? `watches stale: ${stale.join(", ")}` : true;
  };
  const urls: { metrics?: string; health?: string } = {};
  const metricsAddr = opts.metricsAddress ? parseAddress(opts.metricsAddress, "--metrics-bind-address") : undefined;
  const healthAddr = opts.healthAddress ? parseAddress(opts.healthAddress, "--health-probe-bind-address") : undefined;
  const serve = (addr: { hostname: string; port: number }): string => {
    const s = startServer({ ...addr, healthz: () => true, readyz, metrics: metrics.expose });
    servers.push(s);
    return s.url;
  };
  // One server when both flags name the same fixed address, as a pod's probes and scrapes may.
  const sameAddress =
    !!metricsAddr &&
    !!healthAddr &&
    metricsAddr.port !== 0 &&
    metricsAddr.port === healthAddr.port &&
    metricsAddr.hostname === healthAddr.hostname;
  if (metricsAddr) urls.metrics = serve(metricsAddr);
  if (healthAddr) urls.health = sameAddress ? urls.metrics : serve(healthAddr);
  opts.onListening?.(urls);
  if (urls.metrics || urls.health) log.info("serving /healthz, /readyz and /metrics", urls);

  const cachesStop = new AbortController();
  const cacheRuns = caches.map((c) => c.start(cachesStop.signal));
  let exitCode = 0;
  try {
    if (opts.leaderElection) {
      const le = opts.leaderElection;
      const elector = createLeaderElector(
        client,
        {
          leaseName: le.leaseName,
          namespace: le.namespace || client.namespace,
          identity,
          ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
          ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
          ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
        },
        { clock, logger: log, metrics },
      );
      log.info(`waiting to lead (lease ${le.namespace || client.namespace}/${le.leaseName})`);
      const outcome = await elector.run(signal, {
        onStartedLeading: (leading) => {
          log.info("leading: starting workers", { identity });
          return work(leading);
        },
        onStoppedLeading: () => log.info("stopped leading"),
        onNewLeader: (who) => who !== identity && log.info(`the leader is ${who || "nobody"}`),
      });
      if (outcome.kind === "lost") {
        log.error("lost the lease (could not renew it in time): stopping so that exactly one replica reconciles");
        exitCode = 1;
      } else if (outcome.kind === "released" && outcome.workError) {
        log.error("the controller failed", outcome.workError);
        exitCode = 1;
      }
    } else {
      await work(signal);
    }
  } finally {
    await recorder.flush();
    cachesStop.abort();
    await Promise.allSettled(cacheRuns);
    await Promise.allSettled(servers.map((s) => s.stop()));
  }
  log.info(exitCode === 0 ? "stopped" : "exiting with an error");
  return exitCode;
}

/** The WebApp API must be served, and listable by us, before anything starts. */
async function preflight(client: KubeClient, namespaces: string[]): Promise<void> {
  for (const namespace of namespaces.length ? namespaces : [undefined]) {
    try {
      await client.list(WEBAPP_RESOURCE, { limit: 1, ...(namespace ? { namespace } : {}) });
    } catch (e) {
      if (isNotFound(e))
        throw new OperatorError(
          `the WebApp API (${WEBAPP_RESOURCE.plural}.${WEBAPP_RESOURCE.group}/${WEBAPP_RESOURCE.version}) is not served by ${client.server}: install the CRD first (devctl operator install, or kubectl apply -f crd/)`,
        );
      if (isForbidden(e)) throw new OperatorError(`${(e as Error).message}`);
      throw e;
    }
  }
}

export function parseAddress(addr: string, flag: string): { hostname: string; port: number } {
  const m = /^(.*):(\d+)$/.exec(addr);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new OperatorError(`${flag} "${addr}" is not host:port (e.g. ":8080" or "127.0.0.1:0")`);
  return { hostname: m[1] || "0.0.0.0", port };
}
