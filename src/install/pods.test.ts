import { describe, expect, test } from "bun:test";
import { holderPod, podLine, podState, waitVerdict, type PodLike, type PodState } from "./pods.ts";
import type { RolloutState } from "../readiness/deployment.ts";

const IMAGE = "ghcr.io/devctl/devctl:0.1.0";
type Status = NonNullable<PodLike["status"]>;
type Container = NonNullable<Status["containerStatuses"]>[number];

const pod = (name: string, status: Status, extra: Partial<PodLike["metadata"]> = {}): PodLike => ({
  metadata: { name, ...extra },
  spec: { containers: [{ name: "operator", image: IMAGE }] },
  status,
});
const container = (c: Partial<Container>): Status => ({
  phase: "Pending",
  containerStatuses: [{ name: "operator", image: IMAGE, restartCount: 0, ...c }],
});
const waiting = (reason: string, message?: string) =>
  container({ state: { waiting: { reason, ...(message ? { message } : {}) } } });

const done: RolloutState = {
  kind: "complete",
  reason: "RolloutComplete",
  message: "2 of 2 replicas ready and available",
};
const progressing: RolloutState = {
  kind: "progressing",
  reason: "ReplicasBecomingAvailable",
  message: "0 of 2 updated replicas are available",
};

describe("podState and podLine", () => {
  test("every pull error is a pull failure that names the reason, the kubelet's message and the image", () => {
    for (const reason of ["ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName"]) {
      const s = podState(pod("op-1", waiting(reason, `image "${IMAGE}": nope`)));
      expect(s).toEqual({ kind: "pull-failed", pod: "op-1", reason, message: `image "${IMAGE}": nope`, image: IMAGE });
      expect(podLine(s)).toBe(`pod op-1: ${reason}: image "${IMAGE}": nope`);
    }
  });

  test("a crash loop carries the restarts, the last exit code and, once read, the container's last log line", () => {
    const s = podState(
      pod(
        "op-1",
        container({
          restartCount: 3,
          state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
          lastState: { terminated: { exitCode: 1, reason: "Error" } },
        }),
      ),
    );
    expect(s).toEqual({ kind: "crash-looping", pod: "op-1", image: IMAGE, restarts: 3, exitCode: 1 });
    expect(podLine(s)).toBe("pod op-1: CrashLoopBackOff (restarted 3 times, last exit code 1)");
    expect(podLine({ ...(s as Extract<PodState, { kind: "crash-looping" }>), lastLog: "error: forbidden" })).toBe(
      "pod op-1: CrashLoopBackOff (restarted 3 times, last exit code 1), last log line: error: forbidden",
    );
  });

  test("an unscheduled pod is Pending with the scheduler's message", () => {
    const s = podState(
      pod("op-1", {
        phase: "Pending",
        conditions: [
          {
            type: "PodScheduled",
            status: "False",
            reason: "Unschedulable",
            message: "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
          },
        ],
      }),
    );
    expect(podLine(s)).toBe(
      "pod op-1: Pending: 0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
    );
    expect(s.kind).toBe("pending");
  });

  test("other states: creating, running but not ready, ready, exited, terminating", () => {
    expect(podLine(podState(pod("a", waiting("ContainerCreating"))))).toBe("pod a: ContainerCreating");
    expect(podLine(podState(pod("a", container({ state: { running: {} }, ready: false }))))).toBe(
      "pod a: Running, not ready yet",
    );
    expect(podState(pod("a", container({ state: { running: {} }, ready: true })))).toEqual({ kind: "ready", pod: "a" });
    expect(podLine(podState(pod("a", container({ state: { terminated: { exitCode: 2, reason: "Error" } } }))))).toBe(
      "pod a: container exited (exit code 2, Error)",
    );
    expect(podState(pod("a", waiting("ImagePullBackOff"), { deletionTimestamp: "2026-01-01T00:00:00Z" })).kind).toBe(
      "terminating",
    );
    expect(podLine(podState(pod("a", { phase: "Pending" })))).toBe("pod a: Pending");
  });
});

