import { expect, test } from "bun:test";
import {
  METRICS_APISERVICE,
  METRICS_SERVICE_HOST,
  metricsServerArgv,
  metricsServerObjects,
  tokenKubeconfig,
} from "./metrics-server-config.ts";

const layout = {
  binary: "/cache/metrics-server",
  address: "10.88.0.1",
  port: 4443,
  kubeconfig: "/state/pki/metrics-server.kubeconfig",
  servingCert: "/state/pki/metrics-server.crt",
  servingKey: "/state/pki/metrics-server.key",
};
const objects = metricsServerObjects({ address: "10.88.0.1", port: 4443, caPem: "PEM" });
const byKind = (kind: string) => objects.filter((o) => o.body.kind === kind).map((o) => o.body as Record<string, any>);

test("metrics-server serves on the bridge address only and scrapes only the real node's kubelet", () => {
  const argv = metricsServerArgv(layout);
  expect(argv[0]).toBe("/cache/metrics-server");
  expect(argv).toContain("--bind-address=10.88.0.1");
  expect(argv).toContain("--secure-port=4443");
  expect(argv).toContain("--kubelet-preferred-address-types=InternalIP");
  expect(argv).toContain("--node-selector=node.devctl.dev/kind=real");
  for (const flag of ["--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"])
    expect(argv).toContain(`${flag}=/state/pki/metrics-server.kubeconfig`);
});

test("the APIService is verified with the cluster CA and resolves to the one endpoint on the bridge", () => {
  const [api] = byKind("APIService");
  expect(api?.metadata.name).toBe(METRICS_APISERVICE);
  expect(api?.spec.caBundle).toBe(Buffer.from("PEM").toString("base64"));
  expect(api?.spec.insecureSkipTLSVerify).toBeUndefined();
  const [svc] = byKind("Service");
  expect(svc?.spec.selector).toBeUndefined();
  expect(svc?.spec.ports[0]).toMatchObject({ name: "https", port: api?.spec.service.port });
  const [slice] = byKind("EndpointSlice");
  expect(slice?.metadata.labels["kubernetes.io/service-name"]).toBe(svc?.metadata.name);
  expect(slice?.endpoints).toEqual([{ addresses: ["10.88.0.1"], conditions: { ready: true } }]);
  expect(slice?.ports).toEqual([{ name: "https", port: 4443, protocol: "TCP" }]);
  expect(METRICS_SERVICE_HOST).toBe(`${svc?.metadata.name}.${svc?.metadata.namespace}.svc`);
});

test("the RBAC is upstream's: every binding's subject is the ServiceAccount, and the reader aggregates to view", () => {
  const bindings = [...byKind("ClusterRoleBinding"), ...byKind("RoleBinding")];
  expect(bindings.map((b) => b.roleRef.name).sort()).toEqual([
    "extension-apiserver-authentication-reader",
    "system:auth-delegator",
    "system:metrics-server",
  ]);
  for (const b of bindings)
    expect(b.subjects).toEqual([{ kind: "ServiceAccount", name: "metrics-server", namespace: "kube-system" }]);
  const reader = byKind("ClusterRole").find((r) => r.metadata.name === "system:aggregated-metrics-reader");
  expect(reader?.metadata.labels["rbac.authorization.k8s.io/aggregate-to-view"]).toBe("true");
  const own = byKind("ClusterRole").find((r) => r.metadata.name === "system:metrics-server");
  expect(own?.rules).toContainEqual({ apiGroups: [""], resources: ["nodes/metrics"], verbs: ["get"] });
  expect(objects.at(-1)?.body.kind).toBe("APIService");
});

test("its kubeconfig carries the token and the CA, and no client cert", () => {
  const text = tokenKubeconfig({ server: "https://127.0.0.1:1003", caPem: "PEM", token: "t0k" });
  expect(text).toContain("token: t0k");
  expect(text).toContain(`certificate-authority-data: ${Buffer.from("PEM").toString("base64")}`);
  expect(text).not.toContain("client-certificate");
});
