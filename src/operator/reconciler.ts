/**
 * The WebApp reconciler, in sample-controller's order: read the WebApp from the cache, validate its spec,
 * converge the Deployment then the Service (converge.ts), write the status last and only when it changed.
 *
 * Properties: level-based and stateless between calls; unchanged objects cost zero writes; a child that
 * cannot be written is reported in the status before the error goes to the controller to retry with
 * backoff; someone else's object is never touched, and looked at again after RECHECK_MS; a WebApp that is
 * not Ready is looked at again until it is, and after POD_CHECK_AFTER_MS its pods are read (never cached)
 * to report why they do not run, then on every pass while a pod failure is reported.
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
import { PODS } from "../kube/resources.ts";
import { POD_FAILURE_REASONS, type PodFailure, podFailure } from "../readiness/pods.ts";
import { deploymentName, desiredDeployment, desiredService, serviceName, webAppSelector } from "./desired.ts";
import { type Child, type ConvergeContext, convergeChild, FIELD_MANAGER } from "./converge.ts";
import { isControlledBy } from "./diff.ts";
import { computeStatus, podProblems, statusEqual, type Problem } from "./status.ts";

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
}

export function createWebAppReconciler(deps: ReconcilerDeps): Reconciler {
  return (req, signal) => reconcile(deps, req, signal);
}

async function reconcile(deps: ReconcilerDeps, req: Request, signal: AbortSignal): Promise<Outcome> {
  const webapp = deps.webapps.get(req.key);
  if (!webapp || webapp.metadata.deletionTimestamp) return done(); // gone: the garbage collector removes children
  const parsed = parseWebApp(webapp);
  // Invalid: reported, no retry (a fix is an update event, which reconciles again).
  if (!parsed.ok) return reportInvalid(deps, webapp, parsed.issues, signal);

  let ownerCheck: Promise<boolean> | undefined;
  const ctx: ConvergeContext = {
    ...deps,
    webapp: parsed.webapp,
    ownerExists: () => (ownerCheck ??= stillExists(deps.client, webapp, signal)),
    signal,
  };
  const live: Partial<Record<Child["kind"], KubeObject>> = {};
  const problems: Problem[] = [];
  let failure: unknown;
  for (const [child, cache] of childrenOf(deps, parsed.webapp)) {
    const outcome = await convergeChild(ctx, child, cache.get(keyOf(child.desired)));
    switch (outcome.kind) {
      case "converged":
        live[child.kind] = outcome.live;
        break;
      case "blocked":
        problems.push(outcome.problem);
        break;
      case "failed":
        problems.push(outcome.problem);
        failure ??= outcome.error;
        break;
      case "ownerGone":
        // Its delete (or the new incarnation) reaches the cache as an event, which reconciles it again.
        deps.logger.debug(`WebApp ${req.key} is cached but gone from the API server: not creating its children`);
        return done();
    }
  }
  const now = deps.clock.now();
  let status = computeStatus(webapp, live.Deployment, live.Service, problems, now);
  const notReady = live.Deployment && notReadyFor(status, now);
  // A reported pod failure is checked on every pass until the pods show it is over: a crash-looping container
  // makes the Deployment available for an instant at each restart, which must not clear it (nor restart the wait).
  const readPods =
    live.Deployment !== undefined &&
    (podFailureReported(webapp.status) || (notReady !== undefined && notReady >= POD_CHECK_AFTER_MS));
  if (readPods) {
    const failures = await podFailures(deps, parsed.webapp, now, signal);
    if (failures.length > 0)
      status = computeStatus(webapp, live.Deployment, live.Service, [...problems, ...podProblems(failures)], now);
  }
  await writeStatus(deps, webapp, status, signal);
  if (failure) throw failure;
  if (problems.length > 0) return requeueAfter(RECHECK_MS);
  if (readPods) return requeueAfter(NOT_READY_RECHECK_MS);
  if (notReady === undefined) return done();
  return requeueAfter(POD_CHECK_AFTER_MS - notReady);
}

/** The stored status says Stalled because of a pod (readiness/pods.ts). */
function podFailureReported(status: WebAppStatus | undefined): boolean {
  const stalled = findCondition(status?.conditions, "Stalled");
  return stalled?.status === "True" && (POD_FAILURE_REASONS as readonly string[]).includes(stalled.reason);
}

