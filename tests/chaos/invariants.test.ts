import { expect, test } from "bun:test";
import type { KubeClient, KubeObject, ResourceType } from "../../src/kube/types.ts";
import { convergenceChecks, writesSurvived } from "./invariants.ts";

/** A client that lists the given objects by plural (all the checks need). */
const lister = (objects: Record<string, KubeObject[]>): KubeClient =>
  ({
    listAll: async (rt: ResourceType) => ({ items: objects[rt.plural] ?? [], metadata: {} }),
  }) as unknown as KubeClient;

const ref = (name: string, uid: string) => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});
const labelled = { app: "x", "managed-by": "webapp-operator" };
const child = (plural: "deployments" | "services", name: string, uid: string, owner?: ReturnType<typeof ref>) => ({
  apiVersion: plural === "services" ? "v1" : "apps/v1",
  kind: plural === "services" ? "Service" : "Deployment",
  metadata: { name, namespace: "ns", uid, labels: labelled, ...(owner ? { ownerReferences: [owner] } : {}) },
  spec: {},
});
const orphanCheck = async (objects: Record<string, KubeObject[]>, decoys: string[] = []) =>
  (await convergenceChecks(lister(objects), "ns", "taken", [], new Set(decoys))).find((c) =>
    c.name.startsWith("no orphaned children"),
  );

test("a child whose controller WebApp is gone is an orphan, whatever its name; only planted decoys (by uid) are exempt", async () => {
  const gone = { deployments: [child("deployments", "impostor-x-deployment", "d1", ref("x", "dead-uid"))] };
  expect((await orphanCheck(gone))?.problems).toEqual([
    expect.stringContaining("Deployment impostor-x-deployment: owner"),
  ]);
  const unowned = { services: [child("services", "impostor-svc", "s1")] };
  expect((await orphanCheck(unowned))?.ok).toBe(false);
  expect((await orphanCheck(unowned, ["s1"]))?.ok).toBe(true);
});

test("a spec the churn wrote last must be what the WebApp holds; a lost write or a vanished WebApp fails", async () => {
  const wa = (name: string, spec: Record<string, unknown>) =>
    ({ apiVersion: "apps.example.com/v1", kind: "WebApp", metadata: { name, namespace: "ns" }, spec }) as KubeObject;
  const client = lister({ webapps: [wa("a", { image: "nginx:1.27", replicas: 2, port: 80 })] });
  expect((await writesSurvived(client, "ns", new Map([["a", { replicas: 2 }]]))).ok).toBe(true);
  const lost = await writesSurvived(
    client,
    "ns",
    new Map<string, Record<string, unknown>>([
      ["a", { image: "httpd:2.4" }],
      ["b", { replicas: 1 }],
    ]),
  );
  expect(lost.problems).toEqual([
    'a: spec is {"image":"nginx:1.27"}, but the last write made it {"image":"httpd:2.4"}',
    'b: written last with {"replicas":1}, but it is gone',
  ]);
});
