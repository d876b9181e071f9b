/**
 * The WebApp reconciler, in sample-controller's order: read the WebApp from the cache, validate its spec,
 * converge the Deployment and the Service (converge.ts, both at once), write the status last and only when it
 * changed.
 *
 * Properties: level-based; unchanged objects cost zero requests; a new WebApp costs one round trip (both creates
 * at once), then one status write when it turns Ready (first-status.ts); a child that cannot be written is reported in the status before the
 * error goes to the controller to retry with backoff; someone else's object is never touched, and looked at
 * again after RECHECK_MS; a WebApp that is not Ready is looked at again until it is, and after
 * POD_CHECK_AFTER_MS its pods are read (never cached) to report why they do not run, then on every pass while a
 * pod failure is reported.
 * Between calls it remembers, bounded and expiring (expectations.ts): the children it wrote until the cache
 * shows them, so a pass that runs before the watch delivered them neither writes nor reads again (a NotFound or
 * Conflict about one drops it, and the child is converged from the cache in the same pass; a pass that had only
 * that memory of a child, the cache showing nothing, is run again by the time the memory expires); and the
 * WebApps it created children for in the last CREATED_TTL_MS, and those the API server said are gone, for
 * the owner check below.
 * The owner check: a cached WebApp may be gone from the API server (the cache lags). A creation for it is
 * harmless (the garbage collector removes a child whose owner uid does not exist), but a loop is not:
 * collected children reconcile the stale WebApp again, which would create them again. So a creation that may
 * be a re-creation asks the API server (one GET, beside the create: converge.ts), and once the WebApp is
 * found gone (ownerGone) nothing is created for its uid again: for a WebApp this process created children
 * for within CREATED_TTL_MS, or one that has a status (it was reconciled before, so a missing child was
 * deleted: by someone, or by the collector as the WebApp is gone). A new WebApp (no status, nothing created)
 * creates without asking. An adoption always asks first.
 * The status is written by status-write.ts: not when already stale (a newer pass is queued) unless it turns
 * Ready or Stalled True, and told to deps.echoes first, so that the update event carrying it back runs no pass
 * (status-echo.ts). A new WebApp's first status waits while its Deployment is young and nothing is wrong
 * (first-status.ts).
 */
