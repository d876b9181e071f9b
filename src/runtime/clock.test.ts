import { describe, expect, test } from "bun:test";
import { createFakeClock, realClock, repeatJittered } from "./clock.ts";

describe("fake clock", () => {
  test("now() starts where told and moves only with advance()", async () => {
    const clock = createFakeClock(1_000);
    expect(clock.now()).toBe(1_000);
    await clock.advance(250);
    expect(clock.now()).toBe(1_250);
  });

  test("advance fires due timers in deadline order, ties in creation order, with now() at each deadline", async () => {
    const clock = createFakeClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`c@${clock.now()}`), 30);
    clock.setTimeout(() => fired.push(`a@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 10);
    clock.setTimeout(() => fired.push(`late@${clock.now()}`), 31);
    await clock.advance(30);
    expect(fired).toEqual(["a@10", "b@10", "c@30"]);
    expect(clock.pendingTimers()).toBe(1);
    expect(clock.nextTimerAt()).toBe(31);
  });

  test("a cleared timer never fires", async () => {
    const clock = createFakeClock();
    let fired = false;
    const t = clock.setTimeout(() => (fired = true), 5);
    clock.clearTimeout(t);
    await clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("timers scheduled by woken async code fire within the same advance when due", async () => {
    const clock = createFakeClock();
    const seen: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await clock.sleep(10);
        await Promise.resolve();
        seen.push(clock.now());
      }
    })();
    await clock.advance(25);
    expect(seen).toEqual([10, 20]);
    await clock.advance(5);
    expect(seen).toEqual([10, 20, 30]);
  });

  test("sleep resolves early when its signal aborts and leaves no timer behind", async () => {
    const clock = createFakeClock();
    const ac = new AbortController();
    let done = false;
    const p = clock.sleep(1_000, ac.signal).then(() => (done = true));
    await clock.advance(10);
    expect(done).toBe(false);
    ac.abort();
    await p;
    expect(done).toBe(true);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("sleep with an already aborted signal resolves at once", async () => {
    const clock = createFakeClock();
    const ac = new AbortController();
    ac.abort();
    await clock.sleep(1_000, ac.signal);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("advance refuses to move time backwards", async () => {
    const clock = createFakeClock();
    await expect(clock.advance(-1)).rejects.toThrow(RangeError);
  });
});

describe("real clock", () => {
  test("setTimeout fires after the delay and clearTimeout cancels", async () => {
    let fired = 0;
    const t = realClock.setTimeout(() => fired++, 1);
    const cancelled = realClock.setTimeout(() => (fired += 100), 1);
    realClock.clearTimeout(cancelled);
    await realClock.sleep(20);
    expect(fired).toBe(1);
    realClock.clearTimeout(t);
  });

  test("sleep ends early on abort", async () => {
    const ac = new AbortController();
    const start = Date.now();
    setTimeout(() => ac.abort(), 5);
    await realClock.sleep(5_000, ac.signal);
    expect(Date.now() - start).toBeLessThan(1_000);
  });
});

describe("repeatJittered", () => {
  test("calls fn every period drawn within ±jitter, until stopped", async () => {
    const clock = createFakeClock();
    const randoms = [0, 1 - 1e-12, 0.5];
    const at: number[] = [];
    const stop = repeatJittered(clock, { everyMs: 1_000, jitter: 0.1, random: () => randoms.shift() ?? 0.5 }, () =>
      at.push(clock.now()),
    );
    await clock.advance(3_000);
    expect(at.map(Math.round)).toEqual([900, 2_000, 3_000]);
    stop();
    await clock.advance(10_000);
    expect(at).toHaveLength(3);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("keeps repeating after fn throws", async () => {
    const clock = createFakeClock();
    let calls = 0;
    repeatJittered(clock, { everyMs: 10 }, () => {
      calls++;
      throw new Error("boom");
    });
    await expect(clock.advance(10)).rejects.toThrow("boom");
    expect(clock.pendingTimers()).toBe(1);
    expect(calls).toBe(1);
  });
});
