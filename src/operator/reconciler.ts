/**
 * The WebApp reconciler, in sample-controller's order: read the WebApp from the cache, validate its spec,
 * converge the Deployment then the Service (converge.ts), write the status last and only when it changed.
 *
 * Properties: level-based and stateless between calls; unchanged objects cost zero writes; a child that
 * cannot be written is reported in the status before the error goes to the controller to retry with
 * backoff; someone else's object is never touched, and looked at again after RECHECK_MS.
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
import { deploymentName, desiredDeployment, desiredService, serviceName } from "./desired.ts";
import { type Child, type ConvergeContext, convergeChild, FIELD_MANAGER } from "./converge.ts";
import { isControlledBy } from "./diff.ts";
import { computeStatus, statusEqual, type Problem } from "./status.ts";

export { FIELD_MANAGER, REASON } from "./converge.ts";
/** How soon a WebApp blocked by someone else's object looks again (that object is not watched). */
export const RECHECK_MS = 60_000;

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
  const status = computeStatus(webapp, live.Deployment, live.Service, problems, deps.clock.now());
  await writeStatus(deps, webapp, status, signal);
  if (failure) throw failure;
  return problems.length > 0 ? requeueAfter(RECHECK_MS) : done();
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
  if (after?.status === "True" && (before?.status !== "True" || before.message !== after.message)) {
    deps.recorder.event(webapp, "Warning", after.reason, after.message);
    deps.logger.warn(`WebApp ${namespace}/${name} is degraded: ${after.message}`);
  }
}

const keyOf = (o: KubeObject) => `${o.metadata.namespace}/${o.metadata.name}`;
