/**
 * The operator's permissions, as pure builders: one ClusterRole (+ binding) for what it does in every
 * namespace, one Role (+ binding) for its Lease in its own namespace.
 *
 * Properties:
 * - Least privilege: every rule below is used by the operator (src/operator, src/runtime) and is
 *   commented with where. No secrets, no CRDs, no wildcards; pods may only be listed.
 * - Leases only in the install namespace (a Role), so the operator cannot touch other components'
 *   leader elections.
 * - Names of cluster-scoped objects carry the install namespace, so two installs (say devctl-system
 *   and a test namespace) never overwrite each other's bindings. The one exception is the metrics reader
 *   ClusterRole (devctl-metrics-reader): the same rule for every install, bound by whoever scrapes, never by install.
 */
import { CHILD_RESOURCES, GROUP, PLURAL } from "../api/webapp.ts";
import { INGRESS_CLASSES, LEASES, SUBJECT_ACCESS_REVIEWS, TOKEN_REVIEWS } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * What the operator does to its children: caches them (list, watch), reads one by name when a create is
 * refused or before an adoption (get), creates them (create: POST) and converges them (patch: server-side
 * apply, the ownership handover and adoption are JSON patches). Never update (PUT). Delete only where the garbage
 * collector missed a child whose controller WebApp is gone (src/operator/orphans.ts), and a child of a kind the
 * WebApp's spec no longer wants (operator/converge.ts removeChild: a PodDisruptionBudget below 2 replicas); both
 * with the child's uid and resourceVersion as preconditions, never any other object.
 */
export const CHILD_VERBS = ["create", "get", "list", "watch", "patch", "delete"] as const;

/** What the reconciler needs cluster-wide. */
export function operatorRules(): PolicyRule[] {
  return [
    // The informer lists and watches WebApps; preflight lists one.
    { apiGroups: [GROUP], resources: [PLURAL], verbs: ["get", "list", "watch"] },
    // Status is written through the status subresource, as a merge patch (reconciler.ts writeStatus).
    { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ["patch"] },
    // Owned objects carry ownerReferences with blockOwnerDeletion=true; clusters that enable the
    // OwnerReferencesPermissionEnforcement admission plugin (OpenShift does) require this to set it.
    { apiGroups: [GROUP], resources: [`${PLURAL}/finalizers`], verbs: ["update"] },
    // The children (api's CHILD_RESOURCES): looked up, created, cached (list/watch), server-side applied (patch).
    ...CHILD_RESOURCES.map((rt) => ({ apiGroups: [rt.group], resources: [rt.plural], verbs: [...CHILD_VERBS] })),
    // IngressClasses are cached (names only) to report a spec.expose.ingressClassName that names none.
    { apiGroups: [INGRESS_CLASSES.group], resources: [INGRESS_CLASSES.plural], verbs: ["list", "watch"] },
    // Pods of a WebApp that is not Ready are listed on demand to report why (reconciler.ts podFailures);
    // never watched or cached, never read one by one, never written.
    { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
    // The event recorder creates core/v1 Events and patches count/lastTimestamp of repeats; a pod kept unready by its
    // probe has the kubelet's Unhealthy events listed, by field selector, to say why (operator/pod-failures.ts).
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch", "list"] },
    // Secure metrics (server/request-auth.ts): a scrape's bearer token is checked with a TokenReview, its access to
    // GET /metrics with a SubjectAccessReview (kube/access-review.ts). Create is all these resources have.
    { apiGroups: [TOKEN_REVIEWS.group], resources: [TOKEN_REVIEWS.plural], verbs: ["create"] },
    { apiGroups: [SUBJECT_ACCESS_REVIEWS.group], resources: [SUBJECT_ACCESS_REVIEWS.plural], verbs: ["create"] },
  ];
}

/** The ClusterRole to bind to whoever scrapes the operator's secure /metrics (Prometheus). Not bound by install. */
export const METRICS_READER_ROLE = "devctl-metrics-reader";

export interface NonResourceRule {
  nonResourceURLs: string[];
  verbs: string[];
}

/** GET /metrics: what the operator's SubjectAccessReview asks for a scrape (kubebuilder's metrics-reader). */
export function metricsReaderRules(): NonResourceRule[] {
  return [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }];
}

/**
 * One name for every install (the name people bind, as the README shows): /metrics authorization is not per
 * install anyway, a token allowed to get /metrics may scrape every operator that asks this cluster.
 */
export function buildMetricsReaderRole(labels: Record<string, string>): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: METRICS_READER_ROLE, labels: { ...labels } },
    rules: metricsReaderRules(),
  };
}

/**
 * What leader election needs, in the install namespace only: get, create, then update to renew and release
 * (runtime/leader-election.ts); list and watch for a standby's watch on its Lease (runtime/_lease-watch.ts,
 * one Lease by a metadata.name field selector).
 */
export function leaseRules(): PolicyRule[] {
  return [
    { apiGroups: [LEASES.group], resources: [LEASES.plural], verbs: ["get", "create", "update", "list", "watch"] },
  ];
}

export interface RbacNames {
  namespace: string;
  serviceAccount: string;
  /** Name of the ClusterRole and ClusterRoleBinding. */
  clusterRole: string;
  /** Name of the Role and RoleBinding. */
  role: string;
  labels: Record<string, string>;
}

export function buildClusterRole(n: RbacNames): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: n.clusterRole, labels: { ...n.labels } },
    rules: operatorRules(),
  };
}

export function buildClusterRoleBinding(n: RbacNames): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: n.clusterRole, labels: { ...n.labels } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: n.clusterRole },
    subjects: [{ kind: "ServiceAccount", name: n.serviceAccount, namespace: n.namespace }],
  };
}

export function buildLeaseRole(n: RbacNames): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: n.role, namespace: n.namespace, labels: { ...n.labels } },
    rules: leaseRules(),
  };
}

export function buildLeaseRoleBinding(n: RbacNames): KubeObject {
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: n.role, namespace: n.namespace, labels: { ...n.labels } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: n.role },
    subjects: [{ kind: "ServiceAccount", name: n.serviceAccount, namespace: n.namespace }],
  };
}
