/**
 * Computes a WebApp's status from what the reconciler observed. Pure.
 *
 * Properties:
 * - Level-based: the result depends only on the inputs, never on how the reconciler got there.
 * - Three conditions, always in this order: Available, Progressing, Degraded.
 *   Available:   True iff the Deployment reports Available (its minimum replicas are up) and the Service exists.
 *   Progressing: True while a rollout or scale is under way; False when complete or past its deadline.
 *   Degraded:    True iff the spec is invalid, the reconciler reported problems, the rollout exceeded its
 *                progress deadline, or the Deployment cannot create pods (ReplicaFailure).
 * - Stable: a condition keeps its lastTransitionTime while its status is unchanged, so recomputing an
 *   unchanged state gives a status statusEqual() to the stored one, and no write is needed.
 * - An invalid spec is detected here (InvalidSpec, naming the field); the reconciler need not pass it.
 * - Counts come from the Deployment's status (0 without one); observedGeneration is metadata.generation.
 */
import { conditionsEqual, withTransitionTimes, type ConditionState } from "../api/conditions.ts";
import { formatIssues, parseWebAppSpec } from "../api/parse.ts";
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { controllerOf } from "./diff.ts";
import { CONTAINER_NAME, deploymentName, serviceName, webAppSelector } from "./desired.ts";

export type ProblemReason = "InvalidSpec" | "ResourceExists" | "ApplyFailed" | "Forbidden";
/** Something that keeps the WebApp from converging; becomes the Degraded condition. */
export interface Problem {
  reason: ProblemReason;
  /** A sentence for the user that says what to fix. */
  message: string;
}

/** The problem for an object with our name that this WebApp does not control. */
export function resourceExistsProblem(kind: "Deployment" | "Service", obj: KubeObject): Problem {
  const owner = controllerOf(obj);
  const { name, namespace } = obj.metadata;
  const ownedBy = owner ? ` (it is controlled by ${owner.kind} ${owner.name})` : "";
  return {
    reason: "ResourceExists",
    message: `${kind} ${name} exists and is not controlled by this WebApp${ownedBy}; delete it (kubectl delete ${kind.toLowerCase()} ${name} -n ${namespace}) or give the WebApp another name`,
  };
}

export function computeStatus(
  webapp: WebAppObject,
  deployment: KubeObject | undefined,
  service: KubeObject | undefined,
  problems: readonly Problem[],
  now: number,
): WebAppStatus {
  const name = webapp.metadata.name ?? "";
  const parsed = parseWebAppSpec(webapp);
  const dep = deployment ? readDeployment(deployment) : undefined;
  const spec = parsed.ok ? parsed.spec : undefined;
  const desiredReplicas = spec?.replicas ?? dep?.specReplicas ?? 0;
  const desiredImage = spec?.image ?? dep?.image;

  const allProblems: Problem[] = [...problems];
  if (!parsed.ok && !problems.some((p) => p.reason === "InvalidSpec")) {
    allProblems.unshift({
      reason: "InvalidSpec",
      message: `the spec is invalid: ${formatIssues(parsed.issues).replaceAll("\n", "; ")}`,
    });
  }

  const conditions: ConditionState[] = [];
  const ready = `${dep?.readyReplicas ?? 0}/${desiredReplicas} replicas are ready`;
  if (!dep)
    conditions.push(
      cond(
        "Available",
        "False",
        "DeploymentNotFound",
        `Deployment ${deploymentName(name)} controlled by this WebApp does not exist`,
      ),
    );
  else if (!service)
    conditions.push(
      cond(
        "Available",
        "False",
        "ServiceNotFound",
        `Service ${serviceName(name)} controlled by this WebApp does not exist; ${ready}`,
      ),
    );
  else if (dep.available ?? dep.availableReplicas >= desiredReplicas)
    conditions.push(cond("Available", "True", "DeploymentAvailable", ready));
  else conditions.push(cond("Available", "False", "DeploymentUnavailable", ready));

  const degraded: { reason: string; message: string }[] = [...allProblems];
  if (!dep) {
    conditions.push(
      allProblems.length > 0
        ? cond("Progressing", "False", "Blocked", "cannot create the Deployment; see the Degraded condition")
        : cond("Progressing", "True", "RollingOut", `creating Deployment ${deploymentName(name)}`),
    );
  } else {
    const r = rollout(dep, desiredReplicas, desiredImage);
    conditions.push(cond("Progressing", r.state === "progressing" ? "True" : "False", r.reason, r.message));
    if (r.state === "stalled") {
      degraded.push({
        reason: "ProgressDeadlineExceeded",
        message: `Deployment ${deploymentName(name)} made no progress within its deadline (${r.message}); check the pods with: kubectl describe pods -l ${webAppSelector(name)}`,
      });
    }
    if (dep.replicaFailure !== undefined) {
      degraded.push({
        reason: "ReplicaFailure",
        message: `Deployment ${deploymentName(name)} cannot create pods: ${dep.replicaFailure}`,
      });
    }
  }
  const first = degraded[0];
  conditions.push(
    first
      ? cond("Degraded", "True", first.reason, degraded.map((d) => d.message).join("; "))
      : cond("Degraded", "False", "AsExpected", "no problems found"),
  );

  const generation = webapp.metadata.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    replicas: dep?.replicas ?? 0,
    readyReplicas: dep?.readyReplicas ?? 0,
    availableReplicas: dep?.availableReplicas ?? 0,
    selector: webAppSelector(name),
    conditions: withTransitionTimes(conditions, webapp.status?.conditions, now, generation),
  };
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
    conditionsEqual(a.conditions, b.conditions)
  );
}

