/**
 * Computes a WebApp's status from what the reconciler observed. Pure.
 *
 * Properties:
 * - Level-based: the result depends only on the inputs, never on how the reconciler got there.
 * - Conditions, always in this order: the kstatus ones (readiness/kstatus.ts), then the Deployment-style three.
 *   Ready:       True iff Available and nothing is in progress or failing.
 *   Reconciling: present (True) while the operator works towards the spec: creating children, a rollout in
 *                progress, a write failed and is retried, a probe keeps a running pod unready (ProbeFailed);
 *                absent otherwise.
 *   Stalled:     present (True) when it cannot progress without someone acting: InvalidSpec, ResourceExists,
 *                Forbidden, ProgressDeadlineExceeded, ReplicaFailure, a pod failure other than ProbeFailed
 *                (podProblems(), readiness/pods.ts); absent otherwise. Never there together with Reconciling.
 *   Available:   True iff the Deployment reports Available (its minimum replicas are up) and every other child the
 *                spec wants exists (child-kinds.ts: a PodDisruptionBudget only from 2 replicas). With
 *                spec.autoscaling, the replicas it counts are the Deployment's, as the autoscaler set them: a WebApp
 *                at its autoscaler's maximum is as Ready as any (status.autoscaling has the autoscaler's counts).
 *   Progressing: True while a rollout or scale is under way; False when complete, blocked or past its deadline.
 *   Degraded:    True iff Stalled is, or a write failed.
 *   Each has a reason and a message that says what to do; Ready's reason is the cause when it is False.
 * - Stable: a condition keeps its lastTransitionTime while its status is unchanged, so recomputing an
 *   unchanged state gives a status statusEqual() to the stored one, and no write is needed. A stored False
 *   Reconciling or Stalled (what devctl wrote before they became abnormal-true) equals its absence, so an
 *   upgrade rewrites no status by itself; the next write for another reason drops them.
 * - An invalid spec is detected here (InvalidSpec, naming the field); the reconciler need not pass it.
 * - Counts come from the Deployment's status (0 without one); observedGeneration (top level and on every
 *   condition) is metadata.generation, as kstatus requires.
 * - What is observed, not what is compared: the Deployment passed in is the one our last write returned, or newer
 *   (the reconciler's), so its rollout is what `kubectl rollout status` says of it (its observedGeneration reaching
 *   its generation), never a comparison of its fields with the spec, which admission may have rewritten.
 * - A child the cache has not shown yet (`pending`: just created, or only remembered) is reported as being
 *   created, never as existing. The admission records (admission.ts) are carried in `admitted`.
 * - The rollout history (status.rollouts, lastReadyRevision) follows this status: history.ts. A pass that runs the last
 *   Ready revision instead of the spec's (rollback.ts) is Stalled RolledBack, naming both revisions.
 */
import { conditionsEqual, formatTime, withTransitionTimes, type ConditionState } from "../api/conditions.ts";
import { type AdmittedField, sameAdmitted } from "./admission.ts";
import { formatIssues, parseWebAppSpec } from "../api/parse.ts";
import {
  type Autoscaling,
  type Condition,
  DEFAULT_MIN_REPLICAS,
  fixedReplicas,
  type WebAppObject,
  type WebAppStatus,
} from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { type DeploymentView, type RolloutState, readDeployment, rolloutState } from "../readiness/deployment.ts";
import { ABNORMAL_TRUE, kstatusConditions, type Progress } from "../readiness/kstatus.ts";
import { POD_FAILURE_REASONS, type PodFailure, type PodFailureReason, podFailureHint } from "../readiness/pods.ts";
import { CHILD_KINDS, type ChildKind, type ChildKindName, DEPLOYMENT_KIND, isWanted } from "./child-kinds.ts";
import { controllerOf } from "./diff.ts";
import { deploymentName, webAppSelector } from "./desired.ts";
import { nextHistory, revisionOf } from "./history.ts";
import { type RollbackVerdict, rollbackProblem } from "./rollback.ts";
import { type Expose, exposeUrl } from "../api/expose.ts";

/**
 * Why a WebApp does not converge; every one but ApplyFailed (retried with backoff) and ProbeFailed (a probe that may
 * pass yet) needs someone to act.
 */
export type ProblemReason =
  | "InvalidSpec"
  | "ResourceExists"
  | "ApplyFailed"
  | "Forbidden"
  | "ProgressDeadlineExceeded"
  | "ReplicaFailure"
  | "IngressClassNotFound"
  | "KindNotServed"
  | "RolledBack"
  | "RollbackNotPossible"
  | PodFailureReason;
