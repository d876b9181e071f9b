/**
 * The kinds of child a WebApp owns, each described once: its resource, its name, its intent (desired.ts), how its
 * Created event describes it, and which of its events go ahead in the queue (child-priority.ts). What handles
 * children goes over CHILD_KINDS: the caches and their shaping and the queue's mapping (manager.ts), the converge
 * loop (children.ts), the write memory's watch (reconciler.ts observeChild), the orphan collector; the install's
 * RBAC and the uninstall go over api's CHILD_RESOURCES, which a test keeps equal to these. A new kind is an entry
 * here (and in CHILD_RESOURCES); what counts as its drift is diff.ts's, for every kind alike.
 *
 * Order matters: the first kind is the workload. A new WebApp's first pass creates it alone (children.ts), and its
 * rollout is what the status reports (status.ts); every other kind counts as present or not.
 * A kind with `wanted` is optional: a WebApp whose spec does not want one has none, and the one it controls is
 * deleted (children.ts); the status counts it only where wanted.
 */
import {
  DEPLOYMENT_RESOURCE,
  DISRUPTION_BUDGET_MIN_REPLICAS,
  fixedReplicas,
  HORIZONTAL_POD_AUTOSCALER_RESOURCE,
  INGRESS_RESOURCE,
  POD_DISRUPTION_BUDGET_RESOURCE,
  SERVICE_RESOURCE,
  type WebApp,
  type WebAppSpec,
} from "../api/webapp.ts";
import { EXPOSE_DEFAULT_PATH } from "../api/expose.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { DEPLOYMENT_STATUS_READ } from "../readiness/deployment.ts";
import type { SourceEvent } from "../runtime/source.ts";
import { keepStatus, type StatusRead } from "./cache-shape.ts";
import { deploymentEventPriority, serviceEventPriority } from "./child-priority.ts";
import {
  deploymentName,
  horizontalPodAutoscalerName,
  desiredDeployment,
  desiredHorizontalPodAutoscaler,
  desiredIngress,
  desiredPodDisruptionBudget,
  desiredService,
  podDisruptionBudgetName,
  SERVICE_PORT,
  serviceName,
  ingressName,
  wantsAutoscaler,
  wantsDisruptionBudget,
  wantsIngress,
} from "./desired.ts";

export type ChildKindName = "Deployment" | "Service" | "PodDisruptionBudget" | "Ingress" | "HorizontalPodAutoscaler";

export interface ChildKind {
  kind: ChildKindName;
  rt: ResourceType;
  /** The child's name for a WebApp of this name. */
  name: (webappName: string) => string;
  /** The server-side-apply intent for this WebApp (desired.ts). */
  desired: (webapp: WebApp) => KubeObject;
  /** What its Created event says after "<Kind> <name> created", e.g. " with 3 replicas of nginx:1.25". */
  describe: (webapp: WebApp) => string;
  /** The queue priority of a pass for one of its events (child-priority.ts). */
  priority: (e: SourceEvent<KubeObject>) => number;
  /** Whether a WebApp of this spec has one; always, when absent. */
  wanted?: (spec: WebAppSpec) => boolean;
  /** Why a spec wants none, for the Deleted event: "fewer than 2 replicas". */
  unwantedBecause?: (spec: WebAppSpec) => string;
  /** What in a spec wants one, for the KindNotServed problem (served.ts): "spec.autoscaling". */
  wantedBy?: string;
  /** The Kubernetes version that serves its API, for the same problem. */
  servedSince?: string;
  /**
   * What of its status the operator reads (status.ts, readiness/), which is all of it the caches keep
   * (cache-shape.ts): a projection of the status, or undefined for none. Absent: the whole status.
   */
  statusRead?: StatusRead;
  /**
   * The cache keeps its spec whole. Without it, a child a pass found carrying its intent is kept without its spec
   * (cache-shape.ts `verifiedChild`) and read whole (one GET) by the pass of a new intent, which for most kinds is
   * rare: their intents change only with their own fields. The Deployment's changes with every image and restart,
   * and it is read (readiness/: spec.replicas): a GET before each of its applies took 1,000 image changes from
   * 1.66x to 2.85x the floor's time (2026-12-07, `--scenario update`).
   */
  keepsSpec?: true;
}

export const DEPLOYMENT_KIND: ChildKind = {
  kind: "Deployment",
  rt: DEPLOYMENT_RESOURCE,
  name: deploymentName,
  desired: desiredDeployment,
  describe: (w) => ` with ${replicasOf(w)} of ${w.spec.image}`,
  priority: deploymentEventPriority,
  statusRead: keepStatus(DEPLOYMENT_STATUS_READ, ["Available", "Progressing", "ReplicaFailure"]),
  keepsSpec: true,
};

