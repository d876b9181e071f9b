import { describe, expect, test } from "bun:test";
import { CHILD_RESOURCES } from "../api/webapp.ts";
import { testApp } from "./_test-fixtures.ts";
import { CHILD_KINDS, kindOf, perKind } from "./child-kinds.ts";

describe("the kinds of child", () => {
  test("are api's CHILD_RESOURCES (what the install's RBAC grants and the uninstall lists), in the same order", () => {
    expect(CHILD_KINDS.map((k) => k.rt)).toEqual([...CHILD_RESOURCES]);
  });

  test("each builds an intent of its own kind, named as it names it, the workload first", () => {
    const app = testApp();
    for (const k of CHILD_KINDS) {
      const intent = k.desired(app);
      expect(intent.kind).toBe(k.kind);
      expect(intent.metadata.name).toBe(k.name(app.metadata.name));
      expect(kindOf(intent)).toBe(k);
    }
    expect(CHILD_KINDS[0]?.kind).toBe("Deployment");
  });

  test("perKind makes one of anything per kind, by name", () => {
    expect(perKind((k) => k.rt.plural)).toEqual({
      Deployment: "deployments",
      Service: "services",
      PodDisruptionBudget: "poddisruptionbudgets",
      Ingress: "ingresses",
      HorizontalPodAutoscaler: "horizontalpodautoscalers",
    });
    expect(kindOf({ kind: "ConfigMap" })).toBeUndefined();
  });
});
