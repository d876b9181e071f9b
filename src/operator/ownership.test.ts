import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { mayHaveCreateEntry, ownershipHandover, unionFields } from "./ownership.ts";

const M = "webapp-operator";
const withEntries = (...managedFields: object[]): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "a-deployment", namespace: "ns", resourceVersion: "42", managedFields },
});
const port = (n: number) => ({ [`k:{"containerPort":${n},"protocol":"TCP"}`]: { ".": {}, "f:containerPort": {} } });
const fields = (ports: object) => ({
  "f:spec": { "f:template": { "f:spec": { "f:containers": { 'k:{"name":"app"}': { "f:ports": ports } } } } },
});
const replaced = (obj: KubeObject) => ownershipHandover(obj, M)?.find((op) => op.op === "replace")?.value;

describe("ownershipHandover", () => {
  test("an object we created (an Update entry, no Apply entry) gets that entry renamed to Apply", () => {
    const status = { manager: "kube-controller-manager", operation: "Update", subresource: "status" };
    const created = { manager: M, operation: "Update", apiVersion: "apps/v1", fieldsV1: fields(port(80)) };
    expect(replaced(withEntries(status, created))).toEqual([status, { ...created, operation: "Apply" }]);
  });

  test("beside our Apply entry, the Update entry's fields join the Apply entry's and the Update entry goes", () => {
    const applied = { manager: M, operation: "Apply", fieldsV1: fields(port(80)) };
    const created = { manager: M, operation: "Update", fieldsV1: fields(port(8080)) };
    const edit = { manager: "kubectl-set", operation: "Update", fieldsV1: {} };
    expect(replaced(withEntries(applied, created, edit))).toEqual([
      { ...applied, fieldsV1: fields({ ...port(80), ...port(8080) }) },
      edit,
    ]);
  });

  test("two Update entries of ours (a /scale write to the same count adds one) are both handed over", () => {
    const scaled = {
      manager: M,
      operation: "Update",
      apiVersion: "apps/v1",
      fieldsV1: { "f:spec": { "f:replicas": {} } },
    };
    const created = { manager: M, operation: "Update", apiVersion: "apps/v1", time: "t", fieldsV1: fields(port(8080)) };
    const status = { manager: "kube-controller-manager", operation: "Update", subresource: "status" };
    expect(replaced(withEntries(scaled, status, created))).toEqual([
      { ...scaled, operation: "Apply", fieldsV1: { "f:spec": { "f:replicas": {}, ...fields(port(8080))["f:spec"] } } },
      status,
    ]);
    const applied = { manager: M, operation: "Apply", fieldsV1: fields(port(80)) };
    expect(replaced(withEntries(applied, scaled, created))).toEqual([
      {
        ...applied,
        fieldsV1: { "f:spec": { ...fields({ ...port(80), ...port(8080) })["f:spec"], "f:replicas": {} } },
      },
    ]);
  });

  test("the patch first tests the resourceVersion it was computed from, so a write in between is a 422", () => {
    expect(ownershipHandover(withEntries({ manager: M, operation: "Update" }), M)?.[0]).toEqual({
      op: "test",
      path: "/metadata/resourceVersion",
      value: "42",
    });
  });

  test("nothing to hand over: only Apply entries, entries of other managers, or our status subresource entry", () => {
    for (const entries of [
      [{ manager: M, operation: "Apply" }],
      [{ manager: "kubectl-edit", operation: "Update" }],
      [{ manager: M, operation: "Update", subresource: "status" }],
      [],
    ]) {
      const obj = withEntries(...entries);
      expect(ownershipHandover(obj, M)).toBeUndefined();
      expect(mayHaveCreateEntry(obj, M)).toBe(false);
    }
    expect(mayHaveCreateEntry(withEntries({ manager: M, operation: "Update" }), M)).toBe(true);
  });
});

describe("unionFields", () => {
  test("joins two field tries: shared branches merged, each side's own fields kept, leaves stay empty sets", () => {
    const a = { "f:metadata": { "f:labels": { "f:app": {} } }, "f:spec": { "f:replicas": {} } };
    const b = { "f:metadata": { "f:labels": { "f:tier": {} }, "f:annotations": { ".": {} } } };
    expect(unionFields(a, b)).toEqual({
      "f:metadata": { "f:labels": { "f:app": {}, "f:tier": {} }, "f:annotations": { ".": {} } },
      "f:spec": { "f:replicas": {} },
    });
  });

  test("a missing side (an entry without fieldsV1) contributes nothing, and the inputs are not modified", () => {
    const a = { "f:spec": { "f:replicas": {} } };
    const copy = structuredClone(a);
    expect(unionFields(a, undefined)).toEqual(a);
    expect(unionFields(undefined, a)).toEqual(a);
    unionFields(a, { "f:spec": { "f:paused": {} } });
    expect(a).toEqual(copy);
  });
});
