/**
 * metrics-server on the real node's cluster: its command line and its API objects (pure: layout in, argv and
 * objects out).
 *
 * Properties:
 * - It runs as a process of the cluster's network namespace (beside the kubelet, like kube-proxy), serving on
 *   the bridge address only; the API server reaches it through the APIService, whose Service has no selector and
 *   one EndpointSlice naming that address (the API server dials endpoints: --enable-aggregator-routing).
 * - Its identity is upstream's: the ServiceAccount kube-system/metrics-server, with exactly the RBAC of
 *   metrics-server's manifests/base/rbac.yaml (aggregated-metrics-reader, auth-delegator,
 *   extension-apiserver-authentication-reader, system:metrics-server); it authenticates with a token of it.
 * - TLS: its serving cert is signed by the cluster CA for the Service's name, and the APIService carries that CA
 *   (where upstream skips verification). Towards the kubelet it skips verification, as upstream documents for
 *   kubelets with self-signed serving certs (the real node's). It scrapes only the real node (NODE_LABEL): KWOK's
 *   fake node has no kubelet to scrape.
 * - Metrics resolution 10 s, the least metrics-server accepts, so an autoscaler sees usage soon after a pod starts;
 *   a scrape must then end within 90% of it (the kubelet is local: 5 s is ample).
 */
import { NODE_LABEL } from "../nodes/real-config.ts";

export const METRICS_SERVER_VERSION = "v0.8.0";
export const METRICS_SERVER_MODULE = "sigs.k8s.io/metrics-server/cmd/metrics-server";
/** Inside the cluster's network namespace, on the bridge address; not served on host loopback. */
export const METRICS_SERVER_PORT = 4443;
export const METRICS_NAMESPACE = "kube-system";
export const METRICS_NAME = "metrics-server";
export const METRICS_API = { group: "metrics.k8s.io", version: "v1beta1" } as const;
export const METRICS_APISERVICE = `${METRICS_API.version}.${METRICS_API.group}`;
/** The name the aggregator checks the serving cert against: <service>.<namespace>.svc. */
export const METRICS_SERVICE_HOST = `${METRICS_NAME}.${METRICS_NAMESPACE}.svc`;
export const METRICS_RESOLUTION = "10s";
const KUBELET_REQUEST_TIMEOUT = "5s";

export interface MetricsServerLayout {
  binary: string;
  /** Address it serves on (the bridge) and its port. */
  address: string;
  port: number;
  kubeconfig: string;
  servingCert: string;
  servingKey: string;
}

export function metricsServerArgv(l: MetricsServerLayout): string[] {
  return [
    l.binary,
    `--kubeconfig=${l.kubeconfig}`,
    `--authentication-kubeconfig=${l.kubeconfig}`,
    `--authorization-kubeconfig=${l.kubeconfig}`,
    `--bind-address=${l.address}`,
    `--secure-port=${l.port}`,
    `--tls-cert-file=${l.servingCert}`,
    `--tls-private-key-file=${l.servingKey}`,
    "--kubelet-insecure-tls",
    "--kubelet-preferred-address-types=InternalIP",
    "--kubelet-use-node-status-port",
    `--node-selector=${NODE_LABEL.key}=${NODE_LABEL.value}`,
    `--metric-resolution=${METRICS_RESOLUTION}`,
    `--kubelet-request-timeout=${KUBELET_REQUEST_TIMEOUT}`,
  ];
}

export interface ApiObject {
  /** POST path of its collection. */
  path: string;
  body: Record<string, unknown>;
}

const RBAC = "rbac.authorization.k8s.io";
const SA_SUBJECT = [{ kind: "ServiceAccount", name: METRICS_NAME, namespace: METRICS_NAMESPACE }];
const clusterRole = (name: string, rules: unknown[], labels?: Record<string, string>): ApiObject => ({
  path: `/apis/${RBAC}/v1/clusterroles`,
  body: { apiVersion: `${RBAC}/v1`, kind: "ClusterRole", metadata: { name, ...(labels ? { labels } : {}) }, rules },
});
const binding = (kind: "ClusterRoleBinding" | "RoleBinding", name: string, roleKind: string, role: string) => ({
  path:
    kind === "RoleBinding"
      ? `/apis/${RBAC}/v1/namespaces/${METRICS_NAMESPACE}/rolebindings`
      : `/apis/${RBAC}/v1/clusterrolebindings`,
  body: {
    apiVersion: `${RBAC}/v1`,
    kind,
    metadata: { name, ...(kind === "RoleBinding" ? { namespace: METRICS_NAMESPACE } : {}) },
    roleRef: { apiGroup: RBAC, kind: roleKind, name: role },
    subjects: SA_SUBJECT,
  },
});

