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
import { type DeploymentView, type RolloutState, readDeployment, rolloutState } from "../readiness/deployment.ts";
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
  const depImage = deployment ? templateImage(deployment) : undefined;
  const spec = parsed.ok ? parsed.spec : undefined;
  const desiredReplicas = spec?.replicas ?? dep?.specReplicas ?? 0;
  const desiredImage = spec?.image ?? depImage;

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
    const r = webAppRollout(dep, depImage, desiredReplicas, desiredImage);
    const reason = r.kind === "progressing" ? "RollingOut" : r.reason;
    conditions.push(cond("Progressing", r.kind === "progressing" ? "True" : "False", reason, r.message));
    if (r.kind === "failed") {
      degraded.push({
        reason: r.reason,
        message: `Deployment ${deploymentName(name)} made no progress within its deadline (${dep.progressDeadlineExceeded}); check the pods with: kubectl describe pods -l ${webAppSelector(name)}`,
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

/** Image of the "app" container in a Deployment's pod template. */
function templateImage(obj: KubeObject): string | undefined {
  const spec = record(record(record(obj.spec).template).spec);
  const containers = Array.isArray(spec.containers) ? spec.containers.map(record) : [];
  const image = containers.find((c) => c.name === CONTAINER_NAME)?.image;
  return typeof image === "string" ? image : undefined;
}

/**
 * The WebApp's rollout: in progress while the Deployment does not carry the WebApp's image and replicas yet
 * (our apply is not in the cache, or failed), then what `kubectl rollout status` would say (readiness/).
 */
function webAppRollout(
  dep: DeploymentView,
  depImage: string | undefined,
  desired: number,
  image: string | undefined,
): RolloutState {
  if (image !== undefined && depImage !== image)
    return { kind: "progressing", reason: "SpecNotObserved", message: `updating to image ${image}` };
  if (dep.specReplicas !== undefined && dep.specReplicas !== desired)
    return { kind: "progressing", reason: "SpecNotObserved", message: `scaling to ${desired} replicas` };
  return rolloutState(dep);
}

const record = (x: unknown): Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