describe("holderPod", () => {
  test("matches the pod the holder identity is named after, and nothing else", () => {
    const pods = ["webapp-operator-7d9-abcde", "webapp-operator-7d9-fghij"];
    expect(holderPod("webapp-operator-7d9-fghij_1a2b3c4d", pods)).toBe("webapp-operator-7d9-fghij");
    expect(holderPod("webapp-operator-7d9-abcde", pods)).toBe("webapp-operator-7d9-abcde");
    expect(holderPod("laptop_pid42_1a2b3c4d", pods)).toBeUndefined();
    expect(holderPod("webapp-operator-7d9-abc", pods)).toBeUndefined();
    expect(holderPod(undefined, pods)).toBeUndefined();
  });
});

describe("waitVerdict", () => {
  const ready = (p: string): PodState => ({ kind: "ready", pod: p });

  test("is leading only when the rollout is done and a current pod holds the Lease", () => {
    const pods = [ready("op-a"), ready("op-b")];
    expect(waitVerdict({ namespace: "ns", rollout: done, pods, holder: "op-b_1234" })).toEqual({
      kind: "leading",
      pod: "op-b",
      message: "2 of 2 replicas ready and available; pod op-b holds the Lease",
    });
    expect(waitVerdict({ namespace: "ns", rollout: progressing, pods, holder: "op-b_1234" }).kind).toBe("waiting");
  });

  test("ready pods with no holder, or another holder, or a terminating holder, keep waiting and say so", () => {
    const pods: PodState[] = [ready("op-a"), { kind: "terminating", pod: "op-old" }];
    expect(waitVerdict({ namespace: "ns", rollout: done, pods, holder: undefined })).toEqual({
      kind: "waiting",
      message: "2 of 2 replicas ready and available; no installed pod holds the Lease yet",
    });
    expect(waitVerdict({ namespace: "ns", rollout: done, pods, holder: "op-old_1" }).message).toBe(
      "2 of 2 replicas ready and available; no installed pod holds the Lease yet (held by op-old_1)",
    );
  });

  test("a pull error fails at once, naming the image and the next step", () => {
    const v = waitVerdict({
      namespace: "ns",
      rollout: progressing,
      pods: [
        ready("op-a"),
        { kind: "pull-failed", pod: "op-b", reason: "ErrImageNeverPull", message: "", image: IMAGE },
      ],
      holder: undefined,
    });
    expect(v.kind).toBe("failed");
    expect(v.message).toContain(`the operator image ${IMAGE} cannot be pulled: pod op-b: ErrImageNeverPull`);
    expect(v.message).toContain("image pull policy Never");
    expect(v.message).toContain("`npm run image`");
    expect(v.message).toContain("--image <reference>");
    expect(v.message).toContain("kubectl -n ns describe pod op-b");
  });

  test("a crash loop fails at once with its last log line and how to read the rest", () => {
    const v = waitVerdict({
      namespace: "ns",
      rollout: progressing,
      pods: [{ kind: "crash-looping", pod: "op-a", image: IMAGE, restarts: 2, exitCode: 1, lastLog: "boom" }],
      holder: undefined,
    });
    expect(v).toEqual({
      kind: "failed",
      message: expect.stringContaining(
        `the operator container of image ${IMAGE} keeps crashing: pod op-a: CrashLoopBackOff (restarted 2 times, last exit code 1), last log line: boom`,
      ),
    });
    expect(v.message).toContain("kubectl -n ns logs op-a --previous");
  });

  test("a Deployment past its progress deadline fails; Pending pods alone only wait", () => {
    const failed: RolloutState = {
      kind: "failed",
      reason: "ProgressDeadlineExceeded",
      message: "rollout stalled: deadline",
    };
    expect(waitVerdict({ namespace: "ns", rollout: failed, pods: [], holder: undefined })).toEqual({
      kind: "failed",
      message: "rollout stalled: deadline",
    });
    const pending: PodState = { kind: "pending", pod: "op-a", message: "0/1 nodes are available" };
    expect(waitVerdict({ namespace: "ns", rollout: progressing, pods: [pending], holder: undefined })).toEqual({
      kind: "waiting",
      message: "0 of 2 updated replicas are available",
    });
  });
});
