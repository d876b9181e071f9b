/**
 * Where a Deployment's rollout stands: a faithful port of `kubectl rollout status` (k8s.io/kubectl
 * v0.36.3, pkg/polymorphichelpers/rollout_status.go, DeploymentStatusViewer.Status). Pure.
 *
 * Properties:
 * - Same checks in the same order as kubectl: the latest generation observed (else waiting); the
 *   Progressing condition's reason ProgressDeadlineExceeded (failed); updatedReplicas < spec.replicas;
 *   status.replicas > updatedReplicas (old replicas left); availableReplicas < updatedReplicas; else complete.
 * - Complete means exactly what kubectl means by "successfully rolled out"; it does not look at readyReplicas.
 * - readDeployment() reads any JSON defensively: a missing or mistyped field counts as absent (0).
 */
import type { KubeObject } from "../kube/types.ts";
import { array, record } from "./_json.ts";

/** The fields of a live Deployment that rollout and availability are judged on. */
export interface DeploymentView {
  generation: number;
  observedGeneration: number;
  /** spec.replicas; undefined when unset (kubectl then skips the updated-replicas check). */
  specReplicas: number | undefined;
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  /** The Deployment's own Available condition; undefined before the controller has set it. */
  available: boolean | undefined;
  /** Message of a Progressing condition with reason ProgressDeadlineExceeded, else undefined. */
  progressDeadlineExceeded: string | undefined;
  /** Message (or reason) of a True ReplicaFailure condition (e.g. quota exceeded), else undefined. */
  replicaFailure: string | undefined;
}

/** The Deployment controller's reason on Progressing when a rollout passes progressDeadlineSeconds. */
export const TIMED_OUT_REASON = "ProgressDeadlineExceeded";

export type RolloutState =
  | { kind: "progressing"; reason: RolloutWaitReason; message: string }
  | { kind: "failed"; reason: typeof TIMED_OUT_REASON; message: string }
  | { kind: "complete"; reason: "RolloutComplete"; message: string };
export type RolloutWaitReason =
  | "SpecNotObserved"
  | "ReplicasUpdating"
  | "OldReplicasTerminating"
  | "ReplicasBecomingAvailable";

/**
 * The status fields readDeployment reads besides the Available, Progressing and ReplicaFailure conditions: what the
 * operator's cache keeps of a Deployment's status (operator/child-kinds.ts).
 */
export const DEPLOYMENT_STATUS_READ = [
  "observedGeneration",
  "replicas",
  "updatedReplicas",
  "readyReplicas",
  "availableReplicas",
] as const;

export function readDeployment(obj: KubeObject): DeploymentView {
  const spec = record(obj.spec);
  const status = record(obj.status);
  const conditions = array(status.conditions).map(record);
  const condition = (type: string) => conditions.find((c) => c.type === type);
  const progressing = condition("Progressing");
  const failure = condition("ReplicaFailure");
  const available = condition("Available");
  return {
    generation: num(obj.metadata.generation),
    observedGeneration: num(status.observedGeneration),
    specReplicas: typeof spec.replicas === "number" ? spec.replicas : undefined,
    replicas: num(status.replicas),
    updatedReplicas: num(status.updatedReplicas),
    readyReplicas: num(status.readyReplicas),
    availableReplicas: num(status.availableReplicas),
    available: available === undefined ? undefined : available.status === "True",
    progressDeadlineExceeded:
      progressing?.reason === TIMED_OUT_REASON ? (str(progressing.message) ?? "progress deadline exceeded") : undefined,
    replicaFailure: failure?.status === "True" ? (str(failure.message) ?? str(failure.reason) ?? "") : undefined,
  };
}

/** kubectl's DeploymentStatusViewer.Status, with messages that read without the Deployment's name. */
export function rolloutState(d: DeploymentView): RolloutState {
  const waiting = (reason: RolloutWaitReason, message: string): RolloutState => ({
    kind: "progressing",
    reason,
    message,
  });
  if (d.generation > d.observedGeneration)
    return waiting("SpecNotObserved", "waiting for the Deployment controller to observe the latest spec");
  if (d.progressDeadlineExceeded !== undefined)
    return {
      kind: "failed",
      reason: TIMED_OUT_REASON,
      message: `progress deadline exceeded: ${d.progressDeadlineExceeded}`,
    };
  if (d.specReplicas !== undefined && d.updatedReplicas < d.specReplicas)
    return waiting("ReplicasUpdating", `${d.updatedReplicas} of ${d.specReplicas} new replicas have been updated`);
  if (d.replicas > d.updatedReplicas)
    return waiting("OldReplicasTerminating", `${d.replicas - d.updatedReplicas} old replicas are pending termination`);
  if (d.availableReplicas < d.updatedReplicas)
    return waiting(
      "ReplicasBecomingAvailable",
      `${d.availableReplicas} of ${d.updatedReplicas} updated replicas are available`,
    );
  const want = d.specReplicas ?? d.updatedReplicas;
  return {
    kind: "complete",
    reason: "RolloutComplete",
    message: `${d.availableReplicas} of ${want} replicas ready and available`,
  };
}

const num = (x: unknown): number => (typeof x === "number" ? x : 0);
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
