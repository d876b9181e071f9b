import { describe, expect, test } from "bun:test";
import { createFakeClock } from "../runtime/clock.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { INSTALL_RESOURCES } from "./manifests.ts";
import { waitForRollout, type DeploymentLike } from "./rollout.ts";
import type { ResourceType } from "../kube/types.ts";

const DEPLOYMENTS = INSTALL_RESOURCES.Deployment as ResourceType;

const dep = (status: DeploymentLike["status"], generation = 1, replicas = 2): DeploymentLike => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "webapp-operator", namespace: "ns", generation },
  spec: { replicas, selector: { matchLabels: { app: "x" } } },
  status,
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
    expect(lines).toEqual(["waiting for deployment ns/webapp-operator (0s): 0 of 2 updated replicas are available"]);
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
      "is not ready after 25 s: 0 of 2 updated replicas are available; pod webapp-operator-abc: ImagePullBackOff (pull access denied)",
    );
  });

  test("fails at once on a rollout past its progress deadline, without waiting for the timeout", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    const deadline = {
      type: "Progressing",
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: "ReplicaSet x has timed out progressing.",
    };
    fake.put(DEPLOYMENTS, dep({ observedGeneration: 1, replicas: 2, updatedReplicas: 2, conditions: [deadline] }));
    fake.answerList({ metadata: {}, items: [] });
    const err = await waitForRollout(fake, "webapp-operator", "ns", { clock, timeoutMs: 60_000 }).catch(
      (e: Error) => e,
    );
    expect(clock.now()).toBe(0);
    expect((err as Error).message).toBe(
      "deployment ns/webapp-operator: progress deadline exceeded: ReplicaSet x has timed out progressing.",
    );
  });
});
