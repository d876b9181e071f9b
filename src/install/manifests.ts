/**
 * Everything `devctl operator install` applies, in order, as pure data; `devctl operator manifests`
 * prints the very same list.
 *
 * Properties:
 * - Ordered for apply: CRD, Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, the metrics reader
 *   ClusterRole, Role, RoleBinding, NetworkPolicy (only with `networkPolicy`), PodDisruptionBudget, Deployment: the
 *   policies are in place before the first pod exists. Uninstall walks the same names backwards.
 * - Hardened (hardening.ts): the Namespace enforces the "restricted" Pod Security Standard, a
 *   PodDisruptionBudget keeps one replica through drains, an opt-in NetworkPolicy admits only metrics scrapes.
 * - Deterministic: the same options give deep-equal objects with the same key order.
 * - Recognisable: every object is labelled app.kubernetes.io/managed-by=devctl (the CRD too, see
 *   api/crd.ts); the operator's objects also app.kubernetes.io/name=devctl-operator.
 * - Only fields we mean to own: nothing the API server defaults, so a second server-side apply of
 *   the same list changes nothing.
 */
import { buildWebAppCrd, MANAGED_BY_DEVCTL, MANAGED_BY_LABEL } from "../api/crd.ts";
import { LEASE_NAME } from "../api/names.ts";
import { VERSION } from "../build/version.ts";
import {
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CRDS,
  DEPLOYMENTS,
  NAMESPACES,
  NETWORK_POLICIES,
  POD_DISRUPTION_BUDGETS,
  qualifiedName,
  ROLE_BINDINGS,
  ROLES,
  SERVICE_ACCOUNTS,
} from "../kube/resources.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { buildOperatorDeployment, type DeploymentParams } from "./deployment.ts";
import {
  buildMetricsNetworkPolicy,
  buildNamespace,
  buildOperatorPdb,
  type HardeningNames,
  NETWORK_POLICY_ANNOTATION,
  NETWORK_POLICY_ENABLED,
} from "./hardening.ts";
import { containerResources } from "./resources.ts";
import {
  buildClusterRole,
  buildClusterRoleBinding,
  buildLeaseRole,
  buildLeaseRoleBinding,
  buildMetricsReaderRole,
  type RbacNames,
} from "./rbac.ts";

export const DEFAULT_NAMESPACE = "devctl-system";
export const DEFAULT_IMAGE_REPOSITORY = "ghcr.io/devctl/devctl";
/**
 * Two replicas: with leader election the standby keeps warm caches and takes over within one lease
 * duration (15 s) when the leader's node goes away; the cost is one more pod of the same memory
 * request (resources.ts), as a standby caches everything the leader does.
 */
export const OPERATOR_DEFAULT_REPLICAS = 2;
/** Far more than leader election can use; a guard against typos. */
export const OPERATOR_MAX_REPLICAS = 10;
export const OPERATOR_NAME = "webapp-operator";
/** The metrics Service's name (`--monitoring`), which the Prometheus Operator makes the scrape job's name. */
export const METRICS_JOB = `${OPERATOR_NAME}-metrics`;
export const SERVICE_ACCOUNT_NAME = OPERATOR_NAME;
export { LEASE_NAME };
export const APP_NAME_LABEL = "app.kubernetes.io/name";
export const APP_NAME = "devctl-operator";
export const VERSION_LABEL = "app.kubernetes.io/version";

export interface InstallOptions {
  namespace: string;
  image: string;
  replicas: number;
  /** The devctl version recorded on the Deployment (default: this executable's). */
  version?: string;
  nodeSelector?: DeploymentParams["nodeSelector"];
  tolerations?: DeploymentParams["tolerations"];
  imagePullPolicy?: DeploymentParams["imagePullPolicy"];
  imagePullSecrets?: DeploymentParams["imagePullSecrets"];
  /** Memory quantities (default: sized from the measured footprint, see resources.ts). */
  memoryRequest?: string;
  memoryLimit?: string;
  /** The operator's default for WebApps without spec.rollout.autoRollback (default off). */
  autoRollback?: boolean;
  /**
   * `operator manifests --monitoring`: add the metrics Service, ServiceMonitor, PrometheusRule and dashboard
   * (monitoring.ts). Never applied by install, which must not depend on the Prometheus Operator's CRDs.
   */
  monitoring?: boolean;
  /** `--network-policy`: a NetworkPolicy admitting only metrics scrapes from monitoring namespaces (hardening.ts). */
  networkPolicy?: boolean;
}

/** The image of this devctl's release. Built from source the version is "dev". */
export const defaultImage = (version: string = VERSION): string => `${DEFAULT_IMAGE_REPOSITORY}:${version}`;

