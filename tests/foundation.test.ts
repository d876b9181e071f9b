/**
 * The test cluster is real and the client works against it: the Deployment and ReplicaSet controllers,
 * KWOK's fake kubelet, the garbage collector, CRDs, and the compiled executable with certificate and
 * service-account-token authentication.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConnection } from "../src/kube/config.ts";
import { adminConnection, kubeconfigYaml } from "./_identities.ts";
import { type Prerequisite, testWhen } from "./_skip.ts";
import type { KubeObject } from "../src/kube/types.ts";
import {
  CRDS,
  DEPLOYMENTS,
  DEVCTL,
  PODS,
  REPLICASETS,
  SERVICEACCOUNTS,
  devctl,
  eventually,
  kube,
  kubeconfig,
  kubectl,
  sh,
  tempNamespace,
} from "./_support.ts";

let ns: Awaited<ReturnType<typeof tempNamespace>>;
/** The kubeconfigs these tests write (one holds a ServiceAccount token): removed after the suite. */
const scratch = mkdtempSync(join(tmpdir(), "devctl-foundation-"));
const scratchDir = (name: string) => {
  const dir = join(scratch, name);
  mkdirSync(dir);
  return dir;
};
beforeAll(async () => {
  ns = await tempNamespace("foundation");
});
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await ns.drop();
});

const deployment = (name: string, replicas: number): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: ns.name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
    },
  },
});

describe("the test cluster", () => {
  test("a Deployment of 3 replicas reaches readyReplicas 3", async () => {
    await kube.create(DEPLOYMENTS, deployment("web", 3));
    const ready = await eventually(
      async () => {
        const d = await kube.get<KubeObject & { status?: { readyReplicas?: number } }>(DEPLOYMENTS, "web", ns.name);
        return d.status?.readyReplicas === 3 ? d : undefined;
      },
      60_000,
      "3 ready replicas",
    );
    expect(ready.status?.readyReplicas).toBe(3);
  });

  test("deleting a Deployment garbage-collects its ReplicaSet and Pods", async () => {
    await kube.create(DEPLOYMENTS, deployment("gc", 2));
    await eventually(
      async () => (await kube.list(PODS, { namespace: ns.name, labelSelector: "app=gc" })).items.length === 2,
      60_000,
      "2 pods",
    );
    expect((await kube.list(REPLICASETS, { namespace: ns.name, labelSelector: "app=gc" })).items.length).toBe(1);
    await kube.delete(DEPLOYMENTS, "gc", ns.name, { propagationPolicy: "Background" });
    await eventually(
      async () => {
        const rs = await kube.list(REPLICASETS, { namespace: ns.name, labelSelector: "app=gc" });
        const pods = await kube.list(PODS, { namespace: ns.name, labelSelector: "app=gc" });
        return rs.items.length === 0 && pods.items.length === 0;
      },
      60_000,
      "ReplicaSet and Pods to be garbage-collected",
    );
  });

  test("the WebApp CRD from crd/ is Established and kubectl get wa works", async () => {
    const apply = kubectl(["apply", "--server-side", "--force-conflicts", "-f", "crd/webapps.apps.example.com.yaml"]);
    expect(apply.stderr).toBe("");
    expect(apply.code).toBe(0);
    await eventually(
      async () => {
        const crd = await kube.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
          CRDS,
          "webapps.apps.example.com",
        );
        return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
      },
      30_000,
      "CRD Established",
    );
    const created = kubectl(["apply", "-n", ns.name, "-f", "crd/examples/test-app.yaml"]);
    expect(created.code).toBe(0);
    const got = kubectl(["get", "wa", "-n", ns.name, "-o", "name"]);
    expect(got.code).toBe(0);
    expect(got.stdout.trim()).toBe("webapp.apps.example.com/test-app");
  });
});

const CERT_AUTH: Prerequisite = {
  met: !!adminConnection().cert,
  reason: "the test kubeconfig (DEVCTL_TEST_KUBECONFIG) does not authenticate with a client certificate",
};

describe("the compiled executable reaches the API server", () => {
  testWhen(CERT_AUTH)(
    "with the client certificate of the test kubeconfig, on an endpoint anonymous users may not read; without the certificate it is refused",
    () => {
      // /version is open to anonymous users; listing WebApps is not, so only an authenticated client passes.
      const r = devctl(["webapp", "list", "-n", ns.name, "--kubeconfig", kubeconfig]);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("test-app");
      const admin = adminConnection();
      const dir = scratchDir("nocert");
      const withoutCert = join(dir, "kubeconfig");
      writeFileSync(withoutCert, kubeconfigYaml(admin.server, "no-cert", { ca: admin.ca }));
      const anonymous = devctl(["webapp", "list", "-n", ns.name, "--kubeconfig", withoutCert]);
      expect(anonymous.code).toBe(1);
      expect(anonymous.stderr).toMatch(/^error: (forbidden|unauthorized)\b/m);
      expect(anonymous.stdout).not.toContain("test-app");
    },
  );

  test("with a ServiceAccount token from the TokenRequest API and the cluster CA", async () => {
    await kube.create(SERVICEACCOUNTS, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "probe", namespace: ns.name },
    });
    // TokenRequest is the token subresource of the ServiceAccount.
    const tr = await kube.raw<{ status: { token: string } }>(
      "POST",
      `/api/v1/namespaces/${ns.name}/serviceaccounts/probe/token`,
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { expirationSeconds: 600 },
      },
    );
    expect(tr.status.token.length).toBeGreaterThan(20);
    const conn = loadConnection({ kubeconfig });
    const dir = scratchDir("sa");
    writeFileSync(join(dir, "ca.crt"), conn.tls.ca ?? "");
    const file = join(dir, "kubeconfig");
    writeFileSync(
      file,
      `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "${conn.server}", certificate-authority: "${join(dir, "ca.crt")}"}}]
users: [{name: probe, user: {token: "${tr.status.token}"}}]
contexts: [{name: sa, context: {cluster: c, user: probe, namespace: ${ns.name}}}]
current-context: sa
`,
    );
    // The server's certificate is verified against the CA file, and the token authenticates...
    const ok = sh([DEVCTL, "version"], { env: { KUBECONFIG: file } });
    expect(ok.stderr).toBe("");
    expect(ok.stdout).toMatch(/Server: v\d+/);
    // ...and a garbage token is rejected, so the token above really was what authenticated us.
    writeFileSync(file, (await Bun.file(file).text()).replace(tr.status.token, "garbage"));
    const bad = sh([DEVCTL, "version"], { env: { KUBECONFIG: file } });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("unauthorized");
  });
});