const STALLS: Record<ProblemReason, boolean> = {
  ...(Object.fromEntries(POD_FAILURE_REASONS.map((r) => [r, true])) as Record<PodFailureReason, true>),
  ProbeFailed: false, // it may pass yet (a slow start); the Deployment's progress deadline stalls it if not
  InvalidSpec: true,
  ResourceExists: true,
  Forbidden: true,
  ProgressDeadlineExceeded: true,
  ReplicaFailure: true,
  IngressClassNotFound: true,
  KindNotServed: true,
  RolledBack: true, // until the spec changes: someone must fix it
  RollbackNotPossible: true,
  ApplyFailed: false,
};
/** Something that keeps the WebApp from converging; becomes the Degraded (and maybe Stalled) condition. */
export interface Problem {
  reason: ProblemReason;
  /** A sentence for the user that says what to fix. */
  message: string;
}

/** The problem for an object with our name that this WebApp does not control. */
export function resourceExistsProblem(kind: ChildKindName, obj: KubeObject): Problem {
  const owner = controllerOf(obj);
  const { name, namespace } = obj.metadata;
  const ownedBy = owner ? ` (it is controlled by ${owner.kind} ${owner.name})` : "";
  return {
    reason: "ResourceExists",
    message:
      `${kind} ${name} exists and is not controlled by this WebApp${ownedBy}; ` +
      `delete it (kubectl delete ${kind.toLowerCase()} ${name} -n ${namespace}) or give the WebApp another name`,
  };
}

/** One problem per kind of pod failure, naming the first pod (by name) and how many more, and what to do. */
export function podProblems(failures: readonly PodFailure[]): Problem[] {
  const sorted = [...failures].sort((a, b) => a.pod.localeCompare(b.pod));
  return POD_FAILURE_REASONS.flatMap((reason) => {
    const these = sorted.filter((f) => f.reason === reason);
    const first = these[0];
    if (!first) return [];
    const more = these.length > 1 ? ` (and ${these.length - 1} more pods)` : "";
    return [{ reason, message: `pod ${first.pod}${more}: ${first.message}; ${podFailureHint(reason, first.message)}` }];
  });
}

/** The children of a WebApp the cache has shown, by kind (child-kinds.ts). */
export type LiveChildren = Partial<Record<ChildKindName, KubeObject>>;

/** What the reconciler saw besides the children: those not in the cache yet, and the admission records. */
export interface Seen {
  pending?: readonly ChildKindName[];
  /** Default: what the stored status carries. */
  admitted?: readonly AdmittedField[];
  /** Whether this pass runs the last Ready revision instead of the spec's (rollback.ts); default none. */
  rollback?: RollbackVerdict;
}

