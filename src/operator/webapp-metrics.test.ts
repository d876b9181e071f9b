import { describe, expect, test } from "bun:test";
import type { RolloutRecord } from "../api/rollout-history.ts";
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { Registry } from "../runtime/prometheus.ts";
import { registerWebAppMetrics, rolloutChanges } from "./webapp-metrics.ts";

const T0 = "2026-12-05T10:00:00Z";
const cond = (type: string, status: "True" | "False" | "Unknown", reason: string) => ({
  type,
  status,
  reason,
  message: "",
  lastTransitionTime: T0,
});
function app(name: string, spec: Record<string, unknown>, status: WebAppStatus = {}): WebAppObject {
  return { metadata: { namespace: "team-a", name, uid: `uid-${name}` }, spec, status };
}
const rec = (revision: number, more: Partial<RolloutRecord> = {}): RolloutRecord => ({
  revision,
  image: `web:v${revision}`,
  digest: `d${revision}`,
  startedAt: T0,
  ...more,
});

function setup(webapps: WebAppObject[], leading = true) {
  const r = new Registry();
  const state = { webapps, leading };
  const reported = registerWebAppMetrics(r, { list: () => state.webapps, leading: () => state.leading });
  const lines = () =>
    r
      .expose()
      .split("\n")
      .filter((l) => l.startsWith("devctl_webapp_") && !l.includes("_bucket"));
  return { r, state, reported, lines };
}