function cond(type: string, status: "True" | "False", reason: string, message: string): ConditionState {
  return { type, status, reason, message };
}

/** What status computation needs from a live Deployment, read defensively from its JSON. */
interface DeploymentView {
  generation: number;
  observedGeneration: number;
  specReplicas: number | undefined;
  /** Image of the "app" container in the Deployment's pod template. */
  image: string | undefined;
  replicas: number;
  updatedReplicas: number;
  readyReplicas: number;
  availableReplicas: number;
  /** The Deployment's own Available condition; undefined before the controller has set it. */
  available: boolean | undefined;
  progressDeadlineExceeded: string | undefined;
  /** Message of a True ReplicaFailure condition (e.g. quota exceeded). */
  replicaFailure: string | undefined;
}

function readDeployment(obj: KubeObject): DeploymentView {
  const spec = record(obj.spec);
  const status = record(obj.status);
  const containers = array(record(record(spec.template).spec).containers).map(record);
  const conditions = array(status.conditions).map(record);
  const condition = (type: string) => conditions.find((c) => c.type === type);
  const progressing = condition("Progressing");
  const failure = condition("ReplicaFailure");
  const available = condition("Available");
  return {
    generation: num(obj.metadata.generation),
    observedGeneration: num(status.observedGeneration),
    specReplicas: typeof spec.replicas === "number" ? spec.replicas : undefined,
    image: str(containers.find((c) => c.name === CONTAINER_NAME)?.image),
    replicas: num(status.replicas),
    updatedReplicas: num(status.updatedReplicas),
    readyReplicas: num(status.readyReplicas),
    availableReplicas: num(status.availableReplicas),
    available: available === undefined ? undefined : available.status === "True",
    progressDeadlineExceeded:
      progressing?.status === "False" && progressing.reason === "ProgressDeadlineExceeded"
        ? (str(progressing.message) ?? "")
        : undefined,
    replicaFailure: failure?.status === "True" ? (str(failure.message) ?? str(failure.reason) ?? "") : undefined,
  };
}

type Rollout = { state: "progressing" | "complete" | "stalled"; reason: string; message: string };

/** Where the Deployment's rollout stands, checked in the order kubectl rollout status uses. */
function rollout(dep: DeploymentView, desired: number, image: string | undefined): Rollout {
  const progressing = (message: string): Rollout => ({ state: "progressing", reason: "RollingOut", message });
  if (dep.generation > dep.observedGeneration)
    return progressing("waiting for the Deployment controller to observe the latest change");
  if (dep.progressDeadlineExceeded !== undefined) {
    return {
      state: "stalled",
      reason: "ProgressDeadlineExceeded",
      message: dep.progressDeadlineExceeded || "progress deadline exceeded",
    };
  }
  if (image !== undefined && dep.image !== image) return progressing(`updating to image ${image}`);
  if (dep.specReplicas !== undefined && dep.specReplicas !== desired)
    return progressing(`scaling to ${desired} replicas`);
  if (dep.updatedReplicas < desired)
    return progressing(`updating to image ${image}: ${dep.updatedReplicas}/${desired} replicas updated`);
  if (dep.replicas > dep.updatedReplicas)
    return progressing(`${dep.replicas - dep.updatedReplicas} old replicas are terminating`);
  if (dep.readyReplicas < desired) return progressing(`${dep.readyReplicas}/${desired} replicas are ready`);
  if (dep.availableReplicas < desired) return progressing(`${dep.availableReplicas}/${desired} replicas are available`);
  return {
    state: "complete",
    reason: "RolloutComplete",
    message: `${desired}/${desired} replicas run image ${image} and are ready`,
  };
}

const record = (x: unknown): Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
const array = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const num = (x: unknown): number => (typeof x === "number" ? x : 0);
const str = (x: unknown): string | undefined => (typeof x === "string" ? x : undefined);