export function computeStatus(
  webapp: WebAppObject,
  live: LiveChildren,
  problems: readonly Problem[],
  now: number,
  seen: Seen = {},
): WebAppStatus {
  const name = webapp.metadata.name ?? "";
  const parsed = parseWebAppSpec(webapp);
  const dep = live.Deployment ? readDeployment(live.Deployment) : undefined;
  const spec = parsed.ok ? parsed.spec : undefined;
  const pending = seen.pending ?? [];
  const admitted = seen.admitted ?? webapp.status?.admitted ?? [];
  // Autoscaled: what the Deployment runs now, as the HorizontalPodAutoscaler set it.
  const desiredReplicas = (spec && fixedReplicas(spec)) ?? dep?.specReplicas ?? 0;
  const found: Problem[] = [...problems];
  if (!parsed.ok && !problems.some((p) => p.reason === "InvalidSpec")) {
    const issues = formatIssues(parsed.issues).replaceAll("\n", "; ");
    const edit = `kubectl edit webapp ${name} -n ${webapp.metadata.namespace}`;
    const message = `the spec is invalid: ${issues}; fix it (${edit})`;
    found.unshift({ reason: "InvalidSpec", message });
  }
  const rollout = dep && rolloutState(dep);
  if (dep && rollout) found.push(...deploymentProblems(name, dep, rollout));
  const rollback = seen.rollback;
  // A rollback is the reason first (it is what happened); a rollback that cannot be done follows the failure.
  if (rollback?.kind === "rollBack") found.unshift(rollbackProblem(rollback));
  if (rollback?.kind === "cannot") found.push(rollbackProblem(rollback));

  // The kinds this WebApp has; with an invalid spec, the optional ones it still controls.
  const kinds = CHILD_KINDS.filter((k) => (spec ? isWanted(k, spec) : !k.wanted || live[k.kind] !== undefined));
  const address = spec?.expose && live.Ingress ? exposedAt(spec.expose, live.Ingress) : undefined;
  const autoscaled = spec?.autoscaling ? autoscaledMessage(spec.autoscaling, live.HorizontalPodAutoscaler) : undefined;
  const notes = [autoscaled, address?.message].filter((n) => n !== undefined).join("; ") || undefined;
  const available = availableCondition(name, dep, live, desiredReplicas, pending, kinds, notes);
  const autoscaler =
    spec?.autoscaling && live.HorizontalPodAutoscaler ? autoscalerStatus(live.HorizontalPodAutoscaler) : undefined;
  const progressing: ConditionState = rollout
    ? cond(
        "Progressing",
        rollout.kind === "progressing",
        rollout.kind === "progressing" ? "RollingOut" : rollout.reason,
        rollout.message,
      )
    : found.length > 0 && !pending.includes("Deployment")
      ? cond("Progressing", false, "Blocked", "cannot create the Deployment; see the Stalled or Degraded condition")
      : cond("Progressing", true, "RollingOut", `creating Deployment ${deploymentName(name)}`);
  const first = found[0];
  const degraded = first
    ? cond("Degraded", true, first.reason, found.map((d) => d.message).join("; "))
    : cond("Degraded", false, "AsExpected", "no problems found");
  const progress = progressOf(found, available, progressing);
  const conditions = [...kstatusConditions(progress), available, progressing, degraded];
  const rolledOut =
    spec && (live.Deployment || pending.includes("Deployment")) ? revisionOf({ ...webapp, spec }) : undefined;
  const history = nextHistory(webapp.status, rolledOut, progress, formatTime(now), rollback?.kind === "rollBack");

  const generation = webapp.metadata.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    replicas: dep?.replicas ?? 0,
    readyReplicas: dep?.readyReplicas ?? 0,
    availableReplicas: dep?.availableReplicas ?? 0,
    selector: webAppSelector(name),
    ...(autoscaler ? { autoscaling: autoscaler } : {}),
    ...(address?.url ? { url: address.url } : {}),
    conditions: withTransitionTimes(conditions, webapp.status?.conditions, now, generation),
    ...history,
    ...(admitted.length > 0 ? { admitted: [...admitted] } : {}),
  };
}

/** Stalled on anything that needs someone to act; else reconciling while not available or in progress; else ready. */
function progressOf(found: readonly Problem[], available: ConditionState, progressing: ConditionState): Progress {
  const stalls = found.filter((p) => STALLS[p.reason]);
  const stall = stalls[0];
  if (stall) return { kind: "stalled", reason: stall.reason, message: stalls.map((p) => p.message).join("; ") };
  const retry = found[0];
  if (retry) {
    const message = retry.reason === "ApplyFailed" ? `${retry.message}; retrying with backoff` : retry.message;
    return { kind: "reconciling", reason: retry.reason, message };
  }
  if (progressing.status === "True")
    return { kind: "reconciling", reason: progressing.reason, message: progressing.message };
  if (available.status !== "True") return { kind: "reconciling", reason: available.reason, message: available.message };
  return { kind: "ready", reason: "Available", message: available.message };
}

/**
 * Available is the workload's (the Deployment's rollout) once every child exists; a child the cache has not shown
 * is reported as being created when it is pending, else as missing, the workload first.
 */
function availableCondition(
  name: string,
  dep: DeploymentView | undefined,
  live: LiveChildren,
  desired: number,
  pending: readonly ChildKindName[],
  kinds: readonly ChildKind[],
  address?: string,
): ConditionState {
  const ready = `${dep?.readyReplicas ?? 0}/${desired} replicas are ready`;
  for (const k of kinds) {
    if (live[k.kind]) continue;
    const what = `${k.kind} ${k.name(name)}`;
    const counts = k === DEPLOYMENT_KIND ? "" : `; ${ready}`;
    return pending.includes(k.kind)
      ? cond("Available", false, `${k.kind}Creating`, `creating ${what}${counts}`)
      : cond("Available", false, `${k.kind}NotFound`, `${what} controlled by this WebApp does not exist${counts}`);
  }
  const said = address ? `${ready}; ${address}` : ready;
  return dep && (dep.available ?? dep.availableReplicas >= desired)
    ? cond("Available", true, "DeploymentAvailable", said)
    : cond("Available", false, "DeploymentUnavailable", said);
}

