/**
 * `devctl operator manifests --format helm|kustomize`: the chart and the base hold exactly install's
 * objects, read back by the real tools: helm (built from its Go module, tests/_gotool.ts) lints the
 * chart, renders it equal to install's objects with the default values and with every value set, and
 * `helm install --wait` runs it on the local cluster (with networkPolicy.enabled, and status finds the hardened parts);
 * `kubectl kustomize` renders the base equal to them, with the PodDisruptionBudget and, with --network-policy, the NetworkPolicy.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clusterRoleName, defaultImage, type InstallOptions } from "../src/install/manifests.ts";
import { packageObjects } from "../src/install/packages.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { ensureGoTool, HELM } from "./_gotool.ts";
import { DEPLOYMENTS, devctl, eventually, getOrUndefined, kubeconfig, kubectl, NAMESPACES, sh } from "./_support.ts";

const scratch = mkdtempSync(join(tmpdir(), "devctl-packages-"));
const suffix = Math.random().toString(36).slice(2, 8);
const cleanups: (() => unknown)[] = [];
afterAll(() => {
  for (const c of cleanups.reverse()) c();
  rmSync(scratch, { recursive: true, force: true });
});

const version = () => /^devctl (\S+) /.exec(devctl(["--version"]).stdout)?.[1] ?? "";
const helm = (args: string[]) => sh([ensureGoTool(HELM), ...args], { env: { KUBECONFIG: kubeconfig } });
const docs = (text: string) =>
  text
    .split(/^---$/m)
    .map((d) => Bun.YAML.parse(d) as KubeObject | null)
    .filter((d): d is KubeObject => !!d);
const byName = (objects: KubeObject[]) =>
  Object.fromEntries(objects.map((o) => [`${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`, o]));
/**
 * helm's stderr without client-go's log of a read that helm's own wait cancelled once everything was ready,
 * as in `E1203 09:50:16.893842   28482 request.go:1198] "Unexpected error when reading response body"
 * err="context canceled"` (exit code 0; 1 install in 80 here, and most likely what failed one CI run, whose
 * log kept no reason), or at Info level its reflector's `"Warning: watch ended with error" ... type="...
 * CustomResourceDefinition" err="... unable to decode an event from the watch stream: context canceled"` (a cold
 * CI-style run of issue #30's branch, exit code 0). Every other line stays.
 */
const withoutCancelledReads = (stderr: string) =>
  stderr
    .split("\n")
    .filter((l) => !/^[IEW]\d{4} [\d:.]+\s+\d+ [\w.-]+\.go:\d+\] .*context canceled/.test(l))
    .join("\n");
const installs = (o: InstallOptions) => byName(JSON.parse(JSON.stringify(packageObjects(o))));

