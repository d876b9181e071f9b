import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { SAMPLES, ServerTime, serverTimeClock } from "./server-time.ts";

/** The Date header a server whose clock is `skew` ms ahead of ours writes at our time `at`: whole seconds. */
const dateAt = (at: number, skew: number): string => new Date(Math.floor((at + skew) / 1000) * 1000).toUTCString();

/**
 * Answers of a server `skew` ms ahead, one every 137 ms of our time from `from`, each with a round trip of `rtt` ms
 * and written halfway through it (the odd period spreads the writes over the second's phases).
 */
function answer(time: ServerTime, skew: number, { from = 1_800_000_000_000, n = SAMPLES, rtt = 20 } = {}): number {
  let sent = from;
  for (let i = 0; i < n; i++, sent += 137) time.observe(dateAt(sent + rtt / 2, skew), sent, sent + rtt);
  return sent;
}

describe("the API server's clock from its Date headers", () => {
  test("with no answer yet the offset is 0", () => {
    expect(new ServerTime().offset()).toBe(0);
  });

  test("clocks that agree give exactly 0, whatever the second's phase and the round trip", () => {
    for (const rtt of [0, 5, 300, 2_500]) {
      const time = new ServerTime();
      for (let from = 1_800_000_000_000; from < 1_800_000_003_000; from += 97) {
        answer(time, 0, { from, n: 1, rtt });
        expect(time.offset()).toBe(0);
      }
    }
  });

  test("a skew smaller than the date's second may read 0: the correction is never more than the evidence", () => {
    const time = new ServerTime();
    answer(time, 400);
    expect(time.offset()).toBeGreaterThanOrEqual(0);
    expect(time.offset()).toBeLessThanOrEqual(400);
  });

  for (const skew of [3_600_000, 90_000, 2_000, -2_000, -90_000, -86_400_000]) {
    test(`a server ${Math.abs(skew)} ms ${skew > 0 ? "ahead" : "behind"}: the offset is within a second plus the round trip of it, on the near side of 0`, () => {
      const time = new ServerTime();
      answer(time, skew, { n: 1 });
      expect(Math.abs(time.offset())).toBeLessThanOrEqual(Math.abs(skew));
      expect(Math.abs(skew - time.offset())).toBeLessThan(1_000 + 20);
      answer(time, skew);
      // Sixteen answers at different phases of the second narrow it to about their spacing.
      expect(Math.abs(skew - time.offset())).toBeLessThanOrEqual(137 + 20);
      expect(Math.abs(time.offset())).toBeLessThanOrEqual(Math.abs(skew));
    });
  }

  test("when a clock is set, the answers before it are forgotten at the first that contradicts them", () => {
    const time = new ServerTime();
    const next = answer(time, 3_600_000);
    expect(time.offset()).toBeGreaterThan(3_598_000);
    answer(time, 0, { from: next, n: 1 });
    expect(time.offset()).toBe(0);
    answer(time, -60_000, { from: next + 1_000, n: 1 });
    expect(time.offset()).toBeLessThan(-58_000);
  });

  test("only the last SAMPLES answers are intersected", () => {
    const time = new ServerTime();
    // One answer with a round trip of 0 written on the second pins the offset exactly...
    time.observe(new Date(1_800_000_000_000 + 60_000).toUTCString(), 1_800_000_000_000, 1_800_000_000_000);
    expect(time.offset()).toBe(60_000);
    // ...until SAMPLES later answers (slow ones: each allows a wider range) have pushed it out.
    answer(time, 60_000, { from: 1_800_000_001_000, n: SAMPLES - 1, rtt: 3_000 });
    expect(time.offset()).toBe(60_000);
    answer(time, 60_000, { from: 1_800_000_010_000, n: 1, rtt: 3_000 });
    expect(time.offset()).toBeLessThan(60_000);
    expect(time.offset()).toBeGreaterThan(60_000 - 4_000);
  });

  test("a missing or unparsable date, or an answer timed backwards, is ignored", () => {
    const time = new ServerTime();
    time.observe(null, 1_000, 1_020);
    time.observe("", 1_000, 1_020);
    time.observe("yesterday", 1_000, 1_020);
    time.observe(new Date(1_000 + 3_600_000).toUTCString(), 1_020, 1_000);
    expect(time.offset()).toBe(0);
  });

  test("serverTimeClock reads base plus the offset, and its timers are base's", async () => {
    const base = createFakeClock(1_800_000_000_000);
    const time = new ServerTime();
    const clock = serverTimeClock(base, time);
    expect(clock.now()).toBe(base.now());
    time.observe(new Date(base.now() + 3_600_000).toUTCString(), base.now(), base.now());
    expect(clock.now()).toBe(base.now() + 3_600_000);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(base.now()), 500);
    const slept = clock.sleep(1_000).then(() => fired.push(base.now()));
    await base.advance(1_000);
    await slept;
    expect(fired).toEqual([1_800_000_000_500, 1_800_000_001_000]);
  });
});
