import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { readDeployment, rolloutState } from "./deployment.ts";

interface Counts {
  generation?: number;
  observedGeneration?: number;
  specReplicas?: number | null;
  replicas?: number;
  updated?: number;
  ready?: number;
  available?: number;
  conditions?: unknown[];
}

/** A Deployment of 3 replicas, fully rolled out unless told otherwise. */
function dep(c: Counts = {}): KubeObject {
  const want = c.specReplicas === null ? undefined : (c.specReplicas ?? 3);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "ns", generation: c.generation ?? 1 },
    spec: want === undefined ? {} : { replicas: want },
    status: {
      observedGeneration: c.observedGeneration ?? c.generation ?? 1,
      replicas: c.replicas ?? want ?? 3,
      updatedReplicas: c.updated ?? want ?? 3,
      readyReplicas: c.ready ?? c.available ?? want ?? 3,
      availableReplicas: c.available ?? want ?? 3,
      conditions: c.conditions ?? [],
    },
  };
}
const state = (c: Counts) => rolloutState(readDeployment(dep(c)));
const deadline = {
  type: "Progressing",
  status: "False",
  reason: "ProgressDeadlineExceeded",
  message: 'ReplicaSet "web-5d9" has timed out progressing.',
};

describe("rolloutState (kubectl rollout status)", () => {
  test("a fully rolled-out Deployment is complete", () => {
    expect(state({})).toEqual({
      kind: "complete",
      reason: "RolloutComplete",
      message: "3 of 3 replicas ready and available",
    });
  });

  test("an unobserved generation is waiting whatever the counts and conditions say, as kubectl checks it first", () => {
    expect(state({ generation: 2, observedGeneration: 1, conditions: [deadline] })).toMatchObject({
      kind: "progressing",
      reason: "SpecNotObserved",
    });
  });

  test("a rollout past its progress deadline has failed, before any count is looked at", () => {
    expect(state({ updated: 1, available: 0, conditions: [deadline] })).toEqual({
      kind: "failed",
      reason: "ProgressDeadlineExceeded",
      message: 'progress deadline exceeded: ReplicaSet "web-5d9" has timed out progressing.',
    });
  });

  test("fewer updated replicas than spec.replicas come first, then old replicas, then availability", () => {
    expect(state({ replicas: 4, updated: 1, available: 0 })).toMatchObject({
      reason: "ReplicasUpdating",
      message: "1 of 3 new replicas have been updated",
    });
    expect(state({ replicas: 4, available: 2 })).toMatchObject({
      reason: "OldReplicasTerminating",
      message: "1 old replicas are pending termination",
    });
    expect(state({ available: 2 })).toMatchObject({
      reason: "ReplicasBecomingAvailable",
      message: "2 of 3 updated replicas are available",
    });
  });

  test("readyReplicas is not looked at, as in kubectl: available replicas decide", () => {
    expect(state({ ready: 0 }).kind).toBe("complete");
  });

  test("without spec.replicas the updated-replicas check is skipped, as kubectl skips a nil pointer", () => {
    expect(state({ specReplicas: null, replicas: 2, updated: 2, available: 2 }).kind).toBe("complete");
  });

  test("a Deployment without status is waiting for the controller to observe it", () => {
    const fresh: KubeObject = { metadata: { name: "web", generation: 1 }, spec: { replicas: 2 } };
    expect(rolloutState(readDeployment(fresh)).reason).toBe("SpecNotObserved");
  });
});

describe("readDeployment", () => {
  test("reads counts and conditions, and treats mistyped fields as absent", () => {
    const view = readDeployment({
      metadata: { name: "web", generation: 2 },
      spec: { replicas: "3" },
      status: {
        observedGeneration: 2,
        replicas: 3,
        availableReplicas: "x",
        conditions: [
          { type: "Available", status: "False" },
          { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "exceeded quota" },
          "junk",
        ],
      },
    });
    expect(view).toEqual({
      generation: 2,
      observedGeneration: 2,
      specReplicas: undefined,
      replicas: 3,
      updatedReplicas: 0,
      readyReplicas: 0,
      availableReplicas: 0,
      available: false,
      progressDeadlineExceeded: undefined,
      replicaFailure: "exceeded quota",
    });
  });
});
