/**
 * Wires the WebApp operator as runnables of one runtime Manager (runtime/manager.ts owns the lifecycle): informers
 * for WebApps and every Deployment and Service (webAppCaches), the health/metrics servers, the event recorder and
 * the release of start-up's code pages once the first pass is over (runtime/startup-pages.ts) on every replica;
 * the WebApp controller and the orphan collector (orphans.ts) only while leading.
 * A second controller or a webhook is one more `manager.add`.
 * - preflight first: the WebApp API must be served and listable, else OperatorError (exit 1);
 * - a lost lease is exit code 1 (the process must restart: another replica may be reconciling already);
 * - on `signal` (SIGTERM/SIGINT): workers drain within `shutdownTimeoutMs`, the Lease is released so a standby
 *   takes over within about one retry period, then caches, servers and the recorder stop (exit 0).
 */
import { hostname } from "node:os";
import type { WebAppObject } from "../api/webapp.ts";
import { WEBAPP_RESOURCE } from "../api/webapp.ts";
import { createKubeClient } from "../kube/client.ts";
import { INGRESS_CLASSES } from "../kube/resources.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import { controllerBuilder } from "../runtime/builder.ts";
import { realClock, type Clock } from "../runtime/clock.ts";
import { ServerTime, serverTimeClock } from "../runtime/server-time.ts";
import type { Controller } from "../runtime/controller.ts";
import { createEventRecorder, type EventRecorder } from "../runtime/events.ts";
import { createInformer, createUnservedInformer, mergeInformers, type Informer } from "../runtime/informer.ts";
import { createLeaderElector, type LeaderElector } from "../runtime/leader-election.ts";
import type { Logger } from "../runtime/logger.ts";
import { Manager, type ManagerOutcome, onStop, type Runnable, stopped } from "../runtime/manager.ts";
import { createRuntimeMetrics, type RuntimeMetrics } from "../runtime/metrics.ts";
import { releaseStartupPagesWhenQuiet } from "../runtime/startup-pages.ts";
import { isRetriableReviewError, reviewAccess, reviewToken } from "../kube/access-review.ts";
import { loadCertDir } from "../server/cert-dir.ts";
import { type Address, type SecureMetrics, serveEndpoints } from "../server/endpoints.ts";
import type { Probe } from "../server/http.ts";
import { createRequestAuth } from "../server/request-auth.ts";
import { selfSignedCert } from "../server/self-signed.ts";
import { nameOnly, shapeChild, shapeWebApp } from "./cache-shape.ts";
import { CHILD_KINDS, type ChildKindName, type PerKind, perKind } from "./child-kinds.ts";
import { unservedKinds } from "./served.ts";
import { registerWebAppMetrics } from "./webapp-metrics.ts";
import { createOrphanCollector } from "./orphans.ts";
import { createWebAppReconciler } from "./reconciler.ts";