export const defaultInstallOptions = (): InstallOptions => ({
  namespace: DEFAULT_NAMESPACE,
  image: defaultImage(),
  replicas: OPERATOR_DEFAULT_REPLICAS,
});

/** Cluster-scoped objects are per install namespace, so installs never share a binding. */
export const clusterRoleName = (namespace: string): string => `${OPERATOR_NAME}-${namespace}`;
export const LEASE_ROLE_NAME = `${OPERATOR_NAME}-leader-election`;

export const selectorLabels = (): Record<string, string> => ({ [APP_NAME_LABEL]: APP_NAME });
export const commonLabels = (): Record<string, string> => ({
  [APP_NAME_LABEL]: APP_NAME,
  [MANAGED_BY_LABEL]: MANAGED_BY_DEVCTL,
});

export function buildManifests(o: InstallOptions): KubeObject[] {
  const labels = commonLabels();
  const names: RbacNames = {
    namespace: o.namespace,
    serviceAccount: SERVICE_ACCOUNT_NAME,
    clusterRole: clusterRoleName(o.namespace),
    role: LEASE_ROLE_NAME,
    labels,
  };
  const guarded: HardeningNames = { name: OPERATOR_NAME, namespace: o.namespace, labels, selector: selectorLabels() };
  return [
    buildWebAppCrd() as unknown as KubeObject,
    buildNamespace(o.namespace, { [MANAGED_BY_LABEL]: MANAGED_BY_DEVCTL }),
    {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: SERVICE_ACCOUNT_NAME, namespace: o.namespace, labels: { ...labels } },
    },
    buildClusterRole(names),
    buildClusterRoleBinding(names),
    buildMetricsReaderRole(labels),
    buildLeaseRole(names),
    buildLeaseRoleBinding(names),
    ...(o.networkPolicy ? [buildMetricsNetworkPolicy(guarded)] : []),
    buildOperatorPdb(guarded),
    buildOperatorDeployment({
      name: OPERATOR_NAME,
      namespace: o.namespace,
      image: o.image,
      replicas: o.replicas,
      serviceAccount: SERVICE_ACCOUNT_NAME,
      leaseName: LEASE_NAME,
      labels: { ...labels, [VERSION_LABEL]: versionLabelValue(o.version ?? VERSION) },
      ...(o.networkPolicy ? { annotations: { [NETWORK_POLICY_ANNOTATION]: NETWORK_POLICY_ENABLED } } : {}),
      selector: selectorLabels(),
      ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
      ...(o.tolerations ? { tolerations: o.tolerations } : {}),
      ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
      ...(o.imagePullSecrets ? { imagePullSecrets: o.imagePullSecrets } : {}),
      ...(o.autoRollback ? { autoRollback: true } : {}),
      resources: containerResources({
        ...(o.memoryRequest ? { request: o.memoryRequest } : {}),
        ...(o.memoryLimit ? { limit: o.memoryLimit } : {}),
      }),
    }),
  ];
}

/** The optional objects `o` leaves out (deleted by install where an earlier install with them left them). */
export function leftOut(o: InstallOptions): KubeObject[] {
  const wanted = new Set(buildManifests(o).map(displayName));
  return buildManifests({ ...o, networkPolicy: true }).filter((x) => !wanted.has(displayName(x)));
}

/** Label values are at most 63 characters of [A-Za-z0-9._-], starting and ending alphanumeric. */
export function versionLabelValue(version: string): string {
  const v = version
    .replace(/[^A-Za-z0-9._-]/g, "_")
    .slice(0, 63)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return v || "unknown";
}

/** The resource type of each kind install applies, for URLs (identities from kube/resources.ts). */
export const INSTALL_RESOURCES: Record<string, ResourceType> = {
  CustomResourceDefinition: CRDS,
  Namespace: NAMESPACES,
  ServiceAccount: SERVICE_ACCOUNTS,
  ClusterRole: CLUSTER_ROLES,
  ClusterRoleBinding: CLUSTER_ROLE_BINDINGS,
  Role: ROLES,
  RoleBinding: ROLE_BINDINGS,
  NetworkPolicy: NETWORK_POLICIES,
  PodDisruptionBudget: POD_DISRUPTION_BUDGETS,
  Deployment: DEPLOYMENTS,
};

export function resourceOf(obj: KubeObject): ResourceType {
  const rt = INSTALL_RESOURCES[obj.kind ?? ""];
  if (!rt) throw new Error(`install does not know the resource of kind ${obj.kind}`);
  return rt;
}

/** kubectl's way of naming an object: `deployment.apps/webapp-operator`. */
export function displayName(obj: KubeObject): string {
  return qualifiedName(resourceOf(obj), obj.metadata.name ?? "");
}