/** In creation order: the ServiceAccount and its RBAC, the Service and its endpoint, then the APIService. */
export function metricsServerObjects(o: { address: string; port: number; caPem: string }): ApiObject[] {
  const meta = { name: METRICS_NAME, namespace: METRICS_NAMESPACE, labels: { "k8s-app": METRICS_NAME } };
  const core = `/api/v1/namespaces/${METRICS_NAMESPACE}`;
  const aggregate = Object.fromEntries(
    ["view", "edit", "admin"].map((r) => [`rbac.authorization.k8s.io/aggregate-to-${r}`, "true"]),
  );
  return [
    { path: `${core}/serviceaccounts`, body: { apiVersion: "v1", kind: "ServiceAccount", metadata: meta } },
    clusterRole(
      "system:aggregated-metrics-reader",
      [{ apiGroups: [METRICS_API.group], resources: ["pods", "nodes"], verbs: ["get", "list", "watch"] }],
      aggregate,
    ),
    clusterRole("system:metrics-server", [
      { apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] },
      { apiGroups: [""], resources: ["pods", "nodes"], verbs: ["get", "list", "watch"] },
    ]),
    binding("RoleBinding", "metrics-server-auth-reader", "Role", "extension-apiserver-authentication-reader"),
    binding("ClusterRoleBinding", "metrics-server:system:auth-delegator", "ClusterRole", "system:auth-delegator"),
    binding("ClusterRoleBinding", "system:metrics-server", "ClusterRole", "system:metrics-server"),
    {
      path: `${core}/services`,
      body: {
        apiVersion: "v1",
        kind: "Service",
        metadata: meta,
        spec: { ports: [{ name: "https", port: 443, protocol: "TCP", targetPort: o.port }] },
      },
    },
    {
      path: `/apis/discovery.k8s.io/v1/namespaces/${METRICS_NAMESPACE}/endpointslices`,
      body: {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: {
          name: METRICS_NAME,
          namespace: METRICS_NAMESPACE,
          labels: {
            "kubernetes.io/service-name": METRICS_NAME,
            "endpointslice.kubernetes.io/managed-by": "cluster.devctl.dev",
          },
        },
        addressType: "IPv4",
        endpoints: [{ addresses: [o.address], conditions: { ready: true } }],
        ports: [{ name: "https", port: o.port, protocol: "TCP" }],
      },
    },
    {
      path: "/apis/apiregistration.k8s.io/v1/apiservices",
      body: {
        apiVersion: "apiregistration.k8s.io/v1",
        kind: "APIService",
        metadata: { name: METRICS_APISERVICE, labels: { "k8s-app": METRICS_NAME } },
        spec: {
          service: { name: METRICS_NAME, namespace: METRICS_NAMESPACE, port: 443 },
          group: METRICS_API.group,
          version: METRICS_API.version,
          caBundle: Buffer.from(o.caPem).toString("base64"),
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      },
    },
  ];
}

/** A kubeconfig with the ServiceAccount's token (the API server as seen from inside the namespace). */
export function tokenKubeconfig(o: { server: string; caPem: string; token: string }): string {
  const ca = Buffer.from(o.caPem).toString("base64");
  return `apiVersion: v1
kind: Config
clusters:
- name: devctl-test
  cluster:
    server: ${o.server}
    certificate-authority-data: ${ca}
users:
- name: ${METRICS_NAME}
  user:
    token: ${o.token}
contexts:
- name: ${METRICS_NAME}
  context:
    cluster: devctl-test
    user: ${METRICS_NAME}
current-context: ${METRICS_NAME}
`;
}