export const SERVICE_KIND: ChildKind = {
  kind: "Service",
  rt: SERVICE_RESOURCE,
  name: serviceName,
  desired: desiredService,
  describe: (w) => ` (port ${SERVICE_PORT} -> ${w.spec.port})`,
  priority: serviceEventPriority,
  statusRead: () => undefined,
};

export const POD_DISRUPTION_BUDGET_KIND: ChildKind = {
  kind: "PodDisruptionBudget",
  rt: POD_DISRUPTION_BUDGET_RESOURCE,
  name: podDisruptionBudgetName,
  desired: desiredPodDisruptionBudget,
  describe: (w) => {
    const { minAvailable, maxUnavailable } = desiredPodDisruptionBudget(w).spec;
    return minAvailable !== undefined ? ` (min available ${minAvailable})` : ` (max unavailable ${maxUnavailable})`;
  },
  priority: serviceEventPriority,
  statusRead: () => undefined,
  wanted: wantsDisruptionBudget,
  unwantedBecause: (spec) =>
    spec.disruptionBudget?.enabled === false
      ? "spec.disruptionBudget.enabled is false"
      : `the WebApp runs fewer than ${DISRUPTION_BUDGET_MIN_REPLICAS} replicas`,
  wantedBy: `a WebApp of ${DISRUPTION_BUDGET_MIN_REPLICAS} replicas or more (spec.disruptionBudget.enabled: false turns it off)`,
  servedSince: "1.21",
};

export const INGRESS_KIND: ChildKind = {
  kind: "Ingress",
  rt: INGRESS_RESOURCE,
  name: ingressName,
  desired: desiredIngress,
  describe: (w) =>
    ` (${w.spec.expose?.host}${w.spec.expose?.path ?? EXPOSE_DEFAULT_PATH} -> Service ${serviceName(w.metadata.name)})`,
  priority: serviceEventPriority,
  wanted: wantsIngress,
  unwantedBecause: () => "spec.expose was removed",
  wantedBy: "spec.expose",
  servedSince: "1.19",
};

export const HORIZONTAL_POD_AUTOSCALER_KIND: ChildKind = {
  kind: "HorizontalPodAutoscaler",
  rt: HORIZONTAL_POD_AUTOSCALER_RESOURCE,
  name: horizontalPodAutoscalerName,
  desired: desiredHorizontalPodAutoscaler,
  describe: (w) => ` (${autoscaledRange(w)} pods of Deployment ${deploymentName(w.metadata.name)})`,
  priority: serviceEventPriority,
  statusRead: keepStatus(["currentReplicas", "desiredReplicas"], ["ScalingActive"]),
  wanted: wantsAutoscaler,
  unwantedBecause: () => "spec.autoscaling was removed",
  wantedBy: "spec.autoscaling",
  servedSince: "1.23",
};

/** Every kind, the workload first. */
export const CHILD_KINDS: readonly ChildKind[] = [
  DEPLOYMENT_KIND,
  SERVICE_KIND,
  POD_DISRUPTION_BUDGET_KIND,
  INGRESS_KIND,
  HORIZONTAL_POD_AUTOSCALER_KIND,
];

/** "2-10" pods, as spec.autoscaling allows. */
const autoscaledRange = (w: WebApp): string => {
  const { minReplicas, maxReplicas } = desiredHorizontalPodAutoscaler(w).spec;
  return `${minReplicas}-${maxReplicas}`;
};

/** How the Deployment's Created event counts its pods: "3 replicas", or "2-10 replicas (autoscaled)". */
const replicasOf = (w: WebApp): string => {
  const fixed = fixedReplicas(w.spec);
  return fixed !== undefined ? `${fixed} replicas` : `${autoscaledRange(w)} replicas (autoscaled)`;
};

/** Whether a WebApp of this spec has a child of this kind. */
export const isWanted = (k: ChildKind, spec: WebAppSpec): boolean => k.wanted?.(spec) ?? true;

/** One cache (or anything else) per kind. */
export type PerKind<T> = Record<ChildKindName, T>;

/** `make` of every kind, by name. */
export function perKind<T>(make: (k: ChildKind) => T): PerKind<T> {
  return Object.fromEntries(CHILD_KINDS.map((k) => [k.kind, make(k)])) as PerKind<T>;
}

/** The kind of a child object (by its kind field), if it is one of ours. */
export function kindOf(obj: Pick<KubeObject, "kind">): ChildKind | undefined {
  return CHILD_KINDS.find((k) => k.kind === obj.kind);
}
