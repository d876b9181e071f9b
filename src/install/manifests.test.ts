import { describe, expect, test } from "bun:test";
import { buildWebAppCrd } from "../api/crd.ts";
import run from "../cli/operator/run.ts";
import { parseDuration } from "../cli/_flags.ts";
import type { KubeObject } from "../kube/types.ts";
import { HEALTH_PORT, METRICS_PORT, RUNTIME_HEAP_ENV, TERMINATION_GRACE_SECONDS } from "./deployment.ts";
import {
  buildManifests,
  clusterRoleName,
  defaultImage,
  displayName,
  LEASE_NAME,
  resourceOf,
  versionLabelValue,
} from "./manifests.ts";
import type { PolicyRule } from "./rbac.ts";

const opts = { namespace: "devctl-system", image: "ghcr.io/devctl/devctl:1.2.3", replicas: 2, version: "1.2.3" };
const objects = buildManifests(opts);
const byKind = (kind: string) => objects.find((o) => o.kind === kind) as KubeObject & Record<string, any>;
const deployment = byKind("Deployment");
const pod = deployment.spec.template.spec;
const container = pod.containers[0];

describe("buildManifests", () => {
  test("lists the CRD first, then namespace, service account, RBAC, the policies, and the Deployment last", () => {
    expect(objects.map(displayName)).toEqual([
      "customresourcedefinition.apiextensions.k8s.io/webapps.apps.example.com",
      "namespace/devctl-system",
      "serviceaccount/webapp-operator",
      "clusterrole.rbac.authorization.k8s.io/webapp-operator-devctl-system",
      "clusterrolebinding.rbac.authorization.k8s.io/webapp-operator-devctl-system",
      "clusterrole.rbac.authorization.k8s.io/devctl-metrics-reader",
      "role.rbac.authorization.k8s.io/webapp-operator-leader-election",
      "rolebinding.rbac.authorization.k8s.io/webapp-operator-leader-election",
      "poddisruptionbudget.policy/webapp-operator",
      "deployment.apps/webapp-operator",
    ]);
    expect(
      buildManifests({ ...opts, networkPolicy: true })
        .map(displayName)
        .slice(8, 11),
    ).toEqual([
      "networkpolicy.networking.k8s.io/webapp-operator",
      "poddisruptionbudget.policy/webapp-operator",
      "deployment.apps/webapp-operator",
    ]);
  });

  test("the CRD is exactly the API's CRD builder output", () => {
    expect(objects[0]).toEqual(buildWebAppCrd() as unknown as KubeObject);
  });

  test("is deterministic and shares no mutable parts between calls", () => {
    const again = buildManifests(opts);
    expect(JSON.stringify(again)).toBe(JSON.stringify(objects));
    (again[2]!.metadata.labels as Record<string, string>).x = "y";
    expect(objects[2]!.metadata.labels).not.toHaveProperty("x");
  });

  test("every object is labelled as managed by devctl and namespaced objects live in the install namespace", () => {
    for (const o of objects) {
      expect(o.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("devctl");
      expect(o.metadata.namespace).toBe(resourceOf(o).namespaced ? "devctl-system" : undefined);
    }
  });

  test("cluster-scoped RBAC names carry the install namespace, so two installs never share a binding", () => {
    const other = buildManifests({ ...opts, namespace: "team-x" });
    expect(other.find((o) => o.kind === "ClusterRoleBinding")!.metadata.name).toBe(clusterRoleName("team-x"));
    expect(clusterRoleName("team-x")).not.toBe(clusterRoleName("devctl-system"));
    expect((other.find((o) => o.kind === "ClusterRoleBinding") as any).subjects).toEqual([
      { kind: "ServiceAccount", name: "webapp-operator", namespace: "team-x" },
    ]);
  });

  test("the default image is the release of this devctl", () => {
    expect(defaultImage("0.1.0")).toBe("ghcr.io/devctl/devctl:0.1.0");
  });

  test("version labels are valid label values even for odd versions", () => {
    expect(versionLabelValue("1.2.3")).toBe("1.2.3");
    expect(versionLabelValue("1.2.3+build.5")).toBe("1.2.3_build.5");
    expect(versionLabelValue("-x-")).toBe("x");
    expect(versionLabelValue("")).toBe("unknown");
    expect(versionLabelValue("v".repeat(80)).length).toBe(63);
  });
});

describe("RBAC", () => {
  const clusterRules: PolicyRule[] = byKind("ClusterRole").rules;
  const roleRules: PolicyRule[] = byKind("Role").rules;
  const verbsOf = (rules: PolicyRule[], group: string, resource: string) =>
    rules
      .filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource))
      .flatMap((r) => r.verbs)
      .sort();

  test("grants exactly what the operator uses, cluster-wide", () => {
    expect(verbsOf(clusterRules, "apps.example.com", "webapps")).toEqual(["get", "list", "watch"]);
    expect(verbsOf(clusterRules, "apps.example.com", "webapps/status")).toEqual(["patch"]);
    expect(verbsOf(clusterRules, "apps.example.com", "webapps/finalizers")).toEqual(["update"]);
    // No update (PUT): children are server-side applied; delete only for orphans the garbage collector missed and
    // for a child the spec no longer wants (a PodDisruptionBudget below 2 replicas).
    const children = ["create", "delete", "get", "list", "patch", "watch"];
    expect(verbsOf(clusterRules, "apps", "deployments")).toEqual(children);
    expect(verbsOf(clusterRules, "", "services")).toEqual(children);
    expect(verbsOf(clusterRules, "policy", "poddisruptionbudgets")).toEqual(children);
    expect(verbsOf(clusterRules, "networking.k8s.io", "ingresses")).toEqual(children);
    expect(verbsOf(clusterRules, "autoscaling", "horizontalpodautoscalers")).toEqual(children);
    // IngressClasses: cached by name, never read one by one or written.
    expect(verbsOf(clusterRules, "networking.k8s.io", "ingressclasses")).toEqual(["list", "watch"]);
    // Events: the recorder creates and patches; the kubelet's Unhealthy events of an unready pod are listed.
    expect(verbsOf(clusterRules, "", "events")).toEqual(["create", "list", "patch"]);
    // Pods of a WebApp that is not Ready are listed on demand: never watched, read one by one or written.
    expect(verbsOf(clusterRules, "", "pods")).toEqual(["list"]);
    expect(clusterRules.flatMap((r) => r.resources).sort()).toEqual([
      "deployments",
      "events",
      "horizontalpodautoscalers",
      "ingressclasses",
      "ingresses",
      "poddisruptionbudgets",
      "pods",
      "services",
      "subjectaccessreviews",
      "tokenreviews",
      "webapps",
      "webapps/finalizers",
      "webapps/status",
    ]);
  });

  test("secure metrics: exactly create on tokenreviews and subjectaccessreviews, nothing else of those groups", () => {
    expect(verbsOf(clusterRules, "authentication.k8s.io", "tokenreviews")).toEqual(["create"]);
    expect(verbsOf(clusterRules, "authorization.k8s.io", "subjectaccessreviews")).toEqual(["create"]);
    const authGroups = clusterRules.filter((r) =>
      r.apiGroups.some((g) => g.startsWith("authentication.k8s.io") || g.startsWith("authorization.k8s.io")),
    );
    expect(authGroups.flatMap((r) => r.resources).sort()).toEqual(["subjectaccessreviews", "tokenreviews"]);
  });

  test("ships the metrics reader ClusterRole, get on /metrics only, and binds it to no one", () => {
    const readers = objects.filter((o) => o.metadata.name === "devctl-metrics-reader");
    expect(readers.map((o) => o.kind)).toEqual(["ClusterRole"]);
    expect((readers[0] as Record<string, any>).rules).toEqual([{ nonResourceURLs: ["/metrics"], verbs: ["get"] }]);
    const bound = objects.flatMap((o) => ((o as Record<string, any>).roleRef?.name as string | undefined) ?? []);
    expect(bound).not.toContain("devctl-metrics-reader");
  });

  test("has no wildcard, no secrets and no CRD access", () => {
    const all = [...clusterRules, ...roleRules];
    for (const r of all) {
      for (const x of [...r.apiGroups, ...r.resources, ...r.verbs]) expect(x).not.toBe("*");
      expect(r.resources).not.toContain("secrets");
      expect(r.resources).not.toContain("customresourcedefinitions");
    }
  });

  test("leases are granted only through a Role in the install namespace", () => {
    expect(verbsOf(clusterRules, "coordination.k8s.io", "leases")).toEqual([]);
    expect(roleRules).toEqual([
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "create", "update", "list", "watch"],
      },
    ]);
    expect(byKind("Role").metadata.namespace).toBe("devctl-system");
    expect(byKind("RoleBinding").subjects).toEqual([
      { kind: "ServiceAccount", name: "webapp-operator", namespace: "devctl-system" },
    ]);
  });

  test("the lease install grants is the one the operator uses by default", () => {
    expect((run.args as Record<string, { default?: unknown }>)["lease-name"]?.default).toBe(LEASE_NAME);
  });
});