describe("WebApp metrics (kube-state-metrics style)", () => {
  test("each WebApp in the cache has its info, conditions and replica counts, in the cache's order", () => {
    const ready = app(
      "web",
      { image: "web:v2", replicas: 3 },
      {
        replicas: 3,
        readyReplicas: 3,
        availableReplicas: 2,
        conditions: [cond("Ready", "True", "Ready"), cond("Available", "True", "MinimumReplicasAvailable")],
      },
    );
    const stalled = app(
      "api",
      { image: "api:bad" },
      { conditions: [cond("Stalled", "True", "CrashLoopBackOff"), cond("Custom", "True", "X")] },
    );
    const { lines } = setup([stalled, ready]);
    expect(lines()).toEqual([
      'devctl_webapp_info{image="api:bad",name="api",namespace="team-a"} 1',
      'devctl_webapp_info{image="web:v2",name="web",namespace="team-a"} 1',
      'devctl_webapp_spec_replicas{name="api",namespace="team-a"} 1',
      'devctl_webapp_spec_replicas{name="web",namespace="team-a"} 3',
      'devctl_webapp_status_available_replicas{name="api",namespace="team-a"} 0',
      'devctl_webapp_status_available_replicas{name="web",namespace="team-a"} 2',
      'devctl_webapp_status_condition{name="api",namespace="team-a",reason="CrashLoopBackOff",status="true",type="Stalled"} 1',
      'devctl_webapp_status_condition{name="web",namespace="team-a",reason="Ready",status="true",type="Ready"} 1',
      'devctl_webapp_status_condition{name="web",namespace="team-a",reason="MinimumReplicasAvailable",status="true",type="Available"} 1',
      'devctl_webapp_status_ready_replicas{name="api",namespace="team-a"} 0',
      'devctl_webapp_status_ready_replicas{name="web",namespace="team-a"} 3',
      'devctl_webapp_status_replicas{name="api",namespace="team-a"} 0',
      'devctl_webapp_status_replicas{name="web",namespace="team-a"} 3',
    ]);
  });

  test("a deleted WebApp's series are gone at the next scrape; a new image replaces the info series", () => {
    const web = app("web", { image: "web:v1" });
    const { state, lines } = setup([web, app("gone", { image: "x:1" })]);
    expect(lines().some((l) => l.includes('name="gone"'))).toBe(true);
    state.webapps = [{ ...web, spec: { image: "web:v2" } }];
    expect(lines().filter((l) => l.startsWith("devctl_webapp_info"))).toEqual([
      'devctl_webapp_info{image="web:v2",name="web",namespace="team-a"} 1',
    ]);
    expect(lines().some((l) => l.includes('name="gone"'))).toBe(false);
  });

  test("only the leader exposes the WebApps' series: a standby would double every sum", () => {
    const { state, lines } = setup([app("web", { image: "web:v1" })], false);
    expect(lines().filter((l) => !l.includes("_total") && !l.includes("duration"))).toEqual([]);
    state.leading = true;
    expect(lines()).toContain('devctl_webapp_info{image="web:v1",name="web",namespace="team-a"} 1');
  });

  test("with autoscaling the desired count is the autoscaler's; a hand-written odd reason is reported as Other", () => {
    const scaled = app(
      "web",
      { image: "web:v1", autoscaling: { minReplicas: 2, maxReplicas: 5 } },
      { autoscaling: { currentReplicas: 2, desiredReplicas: 4 }, conditions: [cond("Ready", "False", "a b")] },
    );
    const { lines } = setup([scaled]);
    expect(lines()).toContain('devctl_webapp_spec_replicas{name="web",namespace="team-a"} 4');
    expect(lines()).toContain(
      'devctl_webapp_status_condition{name="web",namespace="team-a",reason="Other",status="false",type="Ready"} 1',
    );
  });

  test("a rollout's Ready, failure and rollback are each counted once, when the status that says so is written", () => {
    const { r, reported } = setup([]);
    const before = app("web", { image: "web:v2" }, { rollouts: [rec(1, { readyAt: T0 }), rec(2)] });
    const failed: WebAppStatus = {
      rollouts: [rec(1, { readyAt: T0 }), rec(2, { failedAt: T0, reason: "CrashLoopBackOff" })],
    };
    reported(before, failed);
    reported({ ...before, status: failed }, failed); // the same status again: nothing new
    const back: WebAppStatus = {
      rollouts: [rec(1, { readyAt: T0 }), rec(2, { failedAt: T0, reason: "CrashLoopBackOff", rolledBackAt: T0 })],
    };
    reported({ ...before, status: failed }, back);
    const third: WebAppStatus = { rollouts: [...(back.rollouts ?? []), rec(3, { readyAt: "2026-12-05T10:00:42Z" })] };
    reported({ ...before, status: back }, third);
    const text = r.expose();
    expect(text).toContain('devctl_webapp_rollout_failures_total{namespace="team-a",reason="CrashLoopBackOff"} 1\n');
    expect(text).toContain('devctl_webapp_rollbacks_total{namespace="team-a"} 1\n');
    expect(text).toContain('devctl_webapp_rollout_duration_seconds_count{namespace="team-a"} 1\n');
    expect(text).toContain('devctl_webapp_rollout_duration_seconds_sum{namespace="team-a"} 42\n');
    expect(text).toContain('devctl_webapp_rollout_duration_seconds_bucket{namespace="team-a",le="60"} 1\n');
    expect(text).toContain('devctl_webapp_rollout_duration_seconds_bucket{namespace="team-a",le="30"} 0\n');
  });

  test("pods that start failing are counted by reason once, also long after a rollout; the same failure again is not", () => {
    const { r, reported } = setup([]);
    const ok = app("web", { image: "web:v1" }, { conditions: [cond("Degraded", "False", "AsExpected")] });
    const crashing: WebAppStatus = { conditions: [cond("Degraded", "True", "CrashLoopBackOff")] };
    reported(ok, crashing);
    reported({ ...ok, status: crashing }, crashing);
    const probing: WebAppStatus = { conditions: [cond("Degraded", "True", "ProbeFailed")] };
    reported({ ...ok, status: crashing }, probing);
    reported({ ...ok, status: probing }, { conditions: [cond("Degraded", "True", "ResourceExists")] });
    const text = r.expose();
    expect(text).toContain('devctl_webapp_pod_failures_total{namespace="team-a",reason="CrashLoopBackOff"} 1\n');
    expect(text).toContain('devctl_webapp_pod_failures_total{namespace="team-a",reason="ProbeFailed"} 1\n');
    expect(text).not.toContain('reason="ResourceExists"');
  });

  test("rolloutChanges names each record's new transitions and nothing already stored", () => {
    const stored: WebAppStatus = { rollouts: [rec(1, { readyAt: T0 })] };
    expect(rolloutChanges(stored, stored)).toEqual({ ready: [], failed: [], rolledBack: [] });
    expect(rolloutChanges(undefined, stored).ready.map((r) => r.revision)).toEqual([1]);
    const next = { rollouts: [rec(1, { readyAt: T0 }), rec(2, { failedAt: T0, reason: "ImagePullBackOff" })] };
    expect(rolloutChanges(stored, next).failed.map((r) => r.revision)).toEqual([2]);
  });
});
