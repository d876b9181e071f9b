import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import {
  POD_FAILURE_HINT,
  podFailureHint,
  podFailure,
  RESTART_SETTLE_MS,
  PROBE_SETTLE_MS,
  probeFailure,
  unreadyContainer,
} from "./pods.ts";

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

test("a container refused for running as root gets the non-root hint, not the missing-Secret one", () => {
  for (const kubelet of [
    'container has runAsNonRoot and image will run as root (pod: "shop-1_ns(uid)", container: app)',
    "container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root",
  ]) {
    expect(podFailureHint("CreateContainerConfigError", kubelet)).toContain("USER is a numeric id other than 0");
    expect(podFailureHint("CreateContainerConfigError", kubelet)).toContain("spec.podSecurity: restricted");
  }
  const missing = 'secret "db" not found';
  expect(podFailureHint("CreateContainerConfigError", missing)).toBe(POD_FAILURE_HINT.CreateContainerConfigError);
  expect(podFailureHint("CrashLoopBackOff", "runAsNonRoot")).toBe(POD_FAILURE_HINT.CrashLoopBackOff);
});

describe("unreadyContainer", () => {
  const pod = (probe: object | undefined, status: object): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: { containers: [{ name: "side" }, { name: "app", ...(probe ?? {}) }] },
    status: {
      containerStatuses: [
        { name: "side", ready: true, state: { running: {} } },
        { name: "app", ...status },
      ],
    },
  });
  const running = (startedAt: string, ready: boolean) => ({ ready, state: { running: { startedAt } } });
  const readiness = { readinessProbe: { httpGet: { path: "/healthz", port: 80 } } };

  test("a probed container running unready, with when it started (the kubelet's time, not compared with any clock)", () => {
    expect(unreadyContainer(pod(readiness, running("2026-01-01T00:00:50Z", false)))).toEqual({
      name: "app",
      startedAt: Date.parse("2026-01-01T00:00:50Z"),
    });
    expect(
      unreadyContainer(pod({ startupProbe: { exec: { command: ["true"] } } }, running("2040-01-01T00:00:00Z", false))),
    ).toEqual({ name: "app", startedAt: Date.parse("2040-01-01T00:00:00Z") });
    expect(unreadyContainer(pod(readiness, { ready: false, state: { running: {} } }))?.startedAt).toBeNaN();
  });

  test("not one that is ready, not running, or has no probe to fail", () => {
    expect(unreadyContainer(pod(readiness, running("2026-01-01T00:00:00Z", true)))).toBeUndefined();
    expect(
      unreadyContainer(pod(readiness, { ready: false, state: { waiting: { reason: "ContainerCreating" } } })),
    ).toBeUndefined();
    expect(unreadyContainer(pod(undefined, running("2026-01-01T00:00:00Z", false)))).toBeUndefined();
    expect(unreadyContainer({ apiVersion: "v1", kind: "Pod", metadata: {} })).toBeUndefined();
  });
});

