import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { deploymentEventPriority, IN_TURN, serviceEventPriority, URGENT } from "./child-priority.ts";

/** A Deployment of generation 2 with one replica: `observed` generation, `available` replicas. */
function deployment(observed: number, available: number, availableCondition?: "True" | "False"): KubeObject {
  return {
    metadata: { name: "web-deployment", namespace: "ns", generation: 2 },
    spec: { replicas: 1 },
    status: {
      observedGeneration: observed,
      replicas: 1,
      updatedReplicas: 1,
      readyReplicas: available,
      availableReplicas: available,
      ...(availableCondition ? { conditions: [{ type: "Available", status: availableCondition }] } : {}),
    },
  };
}
const update = (old: KubeObject, object: KubeObject) => ({ type: "update" as const, old, object });

describe("child event priority", () => {
  test("a Deployment whose rollout finishes, or that turns available, goes ahead", () => {
    expect(deploymentEventPriority(update(deployment(2, 0, "False"), deployment(2, 1, "True")))).toBe(URGENT);
    expect(deploymentEventPriority(update(deployment(1, 1), deployment(2, 1)))).toBe(URGENT); // rollout complete
  });

  test("a Deployment that stops being available goes ahead", () => {
    expect(deploymentEventPriority(update(deployment(2, 1, "True"), deployment(2, 0, "False")))).toBe(URGENT);
  });

  test("our own create or apply coming back, and progress in between, wait their turn", () => {
    const created = deployment(0, 0);
    expect(deploymentEventPriority({ type: "add", object: created })).toBe(IN_TURN);
    expect(deploymentEventPriority(update(deployment(2, 1), deployment(1, 1)))).toBe(IN_TURN); // a new spec applied
    expect(deploymentEventPriority(update(created, deployment(2, 0, "False")))).toBe(IN_TURN);
  });

  test("a deleted child goes ahead: it is to be created again", () => {
    expect(deploymentEventPriority({ type: "delete", object: deployment(2, 1) })).toBe(URGENT);
    expect(serviceEventPriority({ type: "delete", object: { metadata: { name: "web-svc" } } })).toBe(URGENT);
  });

  test("a Service's other events wait their turn", () => {
    const svc: KubeObject = { metadata: { name: "web-svc" } };
    expect(serviceEventPriority({ type: "add", object: svc })).toBe(IN_TURN);
    expect(serviceEventPriority(update(svc, svc))).toBe(IN_TURN);
  });
});
