/**
 * The WebApp reconciler, in sample-controller's order: read the WebApp from the cache, validate its spec,
 * converge its children (children.ts: the Deployment, the Service, a PodDisruptionBudget from 2 replicas, an Ingress
 * for spec.expose), write the status last and only when it changed.
 *
 * Properties: level-based; unchanged objects cost zero requests; a new WebApp costs two passes of one round trip
 * each: the first creates its Deployment and asks for a pass at LATER priority (child-priority.ts), which creates
 * its Service behind the passes events queued (children.ts has why, and what the passes remember between calls:
 * the children written, the owner check); the pass after that writes its first status, and the status is written
 * again as it changes (Ready). A field admission stored otherwise on our own write is not drift (admission.ts): its
 * record travels in the status, so no restart or new leader writes it again.
 * A child that cannot be written is reported in the status before the error goes to the controller to retry with
 * backoff; someone else's object is never touched, and looked at again after RECHECK_MS; a WebApp that is not
 * Ready is looked at again until it is, and after POD_CHECK_AFTER_MS its pods are read (never cached) to report
 * why they do not run, then on every pass while a pod failure is reported; all of this only while its Deployment
 * reports pods (its first pod is an event). A pass that had only the memory of a child it wrote, the cache showing
 * nothing, is run again by the time that memory expires (WRITTEN_TTL_MS).
 * The status is written by status-write.ts: not when already stale (a newer pass is queued), nor by a pass that
 * wrote a child with nothing wrong (it asks for a pass at IN_TURN priority, which reads what the write came back
 * as and writes that), unless it turns Ready or Stalled True. Its echo (the update event carrying it back) runs a
 * pass like any event: it finds the status equal and writes nothing.
 * A revision that failed is rolled back (rollback.ts, decided from the spec, the stored status and the clock): the
 * children are converged from the spec with the last Ready revision's image, and the status says RolledBack.
 * Remembers between calls only what expectations.ts keeps: the children it wrote, and a record per WebApp.
 */
