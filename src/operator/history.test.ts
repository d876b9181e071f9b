import { describe, expect, test } from "bun:test";
import { HISTORY_LIMIT, recordState } from "../api/rollout-history.ts";
import type { WebAppStatus } from "../api/webapp.ts";
import type { Progress } from "../readiness/kstatus.ts";
import { nextHistory, type Revision } from "./history.ts";

const V1: Revision = { image: "app:v1", digest: "aaaa" };
const V2: Revision = { image: "app:v2", digest: "bbbb" };
const rolling: Progress = { kind: "reconciling", reason: "RollingOut", message: "1/2 replicas are ready" };
const ready: Progress = { kind: "ready", reason: "Available", message: "2/2 replicas are ready" };
const crash: Progress = { kind: "stalled", reason: "CrashLoopBackOff", message: "pod x: back-off restarting" };

/** Passes one after another, each over the status the one before returned. */
function run(steps: [Revision | undefined, Progress, string][], from?: WebAppStatus): WebAppStatus {
  let status: WebAppStatus | undefined = from;
  for (const [current, progress, now] of steps) status = { ...status, ...nextHistory(status, current, progress, now) };
  return status ?? {};
}

describe("nextHistory", () => {
  test("a first template is revision 1 from its first report; Ready marks it once and makes it the last Ready", () => {
    const s = run([
      [V1, rolling, "2026-12-05T10:00:00Z"],
      [V1, ready, "2026-12-05T10:00:07Z"],
      [V1, ready, "2026-12-05T10:05:00Z"],
    ]);
    expect(s.rollouts).toEqual([
      {
        revision: 1,
        image: "app:v1",
        digest: "aaaa",
        startedAt: "2026-12-05T10:00:00Z",
        readyAt: "2026-12-05T10:00:07Z",
      },
    ]);
    expect(s.lastReadyRevision).toBe(1);
  });

  test("an unchanged state gives the stored history back, the same array (no write by itself)", () => {
    const s = run([[V1, ready, "2026-12-05T10:00:00Z"]]);
    const again = nextHistory(s, V1, ready, "2026-12-05T11:00:00Z");
    expect(again.rollouts).toBe(s.rollouts as NonNullable<WebAppStatus["rollouts"]>);
    expect(again.lastReadyRevision).toBe(1);
  });

  test("a new template that crash-loops is revision 2, failed once with the reason; the last Ready stays 1", () => {
    const s = run([
      [V1, ready, "2026-12-05T10:00:00Z"],
      [V2, rolling, "2026-12-05T10:01:00Z"],
      [V2, crash, "2026-12-05T10:01:30Z"],
      [V2, { ...crash, reason: "ProgressDeadlineExceeded" }, "2026-12-05T10:11:00Z"],
    ]);
    expect(s.rollouts?.[1]).toEqual({
      revision: 2,
      image: "app:v2",
      digest: "bbbb",
      startedAt: "2026-12-05T10:01:00Z",
      failedAt: "2026-12-05T10:01:30Z",
      reason: "CrashLoopBackOff",
      message: "pod x: back-off restarting",
    });
    expect(s.lastReadyRevision).toBe(1);
    expect(recordState(s.rollouts?.[1] as never, true)).toBe("Failed (CrashLoopBackOff)");
  });

  test("a stall that is not the rollout's (a name conflict, an invalid spec) marks nothing", () => {
    const conflict: Progress = { kind: "stalled", reason: "ResourceExists", message: "Service x exists" };
    const s = run([[V1, conflict, "2026-12-05T10:00:00Z"]]);
    expect(s.rollouts?.[0]?.failedAt).toBeUndefined();
    expect(recordState(s.rollouts?.[0] as never, true)).toBe("Progressing");
  });

  test("a failed revision whose pods recover (a slow pull) becomes Ready and the last Ready, keeping its failure", () => {
    const s = run([
      [V1, { ...crash, reason: "ImagePullBackOff" }, "2026-12-05T10:00:00Z"],
      [V1, ready, "2026-12-05T10:02:00Z"],
    ]);
    expect(s.rollouts?.[0]).toMatchObject({ reason: "ImagePullBackOff", readyAt: "2026-12-05T10:02:00Z" });
    expect(s.lastReadyRevision).toBe(1);
    expect(recordState(s.rollouts?.[0] as never, true)).toBe("Ready");
  });

  test("a restart is a new revision of the same digest; a template replaced before it was Ready is superseded", () => {
    const s = run([
      [V1, ready, "2026-12-05T10:00:00Z"],
      [{ ...V1, restartedAt: "2026-12-05T10:10:00Z" }, rolling, "2026-12-05T10:10:01Z"],
      [V2, rolling, "2026-12-05T10:10:05Z"],
    ]);
    expect(s.rollouts?.map((r) => [r.revision, r.digest, r.restartedAt])).toEqual([
      [1, "aaaa", undefined],
      [2, "aaaa", "2026-12-05T10:10:00Z"],
      [3, "bbbb", undefined],
    ]);
    expect(recordState(s.rollouts?.[1] as never, false)).toBe("Superseded");
    expect(s.lastReadyRevision).toBe(1);
  });

  test(`keeps the last ${HISTORY_LIMIT} records and numbers on`, () => {
    const steps = Array.from({ length: 13 }, (_, i): [Revision, Progress, string] => [
      { image: `app:v${i}`, digest: `d${i}` },
      ready,
      `2026-12-05T10:${String(i).padStart(2, "0")}:00Z`,
    ]);
    const s = run(steps);
    expect(s.rollouts?.map((r) => r.revision)).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(s.lastReadyRevision).toBe(13);
  });

  test("a pass that rolls out no template (an invalid spec) keeps the stored history as it is", () => {
    const s = run([[V1, ready, "2026-12-05T10:00:00Z"]]);
    expect(nextHistory(s, undefined, crash, "2026-12-05T10:30:00Z")).toEqual({
      rollouts: s.rollouts,
      lastReadyRevision: 1,
    } as never);
    expect(nextHistory(undefined, undefined, ready, "2026-12-05T10:30:00Z")).toEqual({});
  });
});

