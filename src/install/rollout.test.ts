import { describe, expect, test } from "bun:test";
import { createFakeClock } from "../runtime/clock.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { INSTALL_RESOURCES } from "./manifests.ts";
import { rolloutState, waitForRollout, type DeploymentLike } from "./rollout.ts";
import type { ResourceType } from "../kube/types.ts";

const DEPLOYMENTS = INSTALL_RESOURCES.Deployment as ResourceType;

const dep = (status: DeploymentLike["status"], generation = 1, replicas = 2): DeploymentLike => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "webapp-operator", namespace: "ns", generation },
  spec: { replicas, selector: { matchLabels: { app: "x" } } },
  status,
});

describe("rolloutState", () => {
  test("is progressing until the controller has observed the latest generation", () => {
    expect(
      rolloutState(
        dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, availableReplicas: 2, readyReplicas: 2 }, 2),
      ).kind,
    ).toBe("progressing");
  });

  test("counts replicas on the new version, old replicas still terminating, and availability, in kubectl's order", () => {
    expect(rolloutState(dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 0 }))).toEqual({
      kind: "progressing",
      message: "1 of 2 replicas run the new version, 0 ready",
    });
    expect(rolloutState(dep({ observedGeneration: 1, replicas: 3, updatedReplicas: 2, readyReplicas: 2 }))).toEqual({
      kind: "progressing",
      message: "1 old replicas are pending termination",
    });
    expect(
      rolloutState(
        dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 1 }),
      ),
    ).toEqual({ kind: "progressing", message: "2 of 2 replicas ready, 1 available" });
    expect(
      rolloutState(
        dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }),
      ),
    ).toEqual({ kind: "done", message: "2 of 2 replicas ready and available" });
  });

  test("a Deployment past its progress deadline has failed", () => {
    const stalled = dep({
      observedGeneration: 1,
      conditions: [
        {
          type: "Progressing",
          status: "False",
          reason: "ProgressDeadlineExceeded",
          message: "ReplicaSet x has timed out progressing.",
        },
      ],
    });
    expect(rolloutState(stalled)).toEqual({
      kind: "failed",
      message: "rollout stalled: ReplicaSet x has timed out progressing.",
    });
  });
});

describe("waitForRollout", () => {
  test("reports each new state once, then returns when the rollout is done", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    fake.put(DEPLOYMENTS, dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 0 }));
    const lines: string[] = [];
    const done = waitForRollout(fake, "webapp-operator", "ns", {
      clock,
      timeoutMs: 60_000,
      onProgress: (l) => lines.push(l),
    });
    await clock.advance(3000);
    fake.put(
      DEPLOYMENTS,
      dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }),
    );
    await clock.advance(1000);
    expect(await done).toBe("2 of 2 replicas ready and available");
    expect(lines).toEqual(["waiting for deployment ns/webapp-operator (0s): 0 of 2 replicas ready, 0 available"]);
  });

  test("repeats the line every ten seconds while nothing changes, and times out naming the pods' waiting reasons", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    fake.put(DEPLOYMENTS, dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 0 }));
    fake.answerList({
      metadata: {},
      items: [
        {
          metadata: { name: "webapp-operator-abc" },
          status: {
            containerStatuses: [{ state: { waiting: { reason: "ImagePullBackOff", message: "pull access denied" } } }],
          },
        } as never,
      ],
    });
    const lines: string[] = [];
    const done = waitForRollout(fake, "webapp-operator", "ns", {
      clock,
      timeoutMs: 25_000,
      onProgress: (l) => lines.push(l),
    }).catch((e: Error) => e);
    await clock.advance(30_000);
    const err = await done;
    expect(lines.map((l) => l.replace(/:.*/, ""))).toEqual([
      "waiting for deployment ns/webapp-operator (0s)",
      "waiting for deployment ns/webapp-operator (10s)",
      "waiting for deployment ns/webapp-operator (20s)",
    ]);
    expect((err as Error).message).toContain(
      "is not ready after 25 s: 0 of 2 replicas ready, 0 available; pod webapp-operator-abc: ImagePullBackOff (pull access denied)",
    );
  });
});
