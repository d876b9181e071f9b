import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { isWebAppChild, LAST_APPLIED_ANNOTATION, shapeChild, shapeWebApp } from "./cache-shape.ts";
import { desiredDeployment } from "./desired.ts";
import { testApp } from "./_test-fixtures.ts";

const MANAGED_FIELDS = [{ manager: "webapp-operator", operation: "Apply", fieldsV1: { "f:spec": {} } }];
const STATUS = { observedGeneration: 1, replicas: 3, readyReplicas: 3, conditions: [{ type: "Available" }] };

/** Our Deployment as the API server returns it: managedFields, a last-applied annotation, spec and status. */
function liveDeployment(): KubeObject {
  const intent = desiredDeployment(testApp());
  return {
    ...intent,
    metadata: {
      ...intent.metadata,
      uid: "dep-uid",
      resourceVersion: "42",
      generation: 2,
      creationTimestamp: "2026-12-01T00:00:00Z",
      annotations: { "deployment.kubernetes.io/revision": "1", [LAST_APPLIED_ANNOTATION]: '{"big":"json"}' },
      managedFields: MANAGED_FIELDS,
    },
    status: STATUS,
  };
}

describe("what the caches keep", () => {
  test("our child keeps spec, status, labels, owner references, other annotations and managers; fieldsV1 and last-applied go", () => {
    const live = liveDeployment();
    const shaped = shapeChild(live);
    expect(shaped.spec).toBe(live.spec);
    expect(shaped.status).toBe(live.status);
    expect(shaped.metadata).toEqual({
      name: "test-app-deployment",
      namespace: "default",
      labels: { app: "test-app", "managed-by": "webapp-operator" },
      ownerReferences: live.metadata.ownerReferences,
      uid: "dep-uid",
      resourceVersion: "42",
      generation: 2,
      creationTimestamp: "2026-12-01T00:00:00Z",
      annotations: { "deployment.kubernetes.io/revision": "1" },
      managedFields: [{ manager: "webapp-operator", operation: "Apply" }],
    });
    expect(live.metadata.managedFields).toBe(MANAGED_FIELDS); // the input is not modified
    expect(live.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBeDefined();
  });

  test("our child's managedFields keep their order (ownership.ts patches by index); equal entries are shared", () => {
    const entries = [
      { manager: "kube-controller-manager", operation: "Update", subresource: "status", fieldsV1: { "f:status": {} } },
      { manager: "webapp-operator", operation: "Update", time: "2026-12-01T00:00:00Z", fieldsV1: {} },
      { manager: "webapp-operator", operation: "Apply", fieldsV1: {} },
    ];
    const withEntries = () => ({
      ...liveDeployment(),
      metadata: { ...liveDeployment().metadata, managedFields: entries },
    });
    const a = shapeChild(withEntries()).metadata.managedFields as object[];
    expect(a).toEqual([
      { manager: "kube-controller-manager", operation: "Update", subresource: "status" },
      { manager: "webapp-operator", operation: "Update" },
      { manager: "webapp-operator", operation: "Apply" },
    ]);
    const b = shapeChild(withEntries()).metadata.managedFields as object[];
    expect(b.every((e, i) => e === a[i] && Object.isFrozen(e))).toBe(true);
  });

  test("someone else's object keeps identity metadata only: no spec, status, annotations or managedFields", () => {
    const live = liveDeployment();
    const foreign: KubeObject = {
      ...live,
      metadata: {
        ...live.metadata,
        name: "theirs",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "x", uid: "rs", controller: true }],
        deletionTimestamp: "2026-12-01T01:00:00Z",
        finalizers: ["example.com/keep"],
      },
    };
    expect(shapeChild(foreign)).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "theirs",
        namespace: "default",
        uid: "dep-uid",
        resourceVersion: "42",
        generation: 2,
        labels: { app: "test-app", "managed-by": "webapp-operator" },
        ownerReferences: foreign.metadata.ownerReferences,
        deletionTimestamp: "2026-12-01T01:00:00Z",
      },
    });
  });

  test("ours means controlled by a WebApp of our group, with or without our label; labelled alone is not ours", () => {
    const live = liveDeployment();
    const ref = live.metadata.ownerReferences![0]!;
    const withMeta = (m: Partial<KubeObject["metadata"]>) => ({ ...live, metadata: { ...live.metadata, ...m } });
    expect(isWebAppChild(live)).toBe(true);
    expect(isWebAppChild(withMeta({ labels: {} }))).toBe(true);
    expect(shapeChild(withMeta({ labels: {} })).spec).toBe(live.spec);
    expect(isWebAppChild(withMeta({ ownerReferences: undefined }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, controller: false }] }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, apiVersion: "other.example.org/v1" }] }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, kind: "Other" }] }))).toBe(false);
    expect(shapeChild(withMeta({ ownerReferences: undefined })).spec).toBeUndefined();
  });

  test("a WebApp keeps its spec, status and annotations but not managedFields or last-applied", () => {
    const app = testApp();
    const live: KubeObject = {
      ...app,
      metadata: {
        ...app.metadata,
        annotations: { [LAST_APPLIED_ANNOTATION]: "{}" },
        managedFields: MANAGED_FIELDS,
      },
      status: STATUS,
    };
    const shaped = shapeWebApp(live);
    expect(shaped).toEqual({ ...app, status: STATUS });
    expect(shaped.spec).toBe(live.spec);
    expect("annotations" in shaped.metadata || "managedFields" in shaped.metadata).toBe(false);
  });
});
