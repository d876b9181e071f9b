import { describe, expect, test } from "bun:test";
import { KubeError } from "../kube/errors.ts";
import type { ResourceType } from "../kube/types.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { buildManifests, INSTALL_RESOURCES, resourceOf } from "./manifests.ts";
import { namespaceIsOurs, uninstall, webAppFootprint } from "./uninstall.ts";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";

const NAMESPACES = INSTALL_RESOURCES.Namespace as ResourceType;
const ours = { "app.kubernetes.io/managed-by": "devctl" };

describe("namespaceIsOurs", () => {
  test("only a namespace devctl labelled and nobody else wrote to is ours to delete", () => {
    expect(
      namespaceIsOurs({ metadata: { name: "devctl-system", labels: ours, managedFields: [{ manager: "devctl" }] } }),
    ).toBe(true);
    expect(
      namespaceIsOurs({
        metadata: {
          name: "devctl-system",
          labels: ours,
          managedFields: [{ manager: "devctl" }, { manager: "kubectl-create" }],
        },
      }),
    ).toBe(false);
    expect(namespaceIsOurs({ metadata: { name: "devctl-system", managedFields: [{ manager: "devctl" }] } })).toBe(
      false,
    );
    expect(
      namespaceIsOurs({ metadata: { name: "default", labels: ours, managedFields: [{ manager: "devctl" }] } }),
    ).toBe(false);
    expect(namespaceIsOurs({ metadata: { name: "kube-system", labels: ours } })).toBe(false);
    // Created by a client whose User-Agent is devctl's (an Update), then applied by install: not devctl's alone.
    expect(
      namespaceIsOurs({
        metadata: {
          name: "team",
          labels: ours,
          managedFields: [
            { manager: "devctl", operation: "Update" },
            { manager: "devctl", operation: "Apply" },
          ],
        },
      }),
    ).toBe(false);
  });
});

describe("uninstall", () => {
  const install = (networkPolicy = false) => {
    const fake = createFakeCluster();
    for (const o of buildManifests({ namespace: "ns", image: "i", replicas: 1, networkPolicy })) {
      fake.put(
        resourceOf(o),
        o.kind === "Namespace" ? { ...o, metadata: { ...o.metadata, managedFields: [{ manager: "devctl" }] } } : o,
      );
    }
    return fake;
  };

  test("deletes the operator, its RBAC and its namespace, newest first, and keeps the CRD", async () => {
    const fake = install();
    const results = await uninstall(fake, "ns", { deleteCrd: false });
    expect(results.map((r) => `${r.name} ${r.action}`)).toEqual([
      "deployment.apps/webapp-operator deleted",
      "poddisruptionbudget.policy/webapp-operator deleted",
      "rolebinding.rbac.authorization.k8s.io/webapp-operator-leader-election deleted",
      "role.rbac.authorization.k8s.io/webapp-operator-leader-election deleted",
      "clusterrole.rbac.authorization.k8s.io/devctl-metrics-reader deleted",
      "clusterrolebinding.rbac.authorization.k8s.io/webapp-operator-ns deleted",
      "clusterrole.rbac.authorization.k8s.io/webapp-operator-ns deleted",
      "serviceaccount/webapp-operator deleted",
      "lease.coordination.k8s.io/webapp-operator-lock not found",
      "namespace/ns deleted",
      "customresourcedefinition.apiextensions.k8s.io/webapps.apps.example.com kept",
    ]);
    expect([...fake.objects.keys()]).toEqual(["customresourcedefinitions//webapps.apps.example.com"]);
  });

  test("an install with --network-policy loses its NetworkPolicy too; one never installed is not reported", async () => {
    const fake = install(true);
    const results = await uninstall(fake, "ns", { deleteCrd: false });
    expect(results.slice(0, 3).map((r) => `${r.name} ${r.action}`)).toEqual([
      "deployment.apps/webapp-operator deleted",
      "poddisruptionbudget.policy/webapp-operator deleted",
      "networkpolicy.networking.k8s.io/webapp-operator deleted",
    ]);
    expect([...fake.objects.keys()]).toEqual(["customresourcedefinitions//webapps.apps.example.com"]);
    const again = await uninstall(fake, "ns", { deleteCrd: false });
    expect(again.map((r) => r.name)).not.toContain("networkpolicy.networking.k8s.io/webapp-operator");
    expect(again.map((r) => r.name)).toContain("poddisruptionbudget.policy/webapp-operator");
  });

  test("with deleteCrd the CRD goes too; a second run finds nothing and fails on nothing", async () => {
    const fake = install();
    await uninstall(fake, "ns", { deleteCrd: true });
    expect(fake.objects.size).toBe(0);
    const again = await uninstall(fake, "ns", { deleteCrd: true });
    expect(again.every((r) => r.action === "not found")).toBe(true);
  });

  test("keeps a namespace that other tools wrote to, and says why", async () => {
    const fake = install();
    fake.put(NAMESPACES, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ns", labels: ours, managedFields: [{ manager: "devctl" }, { manager: "helm" }] },
    });
    const results = await uninstall(fake, "ns", { deleteCrd: false });
    const ns = results.find((r) => r.name === "namespace/ns");
    expect(ns?.action).toBe("kept");
    expect(ns?.note).toContain("not created by devctl alone");
    expect(fake.objects.has("namespaces//ns")).toBe(true);
  });
});

describe("webAppFootprint", () => {
  test("counts WebApps, their namespaces, and the Deployments and Services they control", async () => {
    const fake = createFakeCluster();
    const owner = (name: string) => [
      { apiVersion: "apps.example.com/v1", kind: "WebApp", name, uid: `u-${name}`, controller: true },
    ];
    for (const [ns, name] of [
      ["b", "x"],
      ["a", "y"],
      ["a", "z"],
    ] as const) {
      fake.put(WEBAPP_RESOURCE, { metadata: { name, namespace: ns } });
      fake.put(DEPLOYMENT_RESOURCE, {
        metadata: { name: `${name}-deployment`, namespace: ns, ownerReferences: owner(name) },
      });
    }
    fake.put(SERVICE_RESOURCE, { metadata: { name: "x-svc", namespace: "b", ownerReferences: owner("x") } });
    fake.put(SERVICE_RESOURCE, { metadata: { name: "unrelated", namespace: "b" } });
    expect(await webAppFootprint(fake)).toEqual({ webapps: 3, namespaces: ["a", "b"], deployments: 3, services: 1 });
  });

  test("is all zeros when the CRD is not installed", async () => {
    const fake = createFakeCluster();
    fake.listAll = async () => {
      throw new KubeError("NotFound", "the server could not find the requested resource", 404);
    };
    expect(await webAppFootprint(fake)).toEqual({ webapps: 0, namespaces: [], deployments: 0, services: 0 });
  });
});
