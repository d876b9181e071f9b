import { describe, expect, test } from "bun:test";
import { WEBAPP_RESOURCE } from "../api/webapp.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { KubeError } from "../kube/errors.ts";
import { POD_SECURITY_LABELS } from "./hardening.ts";
import { buildManifests, resourceOf } from "./manifests.ts";
import { formatStatus, readStatus, type OperatorStatus } from "./status.ts";

const NOW = Date.parse("2024-05-01T12:00:10Z");
const full: OperatorStatus = {
  namespace: "devctl-system",
  deployment: {
    version: "0.1.0",
    image: "ghcr.io/devctl/devctl:0.1.0",
    desired: 2,
    ready: 2,
    updated: 2,
    available: 2,
    rollout: { kind: "complete", reason: "RolloutComplete", message: "2 of 2 replicas ready and available" },
  },
  leader: {
    holder: "webapp-operator-7d9f-abc_1234",
    renewTime: "2024-05-01T12:00:07.123456Z",
    leaseDurationSeconds: 15,
  },
  crd: { schemaVersion: "1", established: true },
  webapps: {
    total: 4,
    available: 2,
    degraded: 1,
    progressing: 1,
    noStatus: 1,
    kstatus: { Current: 2, InProgress: 1, Failed: 1, Terminating: 0 },
  },
};

describe("formatStatus", () => {
  test("shows version, image, replicas, the leader with its last renewal, the CRD and WebApps by condition", () => {
    expect(formatStatus(full, NOW)).toBe(
      [
        "Namespace: devctl-system",
        "Version:   0.1.0",
        "Image:     ghcr.io/devctl/devctl:0.1.0",
        "Replicas:  2/2 ready (2 up to date, 2 available)",
        "Rollout:   complete: 2 of 2 replicas ready and available",
        "Leader:    webapp-operator-7d9f-abc_1234, last renewed 2s ago at 2024-05-01T12:00:07.123456Z",
        "CRD:       webapps.apps.example.com (schema version 1, Established)",
        "WebApps:   4 in all namespaces: 2 Available, 1 Degraded, 1 Progressing, 1 without status yet; for kstatus: 2 Current, 1 InProgress, 1 Failed, 0 Terminating",
      ].join("\n"),
    );
  });

  test("a rollout past its deadline says so, as install --wait would", () => {
    const failed: OperatorStatus["deployment"] = {
      ...full.deployment!,
      rollout: { kind: "failed", reason: "ProgressDeadlineExceeded", message: "progress deadline exceeded: x" },
    };
    expect(formatStatus({ ...full, deployment: failed }, NOW)).toContain(
      "Rollout:   failed: progress deadline exceeded: x",
    );
  });

  test("a lease not renewed within its duration says that nobody leads", () => {
    const stale = { ...full, leader: { ...full.leader!, renewTime: "2024-05-01T11:59:00Z" } };
    expect(formatStatus(stale, NOW)).toContain(
      "last renewed 70s ago at 2024-05-01T11:59:00Z (expired: not renewed within 15s, no replica is leading)",
    );
    expect(formatStatus({ ...full, leader: { holder: "", leaseDurationSeconds: 15 } }, NOW)).toContain(
      "Leader:    none (the last leader released the lease)",
    );
  });

  test("an install that is not there says how to install it", () => {
    const text = formatStatus({ namespace: "x" }, NOW);
    expect(text).toContain(
      "Operator:  not installed (no Deployment webapp-operator in namespace x): run devctl operator install",
    );
    expect(text).toContain("CRD:       webapps.apps.example.com not installed");
    expect(text).not.toContain("WebApps");
  });

  test("WebApps that may not be listed are reported as unknown with the reason", () => {
    expect(
      formatStatus({ ...full, webapps: { error: "forbidden: cannot list webapps.apps.example.com" } }, NOW),
    ).toContain("WebApps:   unknown: forbidden: cannot list webapps.apps.example.com");
  });
});

describe("readStatus", () => {
  test("counts WebApps by condition and by kstatus's verdict, as Flux or helm --wait would see them", async () => {
    const fake = createFakeCluster();
    const wa = (name: string, conditions: { type: string; status: string }[], meta = {}) =>
      fake.put(WEBAPP_RESOURCE, {
        apiVersion: "apps.example.com/v1",
        kind: "WebApp",
        metadata: { name, namespace: "a", generation: 1, ...meta },
        status: { observedGeneration: 1, conditions },
      });
    wa("ready", [
      { type: "Ready", status: "True" },
      { type: "Available", status: "True" },
    ]);
    wa("rolling", [
      { type: "Reconciling", status: "True" },
      { type: "Progressing", status: "True" },
    ]);
    wa("blocked", [
      { type: "Stalled", status: "True" },
      { type: "Degraded", status: "True" },
    ]);
    wa("going", [{ type: "Ready", status: "True" }], { deletionTimestamp: "2024-05-01T12:00:00Z" });
    const s = await readStatus(fake, "devctl-system");
    expect(s.webapps).toEqual({
      total: 4,
      available: 1,
      degraded: 1,
      progressing: 1,
      noStatus: 0,
      kstatus: { Current: 1, InProgress: 1, Failed: 1, Terminating: 1 },
    });
  });

  test("reads the hardened parts: the namespace's labels, the PodDisruptionBudget, the NetworkPolicy and whether one is wanted", async () => {
    const fake = createFakeCluster();
    const installed = buildManifests({ namespace: "devctl-system", image: "i:1", replicas: 2, networkPolicy: true });
    for (const o of installed) if (o.kind !== "NetworkPolicy") fake.put(resourceOf(o), o);
    const s = await readStatus(fake, "devctl-system");
    expect(s.hardening).toEqual({
      namespaceLabels: { "app.kubernetes.io/managed-by": "devctl", ...POD_SECURITY_LABELS },
      disruptionBudget: true,
      networkPolicy: false,
    });
    expect(s.deployment?.networkPolicy).toBe(true);
    expect(formatStatus(s, NOW)).toContain(
      'Hardening: Pod Security "restricted" enforced, PodDisruptionBudget (maxUnavailable 1), no NetworkPolicy\n',
    );
    expect(formatStatus(s, NOW)).toContain(
      "the operator was installed with --network-policy but there is no NetworkPolicy webapp-operator",
    );
  });

  test("a hardened part this identity may not read is unknown, not missing", async () => {
    const fake = createFakeCluster();
    for (const o of buildManifests({ namespace: "devctl-system", image: "i:1", replicas: 2 }))
      fake.put(resourceOf(o), o);
    fake.failWith = (method, rt) =>
      method === "get" && (rt.plural === "namespaces" || rt.plural === "poddisruptionbudgets")
        ? new KubeError("Forbidden", `forbidden: cannot get ${rt.plural}`, 403)
        : undefined;
    const s = await readStatus(fake, "devctl-system");
    expect(s.hardening).toEqual({ networkPolicy: false });
    expect(formatStatus(s, NOW)).toContain(
      "Hardening: Pod Security unknown, PodDisruptionBudget unknown, no NetworkPolicy (install --network-policy adds one)",
    );
    expect(formatStatus(s, NOW)).not.toContain("Problems");
  });
});
