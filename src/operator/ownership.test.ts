import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { ownershipHandover } from "./ownership.ts";

const M = "webapp-operator";
const withEntries = (...managedFields: object[]): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "a-deployment", namespace: "ns", managedFields },
});

describe("ownershipHandover", () => {
  test("an object we created (an Update entry, no Apply entry) gets that entry renamed to Apply, tested first", () => {
    const obj = withEntries(
      { manager: "kube-controller-manager", operation: "Update", subresource: "status" },
      { manager: M, operation: "Update" },
    );
    expect(ownershipHandover(obj, M)).toEqual([
      { op: "test", path: "/metadata/managedFields/1/manager", value: M },
      { op: "test", path: "/metadata/managedFields/1/operation", value: "Update" },
      { op: "replace", path: "/metadata/managedFields/1/operation", value: "Apply" },
    ]);
  });

  test("when we already have an Apply entry, the create-time Update entry is removed instead", () => {
    const obj = withEntries({ manager: M, operation: "Apply" }, { manager: M, operation: "Update" });
    expect(ownershipHandover(obj, M)?.at(-1)).toEqual({ op: "remove", path: "/metadata/managedFields/1" });
  });

  test("nothing to hand over: only Apply entries, entries of other managers, or our status subresource entry", () => {
    expect(ownershipHandover(withEntries({ manager: M, operation: "Apply" }), M)).toBeUndefined();
    expect(ownershipHandover(withEntries({ manager: "kubectl-edit", operation: "Update" }), M)).toBeUndefined();
    expect(
      ownershipHandover(withEntries({ manager: M, operation: "Update", subresource: "status" }), M),
    ).toBeUndefined();
    expect(ownershipHandover(withEntries(), M)).toBeUndefined();
  });
});
