/**
 * The hardened install's three parts, as pure builders: the namespace's Pod Security labels, the operator's
 * PodDisruptionBudget and the optional NetworkPolicy in front of its metrics port.
 *
 * Properties:
 * - Pod Security: the install namespace enforces the "restricted" Pod Security Standard at the latest version,
 *   and audits and warns at the same level (the labels kubebuilder scaffolds). The operator's pod meets it
 *   (deployment.ts: non-root, seccomp RuntimeDefault, every capability dropped, no privilege escalation, an
 *   emptyDir the only volume). A namespace devctl did not create keeps its own labels: see namespace-labels.ts.
 * - PodDisruptionBudget: selects exactly the operator's pods (the Deployment's selector) with maxUnavailable 1,
 *   so a node drain evicts one replica at a time and the standby takes over the Lease; with one replica it
 *   never blocks a drain.
 * - NetworkPolicy (opt-in, `--network-policy`, Helm value networkPolicy.enabled): Ingress to the operator's
 *   pods only on the metrics port, by its name (deployment.ts), and only from namespaces labelled
 *   METRICS_NAMESPACE_LABEL (kubebuilder's `metrics: enabled`). Egress is not restricted (the operator talks to
 *   the API server). The Deployment carries NETWORK_POLICY_ANNOTATION so `operator status` knows one is wanted.
 */
import type { KubeObject } from "../kube/types.ts";
import { METRICS_PORT_NAME } from "./deployment.ts";

const PSA = "pod-security.kubernetes.io";
export const POD_SECURITY_LEVEL = "restricted";
export const POD_SECURITY_ENFORCE_LABEL = `${PSA}/enforce`;

/** The Pod Security labels of the install namespace, in the order they are written. */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = Object.freeze({
  [`${PSA}/enforce`]: POD_SECURITY_LEVEL,
  [`${PSA}/enforce-version`]: "latest",
  [`${PSA}/audit`]: POD_SECURITY_LEVEL,
  [`${PSA}/audit-version`]: "latest",
  [`${PSA}/warn`]: POD_SECURITY_LEVEL,
  [`${PSA}/warn-version`]: "latest",
});

/** A namespace whose pods may scrape the operator's metrics when the NetworkPolicy is installed. */
export const METRICS_NAMESPACE_LABEL: Readonly<Record<string, string>> = Object.freeze({ metrics: "enabled" });
/** On the operator's Deployment when it was installed with its NetworkPolicy. */
export const NETWORK_POLICY_ANNOTATION = "devctl.dev/network-policy";
export const NETWORK_POLICY_ENABLED = "enabled";
/** `kubectl label namespace NAME metrics=enabled`, as README and status say it. */
export const metricsLabelArg = (): string =>
  Object.entries(METRICS_NAMESPACE_LABEL)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");

export interface HardeningNames {
  /** The PodDisruptionBudget's and NetworkPolicy's name (the Deployment's). */
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** The Deployment's pod selector. */
  selector: Record<string, string>;
}

export function buildNamespace(name: string, labels: Record<string, string>): KubeObject {
  return { apiVersion: "v1", kind: "Namespace", metadata: { name, labels: { ...labels, ...POD_SECURITY_LABELS } } };
}

export function buildOperatorPdb(n: HardeningNames): KubeObject {
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: { name: n.name, namespace: n.namespace, labels: { ...n.labels } },
    spec: { maxUnavailable: 1, selector: { matchLabels: { ...n.selector } } },
  };
}

export function buildMetricsNetworkPolicy(n: HardeningNames): KubeObject {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: n.name, namespace: n.namespace, labels: { ...n.labels } },
    spec: {
      podSelector: { matchLabels: { ...n.selector } },
      policyTypes: ["Ingress"],
      // Only the metrics port, only from monitoring namespaces. The kubelet's liveness and readiness probes on the
      // health port come from the node (host network), which most CNIs (Calico, Cilium, kube-router) let through
      // whatever the policy says; a CNI that does not would need an ipBlock rule for the nodes' addresses.
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { ...METRICS_NAMESPACE_LABEL } } }],
          ports: [{ protocol: "TCP", port: METRICS_PORT_NAME }],
        },
      ],
    },
  };
}
