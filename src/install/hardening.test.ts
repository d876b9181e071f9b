import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { METRICS_PORT, METRICS_PORT_NAME } from "./deployment.ts";
import { METRICS_NAMESPACE_LABEL, NETWORK_POLICY_ANNOTATION, POD_SECURITY_LABELS } from "./hardening.ts";
import { buildManifests } from "./manifests.ts";

const opts = { namespace: "devctl-system", image: "ghcr.io/devctl/devctl:1.2.3", replicas: 2, version: "1.2.3" };
type Obj = KubeObject & Record<string, any>;
const of = (objects: KubeObject[], kind: string) => objects.find((o) => o.kind === kind) as Obj;
const plain = buildManifests(opts);
const guarded = buildManifests({ ...opts, networkPolicy: true });
const deployment = of(plain, "Deployment");

describe("the hardened install's objects", () => {
  test("the namespace enforces, audits and warns at the restricted Pod Security level, latest version", () => {
    expect(of(plain, "Namespace").metadata).toEqual({
      name: "devctl-system",
      labels: {
        "app.kubernetes.io/managed-by": "devctl",
        "pod-security.kubernetes.io/enforce": "restricted",
        "pod-security.kubernetes.io/enforce-version": "latest",
        "pod-security.kubernetes.io/audit": "restricted",
        "pod-security.kubernetes.io/audit-version": "latest",
        "pod-security.kubernetes.io/warn": "restricted",
        "pod-security.kubernetes.io/warn-version": "latest",
      },
    });
    expect(Object.keys(POD_SECURITY_LABELS)).toHaveLength(6);
  });

  test("the operator's pod meets what restricted checks: non-root, seccomp RuntimeDefault, ALL dropped, no escalation", () => {
    const pod = deployment.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
    expect(pod.hostNetwork ?? pod.hostPID ?? pod.hostIPC).toBeUndefined();
    for (const c of pod.containers) {
      expect(c.securityContext).toMatchObject({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
      expect(c.securityContext.capabilities.add).toBeUndefined();
      expect(c.securityContext.privileged).toBeUndefined();
      expect(c.ports.every((p: { hostPort?: number }) => p.hostPort === undefined)).toBe(true);
    }
    // restricted allows only these volume types.
    const allowed = [
      "configMap",
      "csi",
      "downwardAPI",
      "emptyDir",
      "ephemeral",
      "persistentVolumeClaim",
      "projected",
      "secret",
    ];
    for (const v of pod.volumes)
      expect(
        Object.keys(v)
          .filter((k) => k !== "name")
          .every((k) => allowed.includes(k)),
      ).toBe(true);
  });

  test("the PodDisruptionBudget selects exactly the Deployment's pods, one unavailable at a time", () => {
    expect(of(plain, "PodDisruptionBudget")).toEqual({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: {
        name: "webapp-operator",
        namespace: "devctl-system",
        labels: { "app.kubernetes.io/name": "devctl-operator", "app.kubernetes.io/managed-by": "devctl" },
      },
      spec: { maxUnavailable: 1, selector: { matchLabels: deployment.spec.selector.matchLabels } },
    });
    expect(of(plain, "PodDisruptionBudget").spec.selector.matchLabels).toEqual(
      deployment.spec.template.metadata.labels,
    );
  });

  test("without --network-policy there is no NetworkPolicy and no annotation saying one is wanted", () => {
    expect(of(plain, "NetworkPolicy")).toBeUndefined();
    expect(deployment.metadata.annotations).toBeUndefined();
  });

  test("with it, the NetworkPolicy admits only the Deployment's metrics port, by name, from namespaces labelled for metrics", () => {
    const policy = of(guarded, "NetworkPolicy");
    const dep = of(guarded, "Deployment");
    expect(policy.metadata).toMatchObject({ name: "webapp-operator", namespace: "devctl-system" });
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: dep.spec.selector.matchLabels },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { metrics: "enabled" } } }],
          ports: [{ protocol: "TCP", port: METRICS_PORT_NAME }],
        },
      ],
    });
    expect(METRICS_NAMESPACE_LABEL).toEqual({ metrics: "enabled" });
    // The named port is the container's metrics port.
    const port = dep.spec.template.spec.containers[0].ports.find((p: { name: string }) => p.name === METRICS_PORT_NAME);
    expect(port.containerPort).toBe(METRICS_PORT);
    expect(dep.metadata.annotations).toEqual({ [NETWORK_POLICY_ANNOTATION]: "enabled" });
    // The annotation is on the Deployment only: adding the policy rolls no pod.
    expect(dep.spec.template).toEqual(deployment.spec.template);
  });
});