test("a probe that keeps the new pods unready marks the revision failed (ProbeFailed), though it does not stall", () => {
  const probing: Progress = { kind: "reconciling", reason: "ProbeFailed", message: "Readiness probe failed: 503" };
  const s = run([[V1, probing, "2026-12-05T10:00:30Z"]]);
  expect(s.rollouts?.[0]).toMatchObject({ failedAt: "2026-12-05T10:00:30Z", reason: "ProbeFailed" });
});

test("a failure soon after Ready (a crash after the container started) unmakes Ready; later it does not", () => {
  const s = run([
    [V1, ready, "2026-12-05T10:00:00Z"],
    [V2, rolling, "2026-12-05T10:01:00Z"],
    [V2, ready, "2026-12-05T10:01:05Z"], // its pods ready for an instant
    [V2, crash, "2026-12-05T10:01:40Z"],
  ]);
  expect(s.rollouts?.[1]).toMatchObject({ revision: 2, failedAt: "2026-12-05T10:01:40Z", reason: "CrashLoopBackOff" });
  expect(s.rollouts?.[1]?.readyAt).toBeUndefined();
  expect(s.lastReadyRevision).toBe(1);
  const settled = run([
    [V1, ready, "2026-12-05T10:00:00Z"],
    [V1, crash, "2026-12-05T10:30:00Z"],
  ]);
  expect(settled.rollouts?.[0]).toMatchObject({ readyAt: "2026-12-05T10:00:00Z" });
  expect(settled.rollouts?.[0]?.failedAt).toBeUndefined();
  expect(settled.lastReadyRevision).toBe(1);
});

test("a record marked Ready keeps its spec's pod-template fields (podSpec); a failed one, or one unmade, none", () => {
  const spec = { image: "app:v2", port: 8080, replicas: 3, env: [{ name: "MODE", value: "x" }] };
  const V2s: Revision = { ...V2, spec };
  const s = run([
    [V1, ready, "2026-12-05T10:00:00Z"],
    [V2s, rolling, "2026-12-05T10:01:00Z"],
    [V2s, ready, "2026-12-05T10:01:05Z"],
  ]);
  expect(JSON.parse(s.rollouts?.[1]?.podSpec ?? "")).toEqual({
    image: "app:v2",
    port: 8080,
    env: [{ name: "MODE", value: "x" }],
  });
  const unmade = run([[V2s, crash, "2026-12-05T10:01:40Z"]], s);
  expect(unmade.rollouts?.[1]?.podSpec).toBeUndefined();
  expect(unmade.rollouts?.[1]?.failedAt).toBe("2026-12-05T10:01:40Z");
});
