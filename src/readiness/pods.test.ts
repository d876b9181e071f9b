import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { POD_FAILURE_HINT, podFailure, RESTART_SETTLE_MS } from "./pods.ts";

const pod = (status: unknown): KubeObject => ({ kind: "Pod", metadata: { name: "web-abc" }, status });
const waiting = (reason: string, message?: string, init = false) =>
  pod({
    phase: "Pending",
    [init ? "initContainerStatuses" : "containerStatuses"]: [
      { name: "app", state: { waiting: { reason, ...(message ? { message } : {}) } } },
    ],
  });

describe("podFailure", () => {
  test("each waiting reason that needs someone to act is a failure, with the container and the kubelet's message", () => {
    for (const r of [
      "InvalidImageName",
      "ErrImageNeverPull",
      "CrashLoopBackOff",
      "CreateContainerConfigError",
      "CreateContainerError",
      "RunContainerError",
      "ImagePullBackOff",
    ]) {
      expect(podFailure(waiting(r, "m"))).toEqual({
        pod: "web-abc",
        reason: r as never,
        message: `container app ${r}: m`,
      });
    }
  });

  test("ErrImagePull and ImagePullBackOff are the same failure, so the kubelet's alternation changes nothing", () => {
    expect(podFailure(waiting("ErrImagePull", "not found"))?.reason).toBe("ImagePullBackOff");
    expect(podFailure(waiting("ErrImagePull", "not found"))?.message).toBe("container app ErrImagePull: not found");
  });

  test("an init container's failure counts too", () => {
    expect(podFailure(waiting("CrashLoopBackOff", undefined, true))?.message).toBe("container app CrashLoopBackOff");
  });

  test("a pod the scheduler cannot place is Unschedulable with the scheduler's message", () => {
    const p = pod({
      phase: "Pending",
      conditions: [
        { type: "PodScheduled", status: "False", reason: "Unschedulable", message: "0/1 nodes are available" },
      ],
    });
    expect(podFailure(p)).toEqual({
      pod: "web-abc",
      reason: "Unschedulable",
      message: "cannot be scheduled: 0/1 nodes are available",
    });
  });

  test("a restarted container that is down again is in a crash loop before the kubelet names it", () => {
    const down = pod({
      containerStatuses: [{ name: "app", restartCount: 3, state: { terminated: { exitCode: 2, reason: "Error" } } }],
    });
    expect(podFailure(down)).toEqual({
      pod: "web-abc",
      reason: "CrashLoopBackOff",
      message: "container app exited with code 2 (Error) after 3 restarts",
    });
    const once = pod({ containerStatuses: [{ name: "app", restartCount: 0, state: { terminated: { exitCode: 2 } } }] });
    expect(podFailure(once)).toBeUndefined(); // never restarted yet: it may have exited for good reasons
  });

  test("a restarted container stays in the crash loop until it has run RESTART_SETTLE_MS", () => {
    const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
    const restarted = pod({
      containerStatuses: [
        {
          name: "app",
          restartCount: 1,
          state: { running: { startedAt: new Date(T0).toISOString() } },
          lastState: { terminated: { exitCode: 137, reason: "OOMKilled" } },
        },
      ],
    });
    expect(podFailure(restarted, T0 + 1_000)?.message).toBe(
      "container app exited with code 137 (OOMKilled) after 1 restart",
    );
    expect(podFailure(restarted, T0 + RESTART_SETTLE_MS)).toBeUndefined();
    expect(podFailure(restarted)).toBeUndefined(); // without a clock, running is running
  });

  test("starting, running and unknown states are not failures", () => {
    expect(podFailure(waiting("ContainerCreating"))).toBeUndefined();
    expect(podFailure(waiting("PodInitializing"))).toBeUndefined();
    expect(podFailure(pod({ containerStatuses: [{ name: "app", state: { running: {} } }] }))).toBeUndefined();
    expect(podFailure(pod(undefined))).toBeUndefined();
    expect(podFailure(pod({ conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulerError" }] }))).toBe(
      undefined,
    );
  });
});

test("ErrImageNeverPull's hint names both fixes: import the image onto the node, or let it be pulled", () => {
  expect(POD_FAILURE_HINT.ErrImageNeverPull).toContain("import it onto the node");
  expect(POD_FAILURE_HINT.ErrImageNeverPull).toContain("spec.imagePullPolicy to IfNotPresent");
});
