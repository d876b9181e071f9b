import { describe, expect, test } from "bun:test";
import { podSpecOf, type RolloutRecord } from "../api/rollout-history.ts";
import type { Condition, WebApp } from "../api/webapp.ts";
import { testApp } from "./_test-fixtures.ts";
import { podTemplateDigest } from "./desired.ts";
import { rollbackProblem, rollbackVerdict, rolledBackTo } from "./rollback.ts";

const T0 = Date.parse("2026-12-05T10:00:00Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString().replace(".000Z", "Z");

const stalled = (reason: string): Condition => ({
  type: "Stalled",
  status: "True",
  reason,
  message: "m",
  lastTransitionTime: at(0),
});
const good = testApp({ image: "app:v1", rollout: { autoRollback: true } });
const record = (revision: number, w: WebApp, extra: Partial<RolloutRecord> = {}): RolloutRecord => ({
  revision,
  image: w.spec.image,
  digest: podTemplateDigest(w),
  startedAt: at(0),
  ...extra,
});

/** A WebApp whose spec asks for app:v2 (revision 2) after app:v1 (revision 1) was Ready. */
function failing(spec: Partial<WebApp["spec"]> = {}, r2: Partial<RolloutRecord> = {}, reason = "CrashLoopBackOff") {
  const bad = testApp({ image: "app:v2", rollout: { autoRollback: true }, ...spec });
  const rollouts = [
    record(1, good, { readyAt: at(0) }),
    record(2, bad, { failedAt: at(10), reason, message: "back-off", ...r2 }),
  ];
  return { ...bad, status: { rollouts, lastReadyRevision: 1, conditions: [stalled(reason)] } } as WebApp;
}

describe("rollbackVerdict", () => {
  test("a failure is confirmed after failureThreshold (60 s by default) from when it was first reported", () => {
    expect(rollbackVerdict(failing(), false, T0 + 30_000)).toEqual({ kind: "waiting", ms: 40_000 });
    const v = rollbackVerdict(failing(), false, T0 + 70_000);
    expect(v.kind === "rollBack" && [v.failed.revision, v.to.revision, v.first]).toEqual([2, 1, true]);
    const quick = failing({ rollout: { autoRollback: true, failureThreshold: "5s" } });
    expect(rollbackVerdict(quick, false, T0 + 15_000).kind).toBe("rollBack");
  });

  test("past the progress deadline it is rolled back at once", () => {
    expect(rollbackVerdict(failing({}, {}, "ProgressDeadlineExceeded"), false, T0 + 11_000).kind).toBe("rollBack");
  });

  test("the rolled-back WebApp is the spec with the last Ready image: the same pod template as revision 1", () => {
    const v = rollbackVerdict(failing({ replicas: 7 }), false, T0 + 70_000);
    if (v.kind !== "rollBack") throw new Error(v.kind);
    const back = rolledBackTo(failing({ replicas: 7 }), v.to);
    expect([back.spec.image, back.spec.replicas, podTemplateDigest(back)]).toEqual(["app:v1", 7, v.to.digest]);
    expect(rollbackProblem(v)).toEqual({
      reason: "RolledBack",
      message:
        "revision 2 (image app:v2) failed (CrashLoopBackOff: back-off) and was rolled back: revision 1 (image app:v1) " +
        "runs again; change the spec to roll forward, or set spec.rollout.retry to a new value to try this spec again",
    });
  });

  test("once reported it holds without the failure (its pods are gone), until the spec's revision changes", () => {
    const reported = failing({}, { rolledBackAt: at(70) });
    const held = { ...reported, status: { ...reported.status, conditions: [stalled("RolledBack")] } } as WebApp;
    const v = rollbackVerdict(held, false, T0 + 999_000);
    expect(v.kind === "rollBack" && v.first).toBe(false);
    const fixed = { ...held, spec: { ...held.spec, image: "app:v3" } };
    expect(rollbackVerdict(fixed, false, T0 + 999_000)).toEqual({ kind: "none" });
    const retried = { ...held, spec: { ...held.spec, rollout: { autoRollback: true, retry: "again" } } };
    expect(rollbackVerdict(retried, false, T0 + 999_000)).toEqual({ kind: "none" });
  });

  test("never rolls back what has not failed, what became Ready, or when nothing else was Ready", () => {
    const calm = failing();
    const notStalled = { ...calm, status: { ...calm.status, conditions: [] } } as WebApp;
    expect(rollbackVerdict(notStalled, false, T0 + 999_000)).toEqual({ kind: "none" });
    expect(rollbackVerdict(failing({}, { readyAt: at(20) }), false, T0 + 999_000)).toEqual({ kind: "none" });
    const conflict = { ...calm, status: { ...calm.status, conditions: [stalled("ResourceExists")] } } as WebApp;
    expect(rollbackVerdict(conflict, false, T0 + 999_000)).toEqual({ kind: "none" });
    const firstEver = { ...calm, status: { ...calm.status, lastReadyRevision: undefined } } as WebApp;
    expect(rollbackVerdict(firstEver, false, T0 + 999_000)).toEqual({ kind: "none" });
  });

  test("off unless the spec or the operator's default turns it on; the spec's false wins over the default", () => {
    const unset = failing({ rollout: undefined });
    expect(rollbackVerdict(unset, false, T0 + 999_000)).toEqual({ kind: "none" });
    expect(rollbackVerdict(unset, true, T0 + 999_000).kind).toBe("rollBack");
    expect(rollbackVerdict(failing({ rollout: { autoRollback: false } }), true, T0 + 999_000)).toEqual({
      kind: "none",
    });
  });

  test("a failed revision that changed env and resources too is rolled back whole, from the Ready record's podSpec", () => {
    const env = [{ name: "MODE", value: "new" }];
    const r1 = { readyAt: at(0), podSpec: podSpecOf(good.spec) } as Partial<RolloutRecord>;
    const w = failing({ env, replicas: 4, resources: { requests: { cpu: "100m" } } });
    const status = w.status as NonNullable<WebApp["status"]>;
    const withSpec = {
      ...w,
      status: { ...status, rollouts: [record(1, good, r1), ...(status.rollouts ?? []).slice(1)] },
    };
    const v = rollbackVerdict(withSpec, false, T0 + 70_000);
    if (v.kind !== "rollBack") throw new Error(v.kind);
    const back = rolledBackTo(withSpec, v.to);
    expect(back.spec.env).toBeUndefined();
    expect(back.spec.resources).toBeUndefined();
    expect([back.spec.image, back.spec.replicas, podTemplateDigest(back)]).toEqual(["app:v1", 4, v.to.digest]);
  });

  test("a failed revision that changed more than the image since an image-only record is not rolled back, saying why", () => {
    const v = rollbackVerdict(failing({ port: 9090 }), false, T0 + 70_000);
    expect(v.kind).toBe("cannot");
    if (v.kind !== "cannot") return;
    expect(rollbackProblem(v).reason).toBe("RollbackNotPossible");
    expect(rollbackProblem(v).message).toContain("revision 2 changed more than the image since revision 1");
  });
});

test("a readiness probe that keeps the new pods unready (ProbeFailed, Reconciling) is a failure too", () => {
  const w = failing({}, { reason: "ProbeFailed" });
  const probing: Condition = { ...stalled("ProbeFailed"), type: "Reconciling" };
  const unready = { ...w, status: { ...w.status, conditions: [probing] } } as WebApp;
  expect(rollbackVerdict(unready, false, T0 + 30_000)).toEqual({ kind: "waiting", ms: 40_000 });
  expect(rollbackVerdict(unready, false, T0 + 70_000).kind).toBe("rollBack");
});
