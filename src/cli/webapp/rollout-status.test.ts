import { describe, expect, test } from "bun:test";
import type { WebAppObject } from "../../api/webapp.ts";
import { rolloutProgress } from "./rollout-status.ts";

const cond = (type: string, status: "True" | "False", reason = "R", message = "m") => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: "2026-12-05T10:00:00Z",
});
const wa = (generation: number, status?: WebAppObject["status"], deleting = false): WebAppObject => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  metadata: {
    name: "shop",
    namespace: "team-a",
    generation,
    ...(deleting ? { deletionTimestamp: "2026-12-05T10:00:00Z" } : {}),
  },
  spec: { image: "nginx:1.25", port: 80 },
  ...(status ? { status } : {}),
});

describe("where a WebApp's rollout is", () => {
  test("done only when the operator reported on this generation and Ready is True", () => {
    const ready = [cond("Ready", "True", "Available"), cond("Stalled", "False")];
    expect(rolloutProgress(wa(2, { observedGeneration: 2, conditions: ready }))).toEqual({
      state: "done",
      message: 'webapp "shop" successfully rolled out',
    });
    // Ready, but for the spec before: still waiting.
    expect(rolloutProgress(wa(3, { observedGeneration: 2, conditions: ready }))).toEqual({
      state: "waiting",
      message: 'Waiting for the operator to observe generation 3 of webapp "shop" (it reports 2)',
    });
  });

  test("no status, or one without conditions, is waiting for an operator, never done", () => {
    for (const status of [undefined, { observedGeneration: 1 }, { observedGeneration: 1, conditions: [] }])
      expect(rolloutProgress(wa(1, status))).toEqual({
        state: "waiting",
        message: 'Waiting for the operator to report on webapp "shop" (is one running and watching namespace team-a?)',
      });
  });

  test("Stalled is a failure with its reason and message; being deleted is one too", () => {
    const stalled = [
      cond("Ready", "False", "CrashLoopBackOff"),
      cond("Stalled", "True", "CrashLoopBackOff", "pod x: exited"),
    ];
    expect(rolloutProgress(wa(1, { observedGeneration: 1, conditions: stalled }))).toEqual({
      state: "failed",
      message: 'webapp "shop" rollout failed: CrashLoopBackOff: pod x: exited',
    });
    expect(rolloutProgress(wa(1, { observedGeneration: 1, conditions: [cond("Ready", "True")] }, true))).toEqual({
      state: "failed",
      message: 'webapp "shop" is being deleted',
    });
  });

  test("not Ready and not Stalled: waiting, with Ready's message", () => {
    const rolling = [cond("Ready", "False", "RollingOut", "1/3 replicas are ready"), cond("Stalled", "False")];
    expect(rolloutProgress(wa(1, { observedGeneration: 1, conditions: rolling }))).toEqual({
      state: "waiting",
      message: 'Waiting for webapp "shop" rollout to finish: 1/3 replicas are ready',
    });
  });

  test("after a restart, waiting until the operator's newest revision is the restart's (when it records revisions)", () => {
    const ready = [cond("Ready", "True", "Available")];
    const at = "2026-12-05T11:00:00Z";
    const record = { revision: 1, image: "nginx:1.25", digest: "d", startedAt: "2026-12-05T10:00:00Z" };
    const restarted = (rollouts?: NonNullable<WebAppObject["status"]>["rollouts"]) => ({
      ...wa(2, { observedGeneration: 2, conditions: ready, ...(rollouts ? { rollouts } : {}) }),
      metadata: {
        name: "shop",
        namespace: "team-a",
        generation: 2,
        annotations: { "apps.example.com/restartedAt": at },
      },
    });
    expect(rolloutProgress(restarted([record]))).toEqual({
      state: "waiting",
      message: `Waiting for the operator to roll out the restart of webapp "shop" (${at})`,
    });
    expect(rolloutProgress(restarted([record, { ...record, revision: 2, restartedAt: at }])).state).toBe("done");
    expect(rolloutProgress(restarted()).state).toBe("done"); // an operator that records no revisions: not checked
  });
});