/**
 * "autoscaled between 2 and 10 pods", what the Available message adds for spec.autoscaling; and, while the autoscaler
 * says it cannot scale on its metrics (its ScalingActive condition False: no metrics API, a pod without a request),
 * its reason and words. That is no reason to be unready: the pods serve, the autoscaler still keeps minReplicas.
 */
function autoscaledMessage(a: Autoscaling, hpa: KubeObject | undefined): string {
  const range = `autoscaled between ${a.minReplicas ?? DEFAULT_MIN_REPLICAS} and ${a.maxReplicas} pods`;
  const conditions = (
    hpa?.status as { conditions?: { type?: string; status?: string; reason?: string; message?: string }[] }
  )?.conditions;
  const inactive = conditions?.find((c) => c.type === "ScalingActive" && c.status === "False");
  if (!inactive) return range;
  return `${range}, but the autoscaler is not scaling on metrics (${inactive.reason}: ${inactive.message})`;
}

/** status.autoscaling: the counts the HorizontalPodAutoscaler reports (none before its first sync). */
function autoscalerStatus(hpa: KubeObject): NonNullable<WebAppStatus["autoscaling"]> | undefined {
  const { currentReplicas, desiredReplicas } = (hpa.status ?? {}) as {
    currentReplicas?: unknown;
    desiredReplicas?: unknown;
  };
  const count = (n: unknown) => (typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : undefined);
  const [current, desired] = [count(currentReplicas), count(desiredReplicas)];
  if (current === undefined && desired === undefined) return undefined;
  return {
    ...(current !== undefined ? { currentReplicas: current } : {}),
    ...(desired !== undefined ? { desiredReplicas: desired } : {}),
  };
}

/**
 * What the WebApp's Ingress says of its address: status.url once the Ingress controller gave it one (an IP or a host
 * name in status.loadBalancer), and a message either way. No address is no reason to be unready: the pods serve
 * inside the cluster, and a cluster may have no Ingress controller at all.
 */
function exposedAt(expose: Expose, ingress: KubeObject): { url?: string; message: string } {
  const balancers = (ingress.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } })
    ?.loadBalancer?.ingress;
  const url = balancers?.some((b) => b.ip || b.hostname) ? exposeUrl(expose) : undefined;
  const name = ingress.metadata.name;
  return url
    ? { url, message: `serving at ${url}` }
    : { message: `Ingress ${name} has no address yet (is an Ingress controller running for its class?)` };
}

/** What the Deployment itself reports as stuck: its progress deadline passed, or it cannot create pods. */
function deploymentProblems(name: string, dep: DeploymentView, rollout: RolloutState): Problem[] {
  const problems: Problem[] = [];
  if (rollout.kind === "failed") {
    problems.push({
      reason: "ProgressDeadlineExceeded",
      message:
        `Deployment ${deploymentName(name)} made no progress within its deadline (${dep.progressDeadlineExceeded}); ` +
        `check the pods with: kubectl describe pods -l ${webAppSelector(name)}`,
    });
  }
  if (dep.replicaFailure !== undefined) {
    problems.push({
      reason: "ReplicaFailure",
      message: `Deployment ${deploymentName(name)} cannot create pods: ${dep.replicaFailure}`,
    });
  }
  return problems;
}

/** True iff writing `next` over `current` would change nothing a user can see. */
export function statusEqual(current: WebAppStatus | undefined, next: WebAppStatus | undefined): boolean {
  const a = current ?? {};
  const b = next ?? {};
  return (
    a.observedGeneration === b.observedGeneration &&
    a.replicas === b.replicas &&
    a.readyReplicas === b.readyReplicas &&
    a.availableReplicas === b.availableReplicas &&
    a.selector === b.selector &&
    a.autoscaling?.currentReplicas === b.autoscaling?.currentReplicas &&
    a.autoscaling?.desiredReplicas === b.autoscaling?.desiredReplicas &&
    a.url === b.url &&
    a.lastReadyRevision === b.lastReadyRevision &&
    JSON.stringify(a.rollouts ?? []) === JSON.stringify(b.rollouts ?? []) &&
    sameAdmitted(a.admitted, b.admitted) &&
    conditionsEqual(withoutFalseAbnormal(a.conditions), withoutFalseAbnormal(b.conditions))
  );
}

function withoutFalseAbnormal(conditions: readonly Condition[] | undefined): Condition[] | undefined {
  return conditions?.filter((c) => !(c.status === "False" && ABNORMAL_TRUE.includes(c.type)));
}

function cond(type: string, on: boolean, reason: string, message: string): ConditionState {
  return { type, status: on ? "True" : "False", reason, message };
}