describe("the operator Deployment", () => {
  test("runs the image's entrypoint with leader election, its lease namespace, JSON logs and both ports", () => {
    expect(container.image).toBe("ghcr.io/devctl/devctl:1.2.3");
    expect(container.command).toBeUndefined();
    expect(container.args).toEqual([
      "--leader-elect",
      "--lease-name=webapp-operator-lock",
      "--lease-namespace=devctl-system",
      "--log-format=json",
      "--metrics-secure",
      `--metrics-bind-address=:${METRICS_PORT}`,
      `--health-probe-bind-address=:${HEALTH_PORT}`,
    ]);
    expect(pod.serviceAccountName).toBe("webapp-operator");
  });

  test("tells the operator its pod's name (the Lease holder says which pod leads) and the runtime its memory limit", () => {
    expect(container.env).toEqual([
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
      {
        name: "BUN_JSC_forceRAMSize",
        valueFrom: { resourceFieldRef: { containerName: "operator", resource: "limits.memory", divisor: "1" } },
      },
      { name: "BUN_JSC_smallHeapRAMFraction", value: "0.25" },
      { name: "BUN_JSC_mediumHeapRAMFraction", value: "0.5" },
    ]);
  });

  test("the runtime takes each option the install sets (Bun refuses to start on an unknown BUN_JSC_ variable)", () => {
    const options = { BUN_JSC_forceRAMSize: "402653184", ...RUNTIME_HEAP_ENV };
    const run = Bun.spawnSync([process.execPath, "-e", "0"], {
      env: { ...process.env, ...options, BUN_JSC_dumpOptions: "2" },
    });
    const dump = run.stdout.toString() + run.stderr.toString();
    expect(run.exitCode).toBe(0);
    for (const [name, value] of Object.entries(options))
      expect(dump).toMatch(new RegExp(`^ +${name.slice("BUN_JSC_".length)}=${value}( |$)`, "m"));
    // Without them: Bun's own fractions, which the install lowers.
    const plain = Bun.spawnSync([process.execPath, "-e", "0"], { env: { ...process.env, BUN_JSC_dumpOptions: "2" } });
    expect(plain.stdout.toString() + plain.stderr.toString()).toMatch(/^ +smallHeapRAMFraction=0\.8$/m);
  });

  test("--auto-rollback is passed on when install sets it, and only then", () => {
    const withIt = buildManifests({ ...opts, autoRollback: true }).find((o) => o.kind === "Deployment");
    const args = (withIt as Record<string, any>).spec.template.spec.containers[0].args as string[];
    expect(args.at(-1)).toBe("--auto-rollback");
    expect(container.args).not.toContain("--auto-rollback");
    expect(Object.keys(run.args as object)).toContain("auto-rollback");
  });

  test("every flag it passes is a flag of `operator run`", () => {
    const known = Object.keys(run.args as object);
    for (const arg of container.args as string[]) expect(known).toContain(arg.replace(/^--/, "").replace(/=.*$/, ""));
  });

  test("is hardened: non-root, read-only root, no escalation, no capabilities, seccomp RuntimeDefault", () => {
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
    });
  });

  test("serves metrics over HTTPS on 8443, on a port named https", () => {
    expect(METRICS_PORT).toBe(8443);
    expect(container.ports).toContainEqual({ name: "https", containerPort: 8443, protocol: "TCP" });
    expect((run.args as Record<string, { default?: unknown }>)["metrics-secure"]?.default).toBe(true);
  });

  test("probes /healthz and /readyz on the health port", () => {
    expect(container.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health", scheme: "HTTP" });
    expect(container.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health", scheme: "HTTP" });
    expect(container.ports).toContainEqual({ name: "health", containerPort: 8081, protocol: "TCP" });
  });

  // That the memory figures follow BENCHMARKS.md is tested in resources.test.ts, from the file itself.
  test("requests memory and a little CPU, and limits memory only (no CPU throttling)", () => {
    expect(Object.keys(container.resources.requests).sort()).toEqual(["cpu", "memory"]);
    expect(Object.keys(container.resources.limits)).toEqual(["memory"]);
  });

  test("gives the operator longer to stop than its own shutdown timeout", () => {
    const shutdownMs = parseDuration((run.args as any)["shutdown-timeout"].default, "shutdown-timeout");
    expect(pod.terminationGracePeriodSeconds).toBe(TERMINATION_GRACE_SECONDS);
    expect(TERMINATION_GRACE_SECONDS * 1000).toBeGreaterThan(shutdownMs);
  });

  test("spreads replicas across nodes only when there is more than one", () => {
    expect(pod.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm).toEqual({
      topologyKey: "kubernetes.io/hostname",
      labelSelector: { matchLabels: { "app.kubernetes.io/name": "devctl-operator" } },
    });
    const single = buildManifests({ ...opts, replicas: 1 }).find((o) => o.kind === "Deployment") as any;
    expect(single.spec.replicas).toBe(1);
    expect(single.spec.template.spec.affinity).toBeUndefined();
  });

  test("sets node selector, tolerations, pull policy and pull secrets only when given", () => {
    for (const key of ["nodeSelector", "tolerations", "imagePullSecrets"]) expect(pod).not.toHaveProperty(key);
    expect(container).not.toHaveProperty("imagePullPolicy");
    const set = buildManifests({
      ...opts,
      nodeSelector: { "kubernetes.io/os": "linux" },
      tolerations: [{ key: "dedicated", operator: "Equal", value: "operators", effect: "NoSchedule" }],
      imagePullPolicy: "Never",
      imagePullSecrets: ["regcred"],
    }).find((o) => o.kind === "Deployment") as any;
    const spec = set.spec.template.spec;
    expect(spec.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    expect(spec.tolerations).toEqual([
      { key: "dedicated", operator: "Equal", value: "operators", effect: "NoSchedule" },
    ]);
    expect(spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(spec.containers[0].imagePullPolicy).toBe("Never");
  });

  test("records the devctl version and selects its pods by name label", () => {
    expect(deployment.metadata.labels?.["app.kubernetes.io/version"]).toBe("1.2.3");
    expect(deployment.spec.selector).toEqual({ matchLabels: { "app.kubernetes.io/name": "devctl-operator" } });
    expect(deployment.spec.template.metadata.labels).toEqual({ "app.kubernetes.io/name": "devctl-operator" });
  });
});

describe("the image", () => {
  test("the Dockerfile's ENTRYPOINT is `devctl operator run`, so the Deployment passes flags only", async () => {
    const dockerfile = await Bun.file(new URL("../../Dockerfile", import.meta.url)).text();
    const line = dockerfile.split("\n").find((l) => l.startsWith("ENTRYPOINT "));
    const entrypoint = JSON.parse(line!.slice("ENTRYPOINT ".length)) as string[];
    expect(entrypoint.at(0)).toEndWith("/devctl");
    expect(entrypoint.slice(1)).toEqual(["operator", "run"]);
    expect(dockerfile).toMatch(/^USER 65532/m);
  });
});