describe("probeFailure", () => {
  const event = (
    pod: string,
    container: string,
    message: string,
    at: { lastTimestamp?: string; eventTime?: string },
    reason = "Unhealthy",
  ): KubeObject =>
    ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: `${pod}.${message.length}` },
      involvedObject: { kind: "Pod", name: pod, fieldPath: `spec.containers{${container}}` },
      reason,
      message,
      ...at,
    }) as KubeObject;

  /** Started at midnight on the kubelet's clock. */
  const app = { name: "app", startedAt: Date.parse("2026-01-01T00:00:00Z") };

  test("the newest Unhealthy event of that pod's container, in the kubelet's words", () => {
    const events = [
      event("p", "app", "Readiness probe failed: HTTP probe failed with statuscode: 500", {
        lastTimestamp: "2026-01-01T00:00:10Z",
      }),
      event("p", "app", "Startup probe failed: dial tcp 10.0.0.1:80: connect: connection refused\n", {
        eventTime: "2026-01-01T00:00:20.000000Z",
      }),
      event("p", "side", "Readiness probe failed: newer, of another container", {
        lastTimestamp: "2026-01-01T00:01:00Z",
      }),
      event("q", "app", "Readiness probe failed: newer, of another pod", { lastTimestamp: "2026-01-01T00:01:00Z" }),
      event("p", "app", "Back-off restarting failed container", { lastTimestamp: "2026-01-01T00:01:00Z" }, "BackOff"),
    ];
    expect(probeFailure("p", app, events)).toEqual({
      pod: "p",
      reason: "ProbeFailed",
      message: "container app: Startup probe failed: dial tcp 10.0.0.1:80: connect: connection refused",
    });
  });

  test("a readiness or startup probe's event before a newer liveness one (the container is unready); else liveness", () => {
    const readiness = event("p", "app", "Readiness probe failed: HTTP probe failed with statuscode: 404", {
      lastTimestamp: "2026-01-01T00:00:10Z",
    });
    const liveness = event("p", "app", "Liveness probe failed: HTTP probe failed with statuscode: 404", {
      lastTimestamp: "2026-01-01T00:00:30Z",
    });
    expect(probeFailure("p", app, [liveness, readiness])?.message).toBe(
      "container app: Readiness probe failed: HTTP probe failed with statuscode: 404",
    );
    expect(probeFailure("p", app, [liveness])?.message).toBe(
      "container app: Liveness probe failed: HTTP probe failed with statuscode: 404",
    );
  });

  test("none when the probe has not failed yet", () => {
    expect(probeFailure("p", app, [])).toBeUndefined();
  });

  test("a failure counts from PROBE_SETTLE_MS into the run, on the kubelet's clock: not while starting, not of an earlier run", () => {
    const at = (lastTimestamp: string) =>
      event("p", "app", `Readiness probe failed: at ${lastTimestamp}`, { lastTimestamp });
    // Starting: the app was not listening yet.
    expect(PROBE_SETTLE_MS).toBe(10_000);
    expect(probeFailure("p", app, [at("2026-01-01T00:00:03Z")])).toBeUndefined();
    expect(probeFailure("p", app, [at("2026-01-01T00:00:09.999Z")])).toBeUndefined();
    expect(probeFailure("p", app, [at("2026-01-01T00:00:10Z")])?.message).toBe(
      "container app: Readiness probe failed: at 2026-01-01T00:00:10Z",
    );
    // The newest failure of the run before a restart is not this run's.
    expect(probeFailure("p", app, [at("2025-12-31T23:59:50Z")])).toBeUndefined();
    // A series' last observation is when the kubelet last saw it (events.k8s.io events seen through core/v1).
    const series = event("p", "app", "Readiness probe failed: series", {
      eventTime: "2026-01-01T00:00:01.000000Z",
    }) as KubeObject & { series?: unknown };
    series.series = { count: 4, lastObservedTime: "2026-01-01T00:00:31.000000Z" };
    expect(probeFailure("p", app, [series])?.message).toBe("container app: Readiness probe failed: series");
    // No startedAt: nothing holds the failure back.
    expect(probeFailure("p", { name: "app", startedAt: Number.NaN }, [at("2026-01-01T00:00:03Z")])).toBeDefined();
  });

  test("clock skew: the operator's clock is not involved, whatever the node's clock says", () => {
    // A node an hour ahead of (or behind) the operator: started at 10:00 and failing at 10:00:15 on its clock.
    const skewed = { name: "app", startedAt: Date.parse("2026-01-01T10:00:00Z") };
    const failing = event("p", "app", "Readiness probe failed: HTTP probe failed with statuscode: 503", {
      lastTimestamp: "2026-01-01T10:00:15Z",
    });
    expect(probeFailure("p", skewed, [failing])?.reason).toBe("ProbeFailed");
  });
});
