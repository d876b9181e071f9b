import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { microTime } from "./leader-election.ts";
import { createFakeKube, type FakeKube, WatchScript } from "./_fake-kube.ts";
import { lease, NAME, NS, replica } from "./_fake-replica.ts";
import { WaitBetweenTries } from "./_lease-watch.ts";
import { KubeError } from "../kube/errors.ts";
import { LEASES as LEASE } from "../kube/resources.ts";
import type { KubeObject } from "../kube/types.ts";

/** Jitter 0.6 → a standby without the watch tries every 2 000 · (1 + 1.2 · 0.6) = 3 440 ms: at 0, 3 440, 6 880 … */
const JITTER = 0.6;

/** Answers the standby's LIST with the Lease as stored now, and opens its watch. */
function watched(kube: FakeKube): WatchScript {
  const stored = lease(kube);
  kube.answerList({ metadata: { resourceVersion: "1" }, items: stored ? [stored as KubeObject] : [] });
  const stream = new WatchScript();
  kube.answerWatch(stream);
  return stream;
}

/** What the API server would send now for the Lease. */
const modified = (kube: FakeKube) => ({ type: "MODIFIED" as const, object: lease(kube) as KubeObject });

/** "a" leads (it created the Lease at 0), then "b" waits as a standby with JITTER. */
async function leaderAndStandby() {
  const clock = createFakeClock(0);
  const kube = createFakeKube(() => clock.now());
  const a = replica(kube, clock, "a");
  await clock.settle();
  const b = replica(kube, clock, "b", undefined, { random: JITTER });
  return { clock, kube, a, b };
}

/** Stops every replica and waits for their runs to end. */
async function stop(...rs: ReturnType<typeof replica>[]) {
  for (const r of rs) r.ctl.abort();
  await Promise.all(rs.map((r) => r.done));
}

describe("leader election with the Lease watched", () => {
  test("a standby that sees every renewal takes over one lease duration after the last one, not a poll later", async () => {
    const { clock, kube, a, b } = await leaderAndStandby();
    const stream = watched(kube);
    await clock.advance(4_000); // a renewed at 2 s and 4 s; b polled at 0 and 3.44 s
    stream.push(modified(kube));
    await clock.settle();
    a.cut.on = true; // a's renewals stop reaching the API server: 4 s was its last
    await clock.advance(14_999);
    expect(b.seen.startedAt).toBeUndefined();
    await clock.advance(1);
    // Polling alone, b first saw the 4 s renewal at 6.88 s, so it would have led at 21.88 s.
    expect(b.seen.startedAt).toBe(19_000);
    expect(lease(kube)?.spec).toMatchObject({ holderIdentity: "b", acquireTime: microTime(19_000) });
    expect(stream.signal?.aborted).toBe(true); // the leader no longer watches
    await stop(a, b);
  });

  test("a release seen through the watch is taken at once", async () => {
    const { clock, kube, a, b } = await leaderAndStandby();
    const stream = watched(kube);
    await clock.advance(5_000);
    await stop(a);
    expect(lease(kube)?.spec?.holderIdentity).toBe("");
    stream.push(modified(kube));
    await clock.settle();
    expect(b.seen.startedAt).toBe(5_000); // its next poll would have been at 6.88 s
    expect(lease(kube)?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await stop(b);
  });

  test("a deleted Lease seen through the watch is created again at once by the standby", async () => {
    const { clock, kube, a, b } = await leaderAndStandby();
    const stream = watched(kube);
    await clock.advance(1_000);
    const gone = lease(kube) as KubeObject;
    a.cut.on = true;
    await kube.delete(LEASE, NAME, NS);
    stream.push({ type: "DELETED", object: gone });
    await clock.settle();
    expect(b.seen.startedAt).toBe(1_000);
    expect(lease(kube)?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 0 });
    await stop(a, b);
  });

  test("a standby that may not list and watch leases still takes over, by polling", async () => {
    const { clock, kube, a, b } = await leaderAndStandby();
    kube.answerList(new KubeError("Forbidden", 'leases.coordination.k8s.io is forbidden: cannot list "leases"', 403));
    await clock.advance(5_000);
    await stop(a);
    await clock.advance(1_879);
    expect(b.seen.startedAt).toBeUndefined();
    await clock.advance(1);
    expect(b.seen.startedAt).toBe(6_880); // its poll after 3.44 s
    await stop(b);
  });

  test("a release seen during a try skips the next wait, once, so tries neither miss it nor spin", async () => {
    const clock = createFakeClock(0);
    const wait = new WaitBetweenTries();
    const never = new AbortController().signal;
    wait.cutShort(); // no wait pending: the watch event came while a try was in flight
    await wait.sleep(clock, 2_000, never);
    expect(clock.now()).toBe(0);
    let woke = false;
    const second = wait.sleep(clock, 2_000, never).then(() => (woke = true));
    await clock.advance(1_999);
    expect(woke).toBe(false);
    wait.cutShort();
    await second;
    expect(clock.now()).toBe(1_999);
    const third = wait.sleep(clock, 2_000, never); // the cut was used: a whole wait again
    await clock.advance(2_000);
    await third;
    expect(clock.now()).toBe(3_999);
  });
});
