/**
 * Clock skew cannot delay a status or a diagnosis (issue #30, 3): the operator stamps statuses on the API server's
 * clock, read from its answers' Date headers (src/runtime/server-time.ts). The compiled operator runs under
 * libfaketime an hour ahead of this machine, whose clock the local API server uses, as on a node whose clock is
 * wrong (ahead rather than behind: behind, the operator would refuse the cluster's certificates, made minutes ago).
 * - The stamps it writes (conditions' lastTransitionTime, the rollout history's startedAt and readyAt, its Events'
 *   first and last timestamps) are the API server's time within 2 s, not an hour ahead (before server-time.ts, they
 *   were).
 * - A leader change from that node to one whose clock is right: a revision the first leader saw fail is rolled back
 *   by the second after its failureThreshold, not an hour late (before, failedAt was an hour ahead).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { RolloutRecord } from "../src/api/rollout-history.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import { describeWhen, type Prerequisite } from "./_skip.ts";
import {
  conditionOf,
  ensureCrd,
  eventsOnceSeen,
  kube,
  tempNamespace,
  WEBAPPS,
  readyOnItsGeneration,
  type WebAppLike,
  webAppOnce,
  webapp,
  deployedImage as deployedImageOf,
} from "./_support.ts";

/** libfaketime, preloaded into the operator itself (the faketime command would stand between it and our signals). */
const LIBFAKETIME = [...new Bun.Glob("*/faketime/libfaketime.so.1").scanSync({ cwd: "/usr/lib", onlyFiles: true })][0];
const FAKETIME: Prerequisite = {
  met: LIBFAKETIME !== undefined,
  reason: "needs libfaketime (apt-get install faketime) to run the operator with its clock an hour ahead",
};
/** The wall clock an hour ahead; timers (the monotonic clock) as they are. */
const HOUR_AHEAD = { LD_PRELOAD: `/usr/lib/${LIBFAKETIME}`, FAKETIME: "+1h", DONT_FAKE_MONOTONIC: "1" };
const HOUR = 3_600_000;
/** How far a stamp may be from the API server's time: a whole-second stamp, and the estimate's second. */
const SLACK_MS = 2_000;
const CRASH = "stage.devctl.test/waiting:CrashLoopBackOff";
const WITHIN_MS = 60_000;

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let ahead: OperatorProcess | undefined;
let right: OperatorProcess | undefined;
const args = () => ["--namespaces", ns.name, "--leader-elect=false", "--auto-rollback"];

beforeAll(async () => {
  if (!FAKETIME.met) return;
  await ensureCrd();
  ns = await tempNamespace("clock-skew");
  ahead = await startOperator(args(), { env: HOUR_AHEAD });
});
afterAll(async () => {
  const codes = [await ahead?.stop(), await right?.stop()];
  await ns?.drop();
  for (const code of codes) if (code !== undefined) expect(code).toBe(0);
});

const until = (name: string, what: string, ok: (w: WebAppLike) => boolean) =>
  webAppOnce(ns.name, name, what, ok, WITHIN_MS);
const deployedImage = (name: string) => deployedImageOf(ns.name, name);

/** Each stamp of the status, by where it is: "conditions[Ready].lastTransitionTime", "rollouts[1].readyAt". */
function stamps(w: WebAppLike): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of (w.status?.conditions ?? []) as { type: string; lastTransitionTime?: string }[])
    if (c.lastTransitionTime) out[`conditions[${c.type}].lastTransitionTime`] = Date.parse(c.lastTransitionTime);
  for (const r of (w.status?.rollouts ?? []) as RolloutRecord[])
    for (const k of ["startedAt", "readyAt", "failedAt", "rolledBackAt"] as const) {
      const at = r[k];
      if (typeof at === "string") out[`rollouts[${r.revision}].${k}`] = Date.parse(at);
    }
  return out;
}

/** Every stamp lies in [from, to] of the API server's (this machine's) clock, give or take SLACK_MS. */
function expectStampsWithin(w: WebAppLike, from: number, to: number): void {
  const all = stamps(w);
  expect(Object.keys(all).length).toBeGreaterThan(0);
  const off = Object.entries(all).filter(([, at]) => !(at >= from - SLACK_MS && at <= to + SLACK_MS));
  expect(off.map(([where, at]) => `${where} ${new Date(at).toISOString()}`)).toEqual([]);
}

describeWhen(FAKETIME)("an operator on a node whose clock is an hour ahead of the API server's", () => {
  test("really runs an hour ahead: its own log lines say so", () => {
    const first = (ahead?.logs() ?? "").split("\n").find((l) => l.startsWith("{"));
    const ts = Date.parse((JSON.parse(first ?? "{}") as { ts?: string }).ts ?? "");
    expect(ts - Date.now()).toBeGreaterThan(HOUR - 60_000);
  });

  test("stamps a WebApp's conditions, rollout and Events on the API server's clock, not its own", async () => {
    const from = Date.now();
    await kube.create(WEBAPPS, webapp("stamped", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 }));
    const w = await until("stamped", "Ready on its generation", readyOnItsGeneration);
    expectStampsWithin(w, from, Date.now());
    expect(stamps(w)["rollouts[1].readyAt"]).toBeDefined();
    // Its Events too: the Created one (an Event is written after what it tells).
    const events = await eventsOnceSeen(ns.name, "stamped", (e) => e.reason === "Created", "a Created Event");
    const to = Date.now();
    for (const e of events as { firstTimestamp?: string; lastTimestamp?: string }[])
      for (const at of [e.firstTimestamp, e.lastTimestamp])
        expect(Date.parse(at ?? "")).toBeWithin(from - SLACK_MS, to + SLACK_MS);
  });

  test("a failure it saw is rolled back on time by the next leader, on a node whose clock is right", async () => {
    const spec = { image: "nginx:1.25", replicas: 1, port: 80, rollout: { failureThreshold: "15s" } };
    await kube.create(WEBAPPS, webapp("handed", ns.name, spec));
    await until("handed", "Ready on its generation", readyOnItsGeneration);
    const from = Date.now();
    await kube.patch(WEBAPPS, "handed", ns.name, { spec: { image: CRASH } }, "merge");
    const failing = await until(
      "handed",
      "revision 2 failed",
      (w) => w.status?.rollouts?.at(-1)?.failedAt !== undefined,
    );
    // The leader goes away before its failureThreshold is over; the next one runs on this machine's clock.
    expect(await ahead?.stop()).toBe(0);
    ahead = undefined;
    expect(await deployedImage("handed")).toBe(CRASH); // not rolled back by the first leader
    right = await startOperator(args());
    const failedAt = Date.parse(failing.status?.rollouts?.at(-1)?.failedAt ?? "");
    const rolled = await until(
      "handed",
      "Stalled RolledBack",
      (w) => conditionOf(w, "Stalled")?.reason === "RolledBack",
    );
    const late = Date.now() - (failedAt + 15_000);
    console.error(`[clock-skew] rolled back ${late} ms after failedAt + failureThreshold`);
    expect(await deployedImage("handed")).toBe("nginx:1.25");
    expect(late).toBeLessThan(WITHIN_MS);
    expectStampsWithin(failing, from - WITHIN_MS, Date.now());
    expectStampsWithin(rolled, from - WITHIN_MS, Date.now());
  });
});