/** How long the computed status has had Ready=False (kept across reconciles by its lastTransitionTime); undefined when Ready. */
function notReadyFor(status: WebAppStatus, now: number): number | undefined {
  const ready = findCondition(status.conditions, "Ready");
  if (!ready || ready.status === "True") return undefined;
  return Math.max(0, now - Date.parse(ready.lastTransitionTime));
}

/**
 * The failures of the pods of this WebApp's Deployment (controlled by one of its ReplicaSets), read on demand
 * for a WebApp that is not Ready: no pod is cached. A failed read is logged and reads as no failure.
 */
async function podFailures(
  deps: ReconcilerDeps,
  webapp: WebApp,
  now: number,
  signal: AbortSignal,
): Promise<PodFailure[]> {
  const { name, namespace } = webapp.metadata;
  const prefix = `${deploymentName(name)}-`;
  try {
    const pods = await deps.client.list<KubeObject>(PODS, {
      namespace,
      labelSelector: webAppSelector(name),
      signal,
    });
    return pods.items
      .filter((p) =>
        p.metadata.ownerReferences?.some((r) => r.controller && r.kind === "ReplicaSet" && r.name.startsWith(prefix)),
      )
      .flatMap((p) => podFailure(p, now) ?? []);
  } catch (e) {
    if (signal.aborted) throw e;
    deps.logger.warn(`could not read the pods of WebApp ${namespace}/${name}: ${e instanceof Error ? e.message : e}`);
    return [];
  }
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
  webapp: WebAppObject,
  issues: readonly Issue[],
  signal: AbortSignal,
): Promise<Outcome> {
  const { name, namespace } = webapp.metadata as { name: string; namespace: string };
  deps.logger.debug(`WebApp ${namespace}/${name} has an invalid spec: ${formatIssues(issues).replaceAll("\n", "; ")}`);
  const own = (o: KubeObject | undefined) => (o && isControlledBy(o, webapp) ? o : undefined);
  const dep = own(deps.deployments.get(`${namespace}/${deploymentName(name)}`));
  const svc = own(deps.services.get(`${namespace}/${serviceName(name)}`));
  await writeStatus(deps, webapp, computeStatus(webapp, dep, svc, [], deps.clock.now()), signal);
  return done();
}

/** The API server still has this WebApp: same uid, not being deleted. One GET, only before a create or adoption. */
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

/** A merge patch of the status subresource, only when something a user can see changed; a Warning when it degrades. */
async function writeStatus(
  deps: ReconcilerDeps,
  webapp: WebAppObject,
  status: WebAppStatus,
  signal: AbortSignal,
): Promise<void> {
  if (statusEqual(webapp.status, status)) return;
  const { name, namespace } = webapp.metadata;
  try {
    await deps.client.patch(WEBAPP_RESOURCE, name as string, namespace, { status }, "merge", {
      subresource: "status",
      fieldManager: FIELD_MANAGER,
      signal,
    });
  } catch (e) {
    if (isNotFound(e)) return; // deleted meanwhile: nothing left to report on
    throw e;
  }
  const before = findCondition(webapp.status?.conditions, "Degraded");
  const after = findCondition(status.conditions, "Degraded");
  // One Warning per change of problem; a pod's message changes with every kubelet back-off, its reason does not.
  const podFailure = (POD_FAILURE_REASONS as readonly string[]).includes(after?.reason ?? "");
  const changed = before?.reason !== after?.reason || (!podFailure && before?.message !== after?.message);
  if (after?.status === "True" && (before?.status !== "True" || changed)) {
    deps.recorder.event(webapp, "Warning", after.reason, after.message);
    deps.logger.warn(`WebApp ${namespace}/${name} is degraded: ${after.message}`);
  }
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
