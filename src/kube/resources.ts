/**
 * The identities of the built-in resources devctl reads or writes, one `ResourceType` each (client-go keeps a
 * group's identity in one place, `coordinationv1.SchemeGroupVersion`). Every layer may import this module; a
 * resource type written anywhere else is a second home. Pure data.
 */
import type { ResourceType } from "./types.ts";

const resource = (group: string, version: string, plural: string, kind: string, namespaced = true): ResourceType =>
  Object.freeze({ group, version, plural, kind, namespaced });

export const COORDINATION_GROUP = "coordination.k8s.io";
export const APIEXTENSIONS_GROUP = "apiextensions.k8s.io";
export const RBAC_GROUP = "rbac.authorization.k8s.io";

export const DEPLOYMENTS = resource("apps", "v1", "deployments", "Deployment");
export const SERVICES = resource("", "v1", "services", "Service");
export const PODS = resource("", "v1", "pods", "Pod");
export const INGRESSES = resource("networking.k8s.io", "v1", "ingresses", "Ingress");
export const INGRESS_CLASSES = resource("networking.k8s.io", "v1", "ingressclasses", "IngressClass", false);
export const POD_DISRUPTION_BUDGETS = resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget");
export const NETWORK_POLICIES = resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy");
export const HORIZONTAL_POD_AUTOSCALERS = resource(
  "autoscaling",
  "v2",
  "horizontalpodautoscalers",
  "HorizontalPodAutoscaler",
);
export const EVENTS = resource("", "v1", "events", "Event");
export const NAMESPACES = resource("", "v1", "namespaces", "Namespace", false);
export const SERVICE_ACCOUNTS = resource("", "v1", "serviceaccounts", "ServiceAccount");
export const LEASES = resource(COORDINATION_GROUP, "v1", "leases", "Lease");
export const CRDS = resource(APIEXTENSIONS_GROUP, "v1", "customresourcedefinitions", "CustomResourceDefinition", false);
export const ROLES = resource(RBAC_GROUP, "v1", "roles", "Role");
export const ROLE_BINDINGS = resource(RBAC_GROUP, "v1", "rolebindings", "RoleBinding");
export const CLUSTER_ROLES = resource(RBAC_GROUP, "v1", "clusterroles", "ClusterRole", false);
export const CLUSTER_ROLE_BINDINGS = resource(RBAC_GROUP, "v1", "clusterrolebindings", "ClusterRoleBinding", false);
export const SELF_SUBJECT_ACCESS_REVIEWS = resource(
  "authorization.k8s.io",
  "v1",
  "selfsubjectaccessreviews",
  "SelfSubjectAccessReview",
  false,
);

export const TOKEN_REVIEWS = resource("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", false);
export const SUBJECT_ACCESS_REVIEWS = resource(
  "authorization.k8s.io",
  "v1",
  "subjectaccessreviews",
  "SubjectAccessReview",
  false,
);

/** The `apiVersion` of objects of `rt`: "apps/v1", or "v1" for the core group. */
export function apiVersionOf(rt: ResourceType): string {
  return rt.group ? `${rt.group}/${rt.version}` : rt.version;
}

/** kubectl's way of naming an object: "deployment.apps/web", "lease.coordination.k8s.io/x", "namespace/ns". */
export function qualifiedName(rt: ResourceType, name: string): string {
  return `${rt.kind.toLowerCase()}${rt.group ? `.${rt.group}` : ""}/${name}`;
}