import type { WebApp, WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { formatIssues, type Issue, parseWebApp } from "../api/parse.ts";
import { findCondition } from "../api/conditions.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { done, requeue, requeueAfter, type Outcome, type Reconciler, type Request } from "../runtime/reconcile.ts";
import { readDeployment } from "../readiness/deployment.ts";
import { isPodFailureReason } from "../readiness/pods.ts";
import { CHILD_KINDS, type ChildKindName, type PerKind } from "./child-kinds.ts";
import { IN_TURN, LATER } from "./child-priority.ts";
import type { SourceEvent } from "../runtime/source.ts";
import { type AdmittedField, sameAdmitted } from "./admission.ts";
import { type Cache, convergeChildren, type Observed } from "./children.ts";
import { WebAppMemory, WRITTEN_TTL_MS, WrittenChildren } from "./expectations.ts";
import { isControlledBy } from "./diff.ts";
import { podFailures } from "./pod-failures.ts";
import { ingressName } from "./desired.ts";
import type { StatusReported } from "./webapp-metrics.ts";
import { type RollbackVerdict, rollbackProblem, rollbackVerdict, rolledBackTo } from "./rollback.ts";
import { computeStatus, type LiveChildren, type Problem, podProblems } from "./status.ts";
import { writeStatus } from "./status-write.ts";
import { unservedProblems } from "./served.ts";

export { FIELD_MANAGER, REASON } from "./converge.ts";
/** How soon a WebApp blocked by someone else's object looks again (that object is not watched). */
export const RECHECK_MS = 60_000;
/** How long a WebApp may be not Ready before its pods are read (most rollouts finish sooner: no read at all). */
export const POD_CHECK_AFTER_MS = 10_000;
/** While a WebApp is not Ready, how soon it looks again (pods are not watched; a failure shows within ~25 s). */
export const NOT_READY_RECHECK_MS = 15_000;

export type { Cache } from "./children.ts";

export interface ReconcilerDeps {
  client: KubeClient;
  webapps: Cache<WebAppObject>;
  /** Every child of its kind, by "namespace/name" (child-kinds.ts). */
  children: PerKind<Cache<KubeObject>>;
  /** The cluster's IngressClasses, by name: spec.expose.ingressClassName must name one. */
  ingressClasses: Cache<KubeObject>;
  /** The optional kinds of child the cluster does not serve (served.ts); none when left out. */
  unserved?: ReadonlySet<ChildKindName>;
  recorder: EventRecorder;
  /** Stamped into statuses and compared with their stamps; in the operator, the API server's (runtime/server-time.ts). */
  clock: Clock;
  logger: Logger;
  /** Roll back failed revisions of WebApps that do not say (spec.rollout.autoRollback); default false. */
  autoRollback?: boolean;
  /** Told of each status written, with the WebApp as it was before (the rollout metrics: webapp-metrics.ts). */
  reported?: StatusReported;
}

/** The reconciler's two memories (expectations.ts): the children it wrote, and a record per WebApp. */
interface Memory {
  written: WrittenChildren;
  /** Besides the children's fields (children.ts): statusLeftAt, and the admission records not in the status yet. */
  webapps: WebAppMemory;
}

/** The reconciler, and where the watch tells it of every child event (WrittenChildren.observed). */
export interface WebAppReconciler extends Reconciler {
  observeChild(e: SourceEvent<KubeObject>): void;
}

export function createWebAppReconciler(deps: ReconcilerDeps): WebAppReconciler {
  const memory: Memory = { written: new WrittenChildren(deps.clock), webapps: new WebAppMemory(deps.clock) };
  const reconciler = (req: Request, signal: AbortSignal) => reconcile(deps, memory, req, signal);
  return Object.assign(reconciler, {
    observeChild: (e: SourceEvent<KubeObject>) => memory.written.observed(e.object, e.type === "delete"),
  });
}

/** The admission records of a WebApp: this process's newest, else what its cached status carries. */
function admittedOf(memory: Memory, webapp: WebAppObject): AdmittedField[] {
  const uid = webapp.metadata.uid;
  const stored = webapp.status?.admitted ?? [];
  const mine = memory.webapps.get(uid).admitted;
  if (mine === undefined) return stored;
  if (sameAdmitted(mine, stored)) memory.webapps.set(uid, { admitted: undefined });
  return mine;
}

async function reconcile(deps: ReconcilerDeps, memory: Memory, req: Request, signal: AbortSignal): Promise<Outcome> {
  const webapp = deps.webapps.get(req.key);
  if (!webapp || webapp.metadata.deletionTimestamp) return done(); // gone: the garbage collector removes children
  const parsed = parseWebApp(webapp);
  // Invalid: reported, no retry (a fix is an update event, which reconciles again).
  if (!parsed.ok) return reportInvalid(deps, req, webapp, parsed.issues, signal);

  const reconciledBefore = (webapp.status?.conditions?.length ?? 0) > 0; // every status we write has conditions
  const admitted = admittedOf(memory, webapp);
  // A failed revision rolled back (rollback.ts): the children are the spec's, with the last Ready revision's image.
  const rollback = rollbackVerdict(parsed.webapp, deps.autoRollback ?? false, deps.clock.now());
  const target = rollback.kind === "rollBack" ? rolledBackTo(parsed.webapp, rollback.to) : parsed.webapp;
  const observed = await convergeChildren(deps, memory, target, reconciledBefore, admitted, signal);
  if (observed.kind === "ownerGone") {
    // Its delete (or the new incarnation) reaches the cache as an event, which reconciles it again.
    deps.logger.debug(`WebApp ${req.key} is cached but gone from the API server: not creating its children`);
    return done();
  }
  const uid = webapp.metadata.uid;
  if (!sameAdmitted(observed.admitted, admitted)) memory.webapps.set(uid, { admitted: observed.admitted });
  if (observed.kind === "othersLater") return requeue(LATER); // the Service's pass follows at once when idle
  const settled = await settle(deps, memory, req, webapp, target, observed, signal, rollback);
  // A failure not confirmed yet is looked at again when it would be.
  const outcome = rollback.kind === "waiting" ? atMost(settled, rollback.ms) : settled;
  // A child seen only in what we wrote (the cache shows nothing): looked at again by the time that memory expires.
  return observed.unseen ? atMost(outcome, WRITTEN_TTL_MS) : outcome;
}

/** The outcome, or a look again after `ms` where it would look later (or not at all). */
function atMost(outcome: Outcome, ms: number): Outcome {
  const sooner = outcome.kind === "requeue" || (outcome.kind === "requeueAfter" && outcome.ms <= ms);
  return sooner ? outcome : requeueAfter(ms);
}

/** The status of a WebApp whose children were converged, written, and when to look again. */
async function settle(
  deps: ReconcilerDeps,
  memory: Memory,
  req: Request,
  webapp: WebAppObject,
  parsed: WebApp,
  observed: Extract<Observed, { kind: "observed" }>,
  signal: AbortSignal,
  rollback: RollbackVerdict,
): Promise<Outcome> {
  const { live, failure } = observed;
  const problems = [
    ...observed.problems,
    ...ingressClassProblems(deps, parsed),
    ...unservedProblems(parsed, deps.unserved ?? new Set()),
  ];
  const now = deps.clock.now();
  const seen = { pending: observed.pending, admitted: observed.admitted, rollback };
  let status = computeStatus(webapp, live, problems, now, seen);
  // Rolled back, reported, and running the last Ready revision: settled until the spec changes (Ready stays False by
  // design), so neither the pods are read nor is it looked at again on a timer; the Deployment's events still are.
  const settledBack =
    rollback.kind === "rollBack" && !rollback.first && findCondition(status.conditions, "Available")?.status === "True";
  // A Deployment that reports no pods has none to read: the first pod it gets changes its status.replicas, an event
  // that runs a pass, so neither the pods are read nor is it looked at again on a timer until then. (A quota or an
  // admission policy that refuses every pod keeps it so: before this, each such WebApp listed 0 pods every 15 s.)
  const hasPods = live.Deployment !== undefined && readDeployment(live.Deployment).replicas > 0;
  const notReady = hasPods && !settledBack ? notReadyFor(status, now) : undefined;
  // A reported pod failure is checked on every pass until the pods show it is over: a crash-looping container
  // makes the Deployment available for an instant at each restart, which must not clear it (nor restart the wait).
  const wantPods =
    hasPods && (podFailureReported(webapp.status) || (notReady !== undefined && notReady >= POD_CHECK_AFTER_MS));
  // A pass that wrote a child with nothing wrong leaves its status to a pass that reads what the write came back
  // as (status-write.ts), queued at the back: in a burst the children's writes go first. Once: should that pass
  // write a child again (someone else's controller fights ours), it writes the status, and no pass follows at once.
  const uid = webapp.metadata.uid;
  const leave = observed.wrote && problems.length === 0 && failure === undefined && !memory.webapps.statusLeft(uid);
  // Superseded stays true for the rest of this pass: its status is not written, so the pods need not be read.
  if (wantPods && !req.superseded() && !leave) {
    const failures = await podFailures(deps, parsed, now, signal);
    if (failures.length > 0) status = computeStatus(webapp, live, [...problems, ...podProblems(failures)], now, seen);
  }
  // A child the status counts went from the cache while this pass ran (its deletion queued the pass that reports
  // it): this status would claim what is no longer true, so it is not written.
  if (failure === undefined && !stillCached(deps, live)) return requeue(IN_TURN);
  const written = await writeStatus(deps, req, webapp, status, signal, leave);
  memory.webapps.set(uid, { statusLeftAt: leave && written === "left" ? deps.clock.now() : undefined });
  if (written === "written") deps.reported?.(webapp, status);
  if (written === "written" && rollback.kind === "rollBack" && rollback.first) {
    // Once per rollback: its first report (the stored status has no rolledBackAt until then).
    const { reason, message } = rollbackProblem(rollback);
    deps.recorder.event(webapp, "Warning", reason, message);
    deps.logger.warn(`WebApp ${req.key}: ${message}`);
  }
  if (failure) throw failure;
  if (written === "left" && !req.superseded()) return requeue(IN_TURN);
  if (problems.length > 0) return requeueAfter(RECHECK_MS);
  if (wantPods) return requeueAfter(NOT_READY_RECHECK_MS);
  if (notReady === undefined) return done();
  return requeueAfter(POD_CHECK_AFTER_MS - notReady);
}

/**
 * spec.expose.ingressClassName names an IngressClass the cluster does not have: the Ingress is written, but no
 * controller will ever give it an address. Looked at again after RECHECK_MS (IngressClasses are cached, not mapped).
 */
function ingressClassProblems(deps: ReconcilerDeps, webapp: WebApp): Problem[] {
  const name = webapp.spec.expose?.ingressClassName;
  if (name === undefined || deps.ingressClasses.get(name)) return [];
  return [
    {
      reason: "IngressClassNotFound",
      message:
        `IngressClass ${name} (spec.expose.ingressClassName) does not exist: no Ingress controller will serve ` +
        `Ingress ${ingressName(webapp.metadata.name)}; pick one of kubectl get ingressclasses, or leave the field ` +
        "out for the cluster's default",
    },
  ];
}

/** Every child in `live` is still in its cache, the same object (uid) as this pass used. */
function stillCached(deps: ReconcilerDeps, live: Extract<Observed, { kind: "observed" }>["live"]): boolean {
  return Object.entries(live).every(([kind, obj]) => {
    const { namespace, name, uid } = obj.metadata;
    return deps.children[kind as ChildKindName].get(`${namespace}/${name}`)?.metadata.uid === uid;
  });
}

/** The stored status says Stalled because of a pod (readiness/pods.ts). */
function podFailureReported(status: WebAppStatus | undefined): boolean {
  const stalled = findCondition(status?.conditions, "Stalled");
  return stalled?.status === "True" && isPodFailureReason(stalled.reason);
}

/**
 * How long the computed status has had Ready=False (kept across reconciles by its lastTransitionTime); undefined when
 * Ready. A lastTransitionTime after `now` (or none that parses) was written by a clock ahead of this one: a previous
 * leader's on a node whose clock is ahead (by up to the second server-time.ts leaves, or by any skew when that
 * leader's devctl predates it). How long is then unknown, and the wait for the pods is taken as over, so
 * that the skew does not delay their diagnosis (one pods LIST sooner at most).
 */
function notReadyFor(status: WebAppStatus, now: number): number | undefined {
  const ready = findCondition(status.conditions, "Ready");
  if (!ready || ready.status === "True") return undefined;
  const since = Date.parse(ready.lastTransitionTime);
  return since <= now ? now - since : POD_CHECK_AFTER_MS;
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
  const live: LiveChildren = {}; // the children this WebApp still controls
  for (const k of CHILD_KINDS) {
    const child = deps.children[k.kind].get(`${namespace}/${k.name(name)}`);
    if (child && isControlledBy(child, webapp)) live[k.kind] = child;
  }
  await writeStatus(deps, req, webapp, computeStatus(webapp, live, [], deps.clock.now()), signal);
  return done();
}
