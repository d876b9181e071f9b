import { describe, expect, test } from "bun:test";
import type { WebAppStatus } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { FIRST_STATUS_WAIT_MS, firstRolloutStart, firstStatusWait } from "./first-status.ts";

const T0 = Date.parse("2026-12-02T06:00:00Z");
const deployment = (createdAt: number): KubeObject => ({
  metadata: { name: "web-deployment", namespace: "ns", creationTimestamp: new Date(createdAt).toISOString() },
});
const status = (on: Record<string, boolean>): WebAppStatus => ({
  observedGeneration: 1,
  conditions: Object.entries(on).map(([type, value]) => ({
    type,
    status: value ? "True" : "False",
    reason: "R",
    message: "m",
    lastTransitionTime: new Date(T0).toISOString(),
  })),
});
const reconciling = status({ Ready: false, Reconciling: true, Stalled: false, Degraded: false });
/** As the reconciler reads a stored status: reconciled before iff it has conditions (every status we write has). */
const reconciledBefore = (stored: WebAppStatus | undefined) => (stored?.conditions?.length ?? 0) > 0;
const rolloutStart = (stored: WebAppStatus | undefined, dep: KubeObject | undefined) =>
  firstRolloutStart(reconciledBefore(stored), dep);
const wait = (stored: WebAppStatus | undefined, next: WebAppStatus, dep: KubeObject | undefined, now: number) =>
  firstStatusWait(rolloutStart(stored, dep), next, now);

describe("first status", () => {
  test("a new WebApp in progress waits until its Deployment is FIRST_STATUS_WAIT_MS old", () => {
    expect(wait(undefined, reconciling, deployment(T0), T0 + 2_000)).toBe(FIRST_STATUS_WAIT_MS - 2_000);
    expect(wait({ observedGeneration: 0 }, reconciling, deployment(T0), T0)).toBe(FIRST_STATUS_WAIT_MS);
  });

  test("once the Deployment is that old, the first status is written", () => {
    expect(wait(undefined, reconciling, deployment(T0), T0 + FIRST_STATUS_WAIT_MS)).toBeUndefined();
  });

  test("a status that says Ready, Stalled or Degraded is written at once", () => {
    for (const type of ["Ready", "Stalled", "Degraded"]) {
      const next = status({ Ready: false, Reconciling: false, Stalled: false, Degraded: false, [type]: true });
      expect(wait(undefined, next, deployment(T0), T0)).toBeUndefined();
    }
  });

  test("a WebApp that has a status of ours writes every change", () => {
    expect(wait(reconciling, reconciling, deployment(T0), T0)).toBeUndefined();
  });

  test("without a Deployment, or one without its creation time, the status is written", () => {
    expect(wait(undefined, reconciling, undefined, T0)).toBeUndefined();
    expect(wait(undefined, reconciling, { metadata: { name: "x" } }, T0)).toBeUndefined();
  });

  test("the rollout of a first status began when its Deployment was created; a status of ours has no such start", () => {
    expect(rolloutStart(undefined, deployment(T0))).toBe(T0);
    expect(rolloutStart({ observedGeneration: 0 }, deployment(T0))).toBe(T0);
    expect(rolloutStart(reconciling, deployment(T0))).toBeUndefined();
    expect(rolloutStart(undefined, undefined)).toBeUndefined();
  });
});
