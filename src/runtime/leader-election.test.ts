import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { LeaderElectionConfigError, microTime, validateLeaderElectionConfig } from "./leader-election.ts";
import { createFakeKube, objKey } from "./_fake-kube.ts";
import { lease, NAME, NS, replica } from "./_fake-replica.ts";
import { KubeError } from "../kube/errors.ts";
import { LEASES as LEASE } from "../kube/resources.ts";

describe("leader election", () => {
  test("a replica acquires a lease that does not exist by creating it, and renews it every retry period", async () => {
    const clock = createFakeClock(1_000_000);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a");
    await clock.settle();
    expect(a.seen.startedAt).toBe(1_000_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.status).toEqual([false, true]);
    expect(a.seen.leaders).toEqual(["a"]);
    expect(lease(kube)?.spec).toEqual({
      holderIdentity: "a",
      leaseDurationSeconds: 15,
      acquireTime: "1970-01-01T00:16:40.000000Z",
      renewTime: "1970-01-01T00:16:40.000000Z",
      leaseTransitions: 0,
    });
    await clock.advance(6_000);
    const renews = kube.calls.filter((c) => c.method === "replace").map((c) => c.at - 1_000_000);
    expect(renews).toEqual([2000, 4000, 6000]);
    expect(lease(kube)?.spec?.renewTime).toBe(microTime(1_006_000));
    expect(lease(kube)?.spec?.acquireTime).toBe(microTime(1_000_000));
    a.ctl.abort();
    await a.done;
  });

  test("a standby does not acquire a lease that its holder keeps renewing", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a");
    await clock.settle();
    const b = replica(kube, clock, "b");
    await clock.advance(120_000);
    expect(b.seen.startedAt).toBeUndefined();
    expect(b.elector.isLeader()).toBe(false);
    expect(b.elector.leader()).toBe("a");
    expect(b.seen.leaders).toEqual(["a"]);
    expect(b.status).toEqual([false]);
    b.ctl.abort();
    a.ctl.abort();
    expect(await b.done).toEqual({ kind: "cancelled" });
    await a.done;
  });

  test("a standby takes over a lease not renewed for leaseDuration of its own clock, at that instant, whatever the remote renewTime says", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    // A holder that died; its clock was far ahead, so its renewTime lies in the future.
    kube.objects.set(objKey(LEASE, NS, NAME), {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: NAME, namespace: NS, resourceVersion: "7" },
      spec: {
        holderIdentity: "old",
        leaseDurationSeconds: 15,
        renewTime: "2099-01-01T00:00:00.000000Z",
        acquireTime: "2099-01-01T00:00:00.000000Z",
        leaseTransitions: 3,
      },
    });
    const b = replica(kube, clock, "b");
    await clock.advance(14_999);
    expect(b.seen.startedAt).toBeUndefined();
    await clock.advance(1);
    expect(b.seen.startedAt).toBe(15_000); // a try at the instant it expires: 0 + 15 s
    expect(lease(kube)?.spec).toMatchObject({
      holderIdentity: "b",
      leaseTransitions: 4,
      acquireTime: microTime(15_000),
    });
    expect(b.seen.leaders).toEqual(["old", "b"]);
    b.ctl.abort();
    await b.done;
  });

  test("a leader whose renewals fail for renewDeadline stops leading before its lease could expire", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a");
    await clock.advance(5_000); // renewed at 2 s and 4 s
    a.cut.on = true;
    await clock.advance(10_000);
    expect(a.seen.stoppedAt).toBeUndefined();
    await clock.advance(1_000);
    // The failing cycle began at 6 s; its deadline is 6 + 10 = 16 s, before 4 + 15 = 19 s when the lease expires.
    expect(a.seen.stoppedAt).toBe(16_000);
    expect(a.outcome()).toEqual({ kind: "lost" });
    expect(a.seen.signal?.aborted).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.status).toEqual([false, true, false]);
    expect(lease(kube)?.spec?.holderIdentity).toBe("a"); // not released: we could not reach it
  });

  test("a renewal that meets a conflict is retried and leadership is kept", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a");
    await clock.settle();
    let conflicts = 1;
    kube.failWith = (method) =>
      method === "replace" && conflicts-- > 0 ? new KubeError("Conflict", "modified", 409) : undefined;
    await clock.advance(3_000);
    expect(lease(kube)?.spec?.renewTime).toBe(microTime(0)); // the renewal at 2 s met the conflict
    await clock.advance(3_000);
    expect(a.elector.isLeader()).toBe(true);
    expect(kube.calls.filter((c) => c.method === "replace").map((c) => c.at)).toEqual([2000, 4000, 6000]);
    expect(lease(kube)?.spec?.renewTime).toBe(microTime(6_000));
    a.ctl.abort();
    await a.done;
  });

  test("release on shutdown lets the standby acquire on its next retry", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a");
    await clock.settle();
    const b = replica(kube, clock, "b");
    await clock.advance(5_000);
    a.ctl.abort();
    await a.done;
    expect(a.outcome()).toEqual({ kind: "released" });
    expect(a.seen.stoppedAt).toBe(5_000);
    expect(lease(kube)?.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1 });
    await clock.advance(1_000);
    expect(b.seen.startedAt).toBe(6_000);
    expect(lease(kube)?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    b.ctl.abort();
    await b.done;
  });

  test("a leader stops reporting itself leading before its release is written (a standby may lead from then on)", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const replace = kube.replace.bind(kube);
    const atRelease: boolean[] = [];
    let a: ReturnType<typeof replica> | undefined;
    kube.replace = (async (rt, obj, ...rest) => {
      const released = (obj as { spec?: { holderIdentity?: string } }).spec?.holderIdentity === "";
      if (released && a) atRelease.push(a.elector.isLeader(), a.status.at(-1) ?? false);
      return replace(rt, obj, ...rest);
    }) as typeof kube.replace;
    a = replica(kube, clock, "a");
    await clock.advance(3_000);
    expect(a.elector.isLeader()).toBe(true);
    a.ctl.abort();
    await a.done;
    expect(a.outcome()).toEqual({ kind: "released" });
    expect(atRelease).toEqual([false, false]); // isLeader() and leader_election_master_status, as the write went out
  });

  test("on shutdown the leader keeps renewing while its work drains, then releases", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(
      kube,
      clock,
      "a",
      (signal) => new Promise<void>((r) => signal.addEventListener("abort", () => void clock.sleep(5_000).then(r))),
    );
    await clock.advance(1_000);
    a.ctl.abort();
    await clock.advance(4_000);
    expect(a.seen.signal?.aborted).toBe(true);
    expect(a.outcome()).toBeUndefined();
    expect(lease(kube)?.spec?.holderIdentity).toBe("a");
    expect(lease(kube)?.spec?.renewTime).toBe(microTime(4_000));
    await clock.advance(2_000);
    expect(a.outcome()).toEqual({ kind: "released" });
    expect(a.seen.stoppedAt).toBe(6_000);
    expect(lease(kube)?.spec?.holderIdentity).toBe("");
  });

  test("a leader whose work fails steps down and releases the lease", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const a = replica(kube, clock, "a", () => Promise.reject(new Error("controller crashed")));
    await clock.settle();
    const o = a.outcome();
    expect(o?.kind).toBe("released");
    expect(o?.kind === "released" && (o.workError as Error).message).toBe("controller crashed");
    expect(lease(kube)?.spec?.holderIdentity).toBe("");
  });

  test("the configuration must satisfy leaseDuration > renewDeadline > 1.2 × retryPeriod, with errors saying why", () => {
    const base = { leaseName: "l", namespace: "n", identity: "i" };
    expect(validateLeaderElectionConfig(base)).toMatchObject({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: true,
    });
    expect(() => validateLeaderElectionConfig({ ...base, leaseDurationMs: 10_000 })).toThrow(
      /leaseDurationMs \(10000\) must be greater than renewDeadlineMs \(10000\)/,
    );
    expect(() => validateLeaderElectionConfig({ ...base, renewDeadlineMs: 2_400 })).toThrow(
      /renewDeadlineMs \(2400\) must be greater than 1.2 × retryPeriodMs \(2000\)/,
    );
    expect(() => validateLeaderElectionConfig({ ...base, identity: "" })).toThrow(LeaderElectionConfigError);
    expect(() => validateLeaderElectionConfig({ ...base, retryPeriodMs: 0 })).toThrow(/retryPeriodMs must be > 0/);
  });

  test("lease times are written with six fractional digits, as metav1.MicroTime", () => {
    expect(microTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678))).toBe("2024-01-02T03:04:05.678000Z");
  });
});