import type { WebApp, WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { formatIssues, type Issue, parseWebApp } from "../api/parse.ts";
import { findCondition } from "../api/conditions.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { done, requeueAfter, type Outcome, type Reconciler, type Request } from "../runtime/reconcile.ts";
import { isPodFailureReason } from "../readiness/pods.ts";
import { deploymentName, desiredDeployment, desiredService, serviceName } from "./desired.ts";
import { announceCreated, type Child, type ConvergeContext, convergeChild } from "./converge.ts";
import { CREATED_TTL_MS, ExpiringMap, WRITTEN_TTL_MS, WrittenChildren } from "./expectations.ts";
import { isControlledBy } from "./diff.ts";
import { firstRolloutStart, firstStatusWait } from "./first-status.ts";
import { podFailures } from "./pod-failures.ts";
import { computeStatus, podProblems, type Problem } from "./status.ts";
import type { StatusEchoes } from "./status-echo.ts";
import { writeStatus } from "./status-write.ts";

export { FIELD_MANAGER, REASON } from "./converge.ts";
/** How soon a WebApp blocked by someone else's object looks again (that object is not watched). */
export const RECHECK_MS = 60_000;
/** How long a WebApp may be not Ready before its pods are read (most rollouts finish sooner: no read at all). */
export const POD_CHECK_AFTER_MS = 10_000;
/** While a WebApp is not Ready, how soon it looks again (pods are not watched; a failure shows within ~25 s). */
export const NOT_READY_RECHECK_MS = 15_000;

/** Read access to a cache by "namespace/name" (an Informer fits). */
export interface Cache<T> {
  get(key: string): T | undefined;
}

export interface ReconcilerDeps {
  client: KubeClient;
  webapps: Cache<WebAppObject>;
  deployments: Cache<KubeObject>;
  services: Cache<KubeObject>;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  /** Told of every status written, so that the controller can drop the echo (status-echo.ts). */
  echoes?: StatusEchoes;
}

/** What the reconciler remembers between calls (see the contract above). */
interface Memory {
  written: WrittenChildren;
  /** uids of WebApps this process created a child for within CREATED_TTL_MS. */
  created: ExpiringMap<true>;
  /** uids of WebApps the API server said are gone (or being deleted): a uid never comes back. */
  gone: ExpiringMap<true>;
}

export function createWebAppReconciler(deps: ReconcilerDeps): Reconciler {
  const memory: Memory = {
    written: new WrittenChildren(deps.clock),
    created: new ExpiringMap<true>(deps.clock, CREATED_TTL_MS),
    gone: new ExpiringMap<true>(deps.clock, CREATED_TTL_MS),
  };
  return (req, signal) => reconcile(deps, memory, req, signal);
}

async function reconcile(deps: ReconcilerDeps, memory: Memory, req: Request, signal: AbortSignal): Promise<Outcome> {
  const webapp = deps.webapps.get(req.key);
  if (!webapp || webapp.metadata.deletionTimestamp) return done(); // gone: the garbage collector removes children
  const parsed = parseWebApp(webapp);
  // Invalid: reported, no retry (a fix is an update event, which reconciles again).
  if (!parsed.ok) return reportInvalid(deps, req, webapp, parsed.issues, signal);

  const reconciledBefore = (webapp.status?.conditions?.length ?? 0) > 0; // every status we write has conditions
  const observed = await convergeChildren(deps, memory, parsed.webapp, reconciledBefore, signal);
  if (observed.kind === "ownerGone") {
    // Its delete (or the new incarnation) reaches the cache as an event, which reconciles it again.
    deps.logger.debug(`WebApp ${req.key} is cached but gone from the API server: not creating its children`);
    return done();
  }
  const outcome = await settle(deps, req, webapp, parsed.webapp, observed, reconciledBefore, signal);
  // A child seen only in what we wrote (the cache shows nothing): looked at again by the time that memory expires.
  if (!observed.unseen || (outcome.kind === "requeueAfter" && outcome.ms <= WRITTEN_TTL_MS)) return outcome;
  return requeueAfter(WRITTEN_TTL_MS);
}

/** The status of a WebApp whose children were converged, written, and when to look again. */
async function settle(
  deps: ReconcilerDeps,
  req: Request,
  webapp: WebAppObject,
  parsed: WebApp,
  observed: Extract<Observed, { kind: "observed" }>,
  reconciledBefore: boolean,
  signal: AbortSignal,
): Promise<Outcome> {
  const { live, problems, failure } = observed;
  const now = deps.clock.now();
  let status = computeStatus(webapp, live.Deployment, live.Service, problems, now);
  const rolloutStart = firstRolloutStart(reconciledBefore, live.Deployment);
  const firstWait = firstStatusWait(rolloutStart, status, now);
  if (firstWait !== undefined) return requeueAfter(firstWait); // first-status.ts: nothing to report yet
  const notReady = live.Deployment && notReadyFor(status, now, rolloutStart);
  // A reported pod failure is checked on every pass until the pods show it is over: a crash-looping container
  // makes the Deployment available for an instant at each restart, which must not clear it (nor restart the wait).
  const wantPods =
    live.Deployment !== undefined &&
    (podFailureReported(webapp.status) || (notReady !== undefined && notReady >= POD_CHECK_AFTER_MS));
  // Superseded stays true for the rest of this pass: its status is not written, so the pods need not be read.
  if (wantPods && !req.superseded()) {
    const failures = await podFailures(deps, parsed, now, signal);
    if (failures.length > 0)
      status = computeStatus(webapp, live.Deployment, live.Service, [...problems, ...podProblems(failures)], now);
  }
  await writeStatus(deps, req, webapp, status, signal);
  if (failure) throw failure;
  if (problems.length > 0) return requeueAfter(RECHECK_MS);
  if (wantPods) return requeueAfter(NOT_READY_RECHECK_MS);
  if (notReady === undefined) return done();
  return requeueAfter(POD_CHECK_AFTER_MS - notReady);
}

/** The stored status says Stalled because of a pod (readiness/pods.ts). */
function podFailureReported(status: WebAppStatus | undefined): boolean {
  const stalled = findCondition(status?.conditions, "Stalled");
  return stalled?.status === "True" && isPodFailureReason(stalled.reason);
}

type Observed =
  | { kind: "ownerGone" }
  | {
      kind: "observed";
      live: Partial<Record<Child["kind"], KubeObject>>;
      problems: Problem[];
      failure: unknown;
      /** A child was converged from what this process wrote, the cache showing nothing under its name. */
      unseen: boolean;
    };

/** Both children converged at once, each outcome decided in one switch; one Created event for what was created. */
async function convergeChildren(
  deps: ReconcilerDeps,
  memory: Memory,
  webapp: WebApp,
  reconciledBefore: boolean,
  signal: AbortSignal,
): Promise<Observed> {
  const uid = webapp.metadata.uid;
  if (uid !== undefined && memory.gone.get(uid)) return { kind: "ownerGone" }; // the cache still lags
  let ownerCheck: Promise<boolean> | undefined;
  const ctx: ConvergeContext = {
    ...deps,
    webapp,
    ownerExists: () => (ownerCheck ??= stillExists(deps.client, webapp, signal)),
    confirmOwner: reconciledBefore || uid === undefined || memory.created.get(uid) !== undefined,
    signal,
  };
  const children = childrenOf(deps, webapp).map(([child, cache]) => {
    const key = keyOf(child.desired);
    const cached = cache.get(key);
    return { child, key, cached, found: memory.written.resolve(key, cached) };
  });
  const outcomes = await Promise.all(
    children.map(async ({ child, key, cached, found }) => {
      const outcome = await convergeChild(ctx, child, found);
      // What we remembered writing is gone or changed (the chaos soak's app-031): converge from the cache instead.
      if (outcome.kind !== "failed" || !memory.written.contradicted(key, outcome.error)) return outcome;
      return convergeChild(ctx, child, cached);
    }),
  );
  const unseen = children.some((c) => c.cached === undefined && c.found !== undefined);
  const observed: Observed = { kind: "observed", live: {}, problems: [], failure: undefined, unseen };
  const created: Child[] = [];
  let ownerGone = false;
  for (const [i, outcome] of outcomes.entries()) {
    const { child, key } = children[i] as (typeof children)[number];
    switch (outcome.kind) {
      case "converged":
        observed.live[child.kind] = outcome.live;
        if (outcome.wrote) memory.written.remember(key, outcome.live, outcome.wrote === "created");
        if (outcome.wrote === "created") created.push(child);
        break;
      case "blocked":
        observed.problems.push(outcome.problem);
        break;
      case "failed":
        observed.problems.push(outcome.problem);
        observed.failure ??= outcome.error;
        break;
      case "ownerGone":
        ownerGone = true;
        break;
    }
  }
  if (uid !== undefined && ownerGone) memory.gone.set(uid, true);
  else if (uid !== undefined && created.length > 0) memory.created.set(uid, true);
  announceCreated(ctx, created);
  return ownerGone ? { kind: "ownerGone" } : observed;
}

/**
 * How long the computed status has had Ready=False (kept across reconciles by its lastTransitionTime, or since
 * `since` if earlier: the start of the rollout of a first status); undefined when Ready.
 */
function notReadyFor(status: WebAppStatus, now: number, since = Number.POSITIVE_INFINITY): number | undefined {
  const ready = findCondition(status.conditions, "Ready");
  if (!ready || ready.status === "True") return undefined;
  return Math.max(0, now - Math.min(Date.parse(ready.lastTransitionTime), since));
}

function childrenOf(deps: ReconcilerDeps, webapp: WebApp): [Child, Cache<KubeObject>][] {
  return [
    [{ kind: "Deployment", rt: DEPLOYMENT_RESOURCE, desired: desiredDeployment(webapp) }, deps.deployments],
    [{ kind: "Service", rt: SERVICE_RESOURCE, desired: desiredService(webapp) }, deps.services],
  ];
}

/** Degraded/InvalidSpec naming the field; the children this WebApp still controls are reported on as they are. */
async function reportInvalid(
  deps: ReconcilerDeps,
  req: Request,
  webapp: WebAppObject,
  issues: readonly Issue[],
  signal: AbortSignal,
): Promise<Outcome> {
  const { name, namespace } = webapp.metadata as { name: string; namespace: string };
  deps.logger.debug(`WebApp ${namespace}/${name} has an invalid spec: ${formatIssues(issues).replaceAll("\n", "; ")}`);
  const own = (o: KubeObject | undefined) => (o && isControlledBy(o, webapp) ? o : undefined);
  const dep = own(deps.deployments.get(`${namespace}/${deploymentName(name)}`));
  const svc = own(deps.services.get(`${namespace}/${serviceName(name)}`));
  await writeStatus(deps, req, webapp, computeStatus(webapp, dep, svc, [], deps.clock.now()), signal);
  return done();
}

/** The API server still has this WebApp: same uid, not being deleted. One GET, before an adoption or a re-creation. */
async function stillExists(client: KubeClient, webapp: WebAppObject, signal: AbortSignal): Promise<boolean> {
  const { name, namespace, uid } = webapp.metadata;
  try {
    const live = await client.get<KubeObject>(WEBAPP_RESOURCE, name as string, namespace, signal);
    return live.metadata.uid === uid && !live.metadata.deletionTimestamp;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