function write(format: string, args: string[] = []): string {
  const dir = join(scratch, `${format}-${Math.random().toString(36).slice(2, 6)}`);
  const r = devctl(["operator", "manifests", "--format", format, "--output", dir, ...args]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({
    code: 0,
    stderr: expect.stringContaining(`(${format}) to ${dir}`),
  });
  return dir;
}

describe("the kustomize base", () => {
  test("kubectl kustomize renders exactly install's objects, with --monitoring the monitoring ones too", () => {
    const dir = write("kustomize", ["-n", "platform", "--replicas", "1", "--monitoring"]);
    const r = kubectl(["kustomize", dir]);
    expect(r.code).toBe(0);
    expect(byName(docs(r.stdout))).toEqual(
      installs({
        namespace: "platform",
        image: defaultImage(version()),
        replicas: 1,
        version: version(),
        monitoring: true,
      }),
    );
    expect(Object.keys(byName(docs(r.stdout)))).toContain("PodDisruptionBudget/platform/webapp-operator");
    expect(Object.keys(byName(docs(r.stdout)))).not.toContain("NetworkPolicy/platform/webapp-operator");
  });

  test("with --network-policy it holds the NetworkPolicy too, and the namespace's Pod Security labels", () => {
    const r = kubectl(["kustomize", write("kustomize", ["-n", "platform", "--network-policy"])]);
    expect(r.code).toBe(0);
    const rendered = byName(docs(r.stdout));
    expect(rendered).toEqual(
      installs({
        namespace: "platform",
        image: defaultImage(version()),
        replicas: 2,
        version: version(),
        networkPolicy: true,
      }),
    );
    expect(rendered["NetworkPolicy/platform/webapp-operator"]).toBeDefined();
    expect(rendered["Namespace//platform"]?.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
  });
});

describe("the Helm chart", () => {
  test("helm lint finds nothing wrong", () => {
    const r = helm(["lint", "--strict", write("helm")]);
    expect({ code: r.code, out: r.stdout }).toEqual({ code: 0, out: expect.stringContaining("0 chart(s) failed") });
  }, 600_000);

  test("helm template with the default values gives exactly install's objects", () => {
    const r = helm(["template", "devctl", write("helm"), "--include-crds"]);
    expect(r.stderr).toBe("");
    const rendered = byName(docs(r.stdout));
    expect(rendered).toEqual(
      installs({ namespace: "devctl-system", image: defaultImage(version()), replicas: 2, version: version() }),
    );
    // The hardened parts by default: the restricted namespace and the PodDisruptionBudget, no NetworkPolicy.
    expect(rendered["Namespace//devctl-system"]?.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe(
      "restricted",
    );
    expect(rendered["PodDisruptionBudget/devctl-system/webapp-operator"]).toBeDefined();
    expect(rendered["NetworkPolicy/devctl-system/webapp-operator"]).toBeUndefined();
  }, 600_000);

  test("every value changes what install's flag of the same name changes", () => {
    const values = join(scratch, "values.yaml");
    writeFileSync(
      values,
      JSON.stringify({
        namespace: "platform",
        image: "registry.example.com/devctl:9.9.9",
        replicas: 1,
        imagePullPolicy: "Never",
        imagePullSecrets: ["regcred"],
        nodeSelector: { "kubernetes.io/os": "linux" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" }],
        resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "1Gi" } },
        autoRollback: true,
        monitoring: { enabled: true },
        networkPolicy: { enabled: true },
      }),
    );
    const r = helm(["template", "devctl", write("helm"), "--include-crds", "-f", values]);
    expect(r.stderr).toBe("");
    expect(byName(docs(r.stdout))).toEqual(
      installs({
        namespace: "platform",
        image: "registry.example.com/devctl:9.9.9",
        replicas: 1,
        version: version(),
        imagePullPolicy: "Never",
        imagePullSecrets: ["regcred"],
        nodeSelector: { "kubernetes.io/os": "linux" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" }],
        memoryRequest: "128Mi",
        memoryLimit: "1Gi",
        autoRollback: true,
        monitoring: true,
        networkPolicy: true,
      }),
    );
    expect(byName(docs(r.stdout))["NetworkPolicy/platform/webapp-operator"]).toBeDefined();
  }, 600_000);

  test("helm install --wait runs it on the cluster until the Deployment is ready, and helm uninstall removes it", async () => {
    const ns = `helm-${suffix}`;
    const release = `devctl-${suffix}`;
    cleanups.push(() => helm(["uninstall", release, "-n", "default", "--wait"]));
    const r = helm([
      "install",
      release,
      write("helm", ["--replicas", "1"]),
      "-n",
      "default",
      "--set",
      `namespace=${ns}`,
      "--set",
      "networkPolicy.enabled=true",
      "--wait",
      "--timeout",
      "90s",
    ]);
    expect({ code: r.code, stderr: withoutCancelledReads(r.stderr) }).toEqual({ code: 0, stderr: "" });
    const dep = await kubeGet(ns);
    expect(dep?.status?.readyReplicas).toBe(1);
    const status = devctl(["operator", "status", "-n", ns]);
    expect(status.stdout).toContain("Replicas:  1/1 ready");
    expect(status.stdout).toContain(
      'Hardening: Pod Security "restricted" enforced, PodDisruptionBudget (maxUnavailable 1), NetworkPolicy (metrics only',
    );
    const gone = helm(["uninstall", release, "-n", "default", "--wait", "--timeout", "90s"]);
    expect(gone.code).toBe(0);
    await eventually(async () => !(await getOrUndefined(NAMESPACES, ns)), 60_000, `namespace ${ns} to be gone`);
    expect(await getOrUndefined(DEPLOYMENTS, "webapp-operator", ns)).toBeUndefined();
    const clusterRoles = {
      group: "rbac.authorization.k8s.io",
      version: "v1",
      plural: "clusterroles",
      kind: "ClusterRole",
      namespaced: false,
    };
    expect(await getOrUndefined(clusterRoles, clusterRoleName(ns))).toBeUndefined();
  }, 300_000);
});

async function kubeGet(ns: string) {
  return getOrUndefined<KubeObject & { status?: { readyReplicas?: number } }>(DEPLOYMENTS, "webapp-operator", ns);
}