export const CONTROLLER_NAME = "webapp";

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
  /**
   * /metrics over HTTPS to bearer tokens the API server authenticates (TokenReview) and authorizes for `get` on
   * the non-resource URL /metrics (SubjectAccessReview); undefined: plain HTTP (server/endpoints.ts).
   * certDir: tls.crt and tls.key (watched for renewal); without it a self-signed certificate made at start.
   */
  metricsSecurity?: { certDir?: string; http2: boolean };
  healthAddress?: string;
  resyncMs: number;
  shutdownTimeoutMs: number;
  reconcileTimeoutMs?: number;
  /** A watch with no event or bookmark for this long is re-opened and /readyz fails meanwhile. Default 90 s (watcher.ts). */
  watchInactivityMs?: number;
  identity?: string;
  /** Roll back failed revisions of WebApps without spec.rollout.autoRollback (rollback.ts); default false. */
  autoRollback?: boolean;
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
  const { client, stampClock } = operatorClient(opts, metrics, clock);
  const identity = opts.identity ?? `${hostname()}_${crypto.randomUUID().slice(0, 8)}`;
  log.info(`starting the WebApp operator against ${client.server}`, {
    identity,
    // Always a string, so that a log pipeline sees one type: "all" or "team-a,team-b".
    namespaces: opts.namespaces.length ? opts.namespaces.join(",") : "all",
  });
  await preflight(client, opts.namespaces);
  const unserved = await unservedKinds(client, signal);
  if (unserved.size > 0)
    log.warn(`this cluster does not serve ${[...unserved].join(", ")}: WebApps that want one are reported Stalled`);

  const caches = webAppCaches(client, opts, clock, unserved);
  const recorder = createEventRecorder(client, {
    clock: stampClock,
    logger: log,
    component: "webapp-operator",
    reportingController: "devctl.dev/webapp-operator",
    reportingInstance: identity,
  });
  const leadership = leadershipFlag();
  const controller = webAppController(
    client,
    caches,
    { recorder, unserved, leading: leadership.leading },
    metrics,
    opts,
    clock,
    stampClock,
  );
  const elector = opts.leaderElection ? leaderElector(client, opts.leaderElection, identity, metrics, opts) : undefined;
  const manager = new Manager({ logger: log, identity, ...(elector ? { elector } : {}) });
  const informers = allInformers(caches);
  for (const informer of informers) manager.add(informer);
  watchStaleGauge(metrics, informers);
  const endpoints = await serveEndpoints({
    ...(opts.metricsAddress ? { metricsAt: parseAddress(opts.metricsAddress, "--metrics-bind-address") } : {}),
    ...(opts.metricsAddress && opts.metricsSecurity
      ? { secure: await secureMetrics(client, opts.metricsSecurity, clock, log) }
      : {}),
    ...(opts.healthAddress ? { healthAt: parseAddress(opts.healthAddress, "--health-probe-bind-address") } : {}),
    readyz: readyz(informers),
    metrics: metrics.exposeChunks,
    logger: log,
    ...(opts.onListening ? { onListening: opts.onListening } : {}),
  });
  for (const server of endpoints) manager.add(server);
  manager.add(onStop("event recorder", () => recorder.flush()));
  const synced = () => informers.every((c) => c.hasSynced());
  manager.add(releaseStartupPagesWhenQuiet({ ready: synced, clock, logger: log }));
  manager.add(leadership.runnable);
  manager.add({
    description: `controller ${CONTROLLER_NAME}`,
    needLeaderElection: true,
    start: (leading) => controller.run(leading, { graceMs: opts.shutdownTimeoutMs }),
  });
  const orphans = createOrphanCollector({
    client,
    webapps: caches.webapps,
    children: CHILD_KINDS.map((k) => ({ rt: k.rt, source: caches.children[k.kind] })),
    recorder,
    clock,
    logger: log,
  });
  manager.add({ description: "orphan collector", needLeaderElection: true, start: (leading) => orphans.run(leading) });
  return exitCode(await manager.run(signal), log);
}

/**
 * The operator's API client, and the API server's clock as its answers' Date headers tell (runtime/server-time.ts),
 * which statuses and Events are stamped with: so every leader's stamps agree, and agree with creationTimestamp. The
 * headers are timed with Date.now(), so they are read over realClock only (another clock: `clock` itself).
 */
