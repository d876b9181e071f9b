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
 */
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, type WebApp } from "../api/webapp.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import type { SourceEvent } from "../runtime/source.ts";
import { deploymentEventPriority, serviceEventPriority } from "./child-priority.ts";
import { deploymentName, desiredDeployment, desiredService, SERVICE_PORT, serviceName } from "./desired.ts";

export type ChildKindName = "Deployment" | "Service";

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
}

export const DEPLOYMENT_KIND: ChildKind = {
  kind: "Deployment",
  rt: DEPLOYMENT_RESOURCE,
  name: deploymentName,
  desired: desiredDeployment,
  describe: (w) => ` with ${w.spec.replicas} replicas of ${w.spec.image}`,
  priority: deploymentEventPriority,
};

export const SERVICE_KIND: ChildKind = {
  kind: "Service",
  rt: SERVICE_RESOURCE,
  name: serviceName,
  desired: desiredService,
  describe: (w) => ` (port ${SERVICE_PORT} -> ${w.spec.port})`,
  priority: serviceEventPriority,
};

/** Every kind, the workload first. */
export const CHILD_KINDS: readonly ChildKind[] = [DEPLOYMENT_KIND, SERVICE_KIND];

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