function operatorClient(
  opts: OperatorOptions,
  metrics: RuntimeMetrics,
  clock: Clock,
): { client: KubeClient; stampClock: Clock } {
  const apiTime = new ServerTime();
  const client = createKubeClient({
    ...(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    userAgent: "devctl-operator",
    observe: metrics.observeRequest,
    ...(clock === realClock ? { serverDate: (date, sent, received) => apiTime.observe(date, sent, received) } : {}),
  });
  return { client, stampClock: serverTimeClock(clock, apiTime) };
}

/**
 * What secure metrics need: the certificate (from certDir, else self-signed for this host's names) and the
 * request check, whose TokenReviews and SubjectAccessReviews go to the API server with the operator's credentials.
 */
async function secureMetrics(
  client: KubeClient,
  s: NonNullable<OperatorOptions["metricsSecurity"]>,
  clock: Clock,
  logger: Logger,
): Promise<SecureMetrics> {
  let tls: SecureMetrics["tls"];
  try {
    tls = s.certDir
      ? loadCertDir(s.certDir)
      : await selfSignedCert({ commonName: METRICS_CERT_NAME, hosts: ["localhost", "127.0.0.1", "::1", hostname()] });
  } catch (e) {
    throw new OperatorError((e as Error).message, { cause: e });
  }
  const auth = createRequestAuth({
    authenticate: (token) => reviewToken(client, token),
    authorize: (user, attributes) => reviewAccess(client, user, attributes),
    retriable: isRetriableReviewError,
    clock,
    logger,
  });
  return { tls, ...(s.certDir ? { certDir: s.certDir } : {}), auth, http2: s.http2, clock };
}

/** The subject of the self-signed metrics certificate. */
export const METRICS_CERT_NAME = "devctl-operator-metrics";

/** The one switch from the manager's outcome to the process's exit code. */
function exitCode(outcome: ManagerOutcome, log: Logger): number {
  switch (outcome.kind) {
    case "stopped":
      log.info("stopped");
      return 0;
    case "lost":
      log.error("lost the lease (could not renew it in time): stopping so that exactly one replica reconciles");
      break;
    case "failed":
      log.error("the controller failed", outcome.cause);
      break;
  }
  log.info("exiting with an error");
  return 1;
}

/** What webAppCaches needs of the operator's options. */
export type CacheOptions = Pick<OperatorOptions, "namespaces" | "logger" | "watchInactivityMs">;

export interface WebAppCaches {
  webapps: Informer<KubeObject & WebAppObject>;
  /** Every object of each kind of child (child-kinds.ts). */
  children: PerKind<Informer<KubeObject>>;
  /** The cluster's IngressClasses (names only), for spec.expose.ingressClassName. */
  ingressClasses: Informer<KubeObject>;
}

/** The WebApps' informer, then the children's, in CHILD_KINDS order, then the IngressClasses'. */
function allInformers(caches: WebAppCaches): Informer<KubeObject>[] {
  return [caches.webapps, ...CHILD_KINDS.map((k) => caches.children[k.kind]), caches.ingressClasses];
}

/**
 * WebApps, and every Deployment and Service, in each watched namespace (or all), shaped on ingest (cache-shape.ts):
 * no label selector, so that once synced a cache miss means "no such object" and the reconciler need not GET
 * before it creates; someone else's objects are cached as identity metadata only.
 */
export function webAppCaches(
  client: KubeClient,
  opts: CacheOptions,
  clock: Clock,
  unserved: ReadonlySet<ChildKindName> = new Set(),
): WebAppCaches {
  const informerOpts = {
    clock,
    logger: opts.logger,
    ...(opts.watchInactivityMs ? { inactivityMs: opts.watchInactivityMs } : {}),
  };
  const informers = <T extends KubeObject>(rt: ResourceType, transform: (o: KubeObject) => KubeObject) => {
    const each = (opts.namespaces.length ? opts.namespaces : [undefined]).map((namespace) =>
      createInformer<T>(client, rt, { ...informerOpts, ...(namespace ? { namespace } : {}), transform }),
    );
    return each.length === 1 ? (each[0] as Informer<T>) : mergeInformers(each);
  };
  return {
    webapps: informers<KubeObject & WebAppObject>(WEBAPP_RESOURCE, shapeWebApp),
    children: perKind((k) =>
      unserved.has(k.kind)
        ? createUnservedInformer<KubeObject>(k.rt)
        : informers<KubeObject>(k.rt, (o) => shapeChild(o, k.statusRead)),
    ),
    ingressClasses: createInformer<KubeObject>(client, INGRESS_CLASSES, { ...informerOpts, transform: nameOnly }),
  };
}

function webAppController(
  client: KubeClient,
  caches: WebAppCaches,
  {
    recorder,
    unserved,
    leading,
  }: { recorder: EventRecorder; unserved: ReadonlySet<ChildKindName>; leading: () => boolean },
  metrics: RuntimeMetrics,
  opts: OperatorOptions,
  clock: Clock,
  /** What the reconciler stamps into statuses and compares them with: the API server's clock (server-time.ts). */
  stampClock: Clock,
): Controller {
  const { webapps, children } = caches;
  const logger = opts.logger;
  const { ingressClasses } = caches;
  const reconciler = createWebAppReconciler({
    client,
    webapps,
    children,
    ingressClasses,
    unserved,
    recorder,
    clock: stampClock,
    logger,
    autoRollback: opts.autoRollback ?? false,
    reported: registerWebAppMetrics(metrics.registry, { list: () => webapps.list(), leading }),
  });
  const builder = controllerBuilder().for(webapps, WEBAPP_RESOURCE);
  for (const k of CHILD_KINDS) {
    // Told of every child event before a pass can run for it (WrittenChildren.observed: a creation seen deleted).
    children[k.kind].onEvent(reconciler.observeChild);
    builder.owns(children[k.kind], { priority: k.priority });
  }
  return builder.build({
    name: CONTROLLER_NAME,
    reconcile: reconciler,
    concurrency: opts.concurrency,
    ...(opts.reconcileTimeoutMs ? { reconcileTimeoutMs: opts.reconcileTimeoutMs } : {}),
    clock,
    metrics,
    logger,
    resync: { everyMs: opts.resyncMs },
  });
}

/** devctl_watch_stale{resource}: 1 while a cache's watch is stale (what /readyz reports), for OperatorWatchStalled. */
function watchStaleGauge(metrics: RuntimeMetrics, informers: Informer<KubeObject>[]): void {
  metrics.registry.collected(
    {
      name: "devctl_watch_stale",
      help: "1 while the watch behind a cache is not open or has been silent past its inactivity limit",
      labelNames: ["resource"],
    },
    () => informers.map((i) => [{ resource: i.description }, i.isStale() ? 1 : 0] as const),
  );
}

/** True while this replica leads (or always, without leader election): the WebApp metrics are the leader's. */
function leadershipFlag(): { leading: () => boolean; runnable: Runnable } {
  let leads = false;
  return {
    leading: () => leads,
    runnable: {
      description: "leadership flag (WebApp metrics)",
      needLeaderElection: true,
      start: async (stop) => {
        leads = true;
        await stopped(stop);
        leads = false;
      },
    },
  };
}

function leaderElector(
  client: KubeClient,
  le: Exclude<OperatorOptions["leaderElection"], false>,
  identity: string,
  metrics: RuntimeMetrics,
  opts: OperatorOptions,
): LeaderElector {
  const namespace = le.namespace || client.namespace;
  opts.logger.info(`waiting to lead (lease ${namespace}/${le.leaseName})`);
  return createLeaderElector(
    client,
    {
      leaseName: le.leaseName,
      namespace,
      identity,
      ...(le.leaseDurationMs ? { leaseDurationMs: le.leaseDurationMs } : {}),
      ...(le.renewDeadlineMs ? { renewDeadlineMs: le.renewDeadlineMs } : {}),
      ...(le.retryPeriodMs ? { retryPeriodMs: le.retryPeriodMs } : {}),
    },
    { clock: opts.clock ?? realClock, logger: opts.logger, metrics },
  );
}

/** /readyz: every cache synced and no watch stale past its inactivity limit. */
function readyz(caches: Informer<KubeObject>[]): Probe {
  return () => {
    const notSynced = caches.filter((c) => !c.hasSynced()).map((c) => c.description);
    if (notSynced.length) return `caches not synced: ${notSynced.join(", ")}`;
    const stale = caches.filter((c) => c.isStale()).map((c) => c.description);
    return stale.length ? `watches stale: ${stale.join(", ")}` : true;
  };
}

/** The WebApp API must be served, and listable by us, before anything starts. */
async function preflight(client: KubeClient, namespaces: string[]): Promise<void> {
  for (const namespace of namespaces.length ? namespaces : [undefined]) {
    try {
      await client.list(WEBAPP_RESOURCE, { limit: 1, ...(namespace ? { namespace } : {}) });
    } catch (e) {
      if (isNotFound(e))
        throw new OperatorError(
          `the WebApp API (${WEBAPP_RESOURCE.plural}.${WEBAPP_RESOURCE.group}/${WEBAPP_RESOURCE.version}) ` +
            `is not served by ${client.server}: install the CRD first (devctl operator install, or kubectl apply -f crd/)`,
        );
      if (isForbidden(e)) throw new OperatorError(`${(e as Error).message}`);
      throw e;
    }
  }
}

export function parseAddress(addr: string, flag: string): Address {
  const m = /^(.*):(\d+)$/.exec(addr);
  const port = Number(m?.[2]);
  if (!m || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new OperatorError(`${flag} "${addr}" is not host:port (e.g. ":8080" or "127.0.0.1:0")`);
  return { hostname: m[1] || "0.0.0.0", port };
}
