import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createBackoff } from "./backoff.ts";

describe("backoff", () => {
  test("without jitter the delays double from 800 ms and stay at 30 s", () => {
    const clock = createFakeClock();
    const b = createBackoff({ clock, jitter: 0 });
    const delays = Array.from({ length: 9 }, () => b.next());
    expect(delays).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    expect(b.attempts).toBe(9);
  });

  test("with jitter a delay lies between half its ceiling (never below 800 ms) and the ceiling", () => {
    const clock = createFakeClock();
    const high = createBackoff({ clock, random: () => 0 });
    const low = createBackoff({ clock, random: () => 0.999999 });
    for (let i = 0; i < 12; i++) {
      const ceiling = Math.min(30_000, 800 * 2 ** i);
      expect(high.next()).toBe(ceiling);
      expect(low.next()).toBe(Math.round(Math.max(800, ceiling * (1 - 0.5 * 0.999999))));
    }
  });

  test("a streak ends by itself after 120 s without a failure", async () => {
    const clock = createFakeClock();
    const b = createBackoff({ clock, jitter: 0 });
    b.next();
    b.next();
    await clock.advance(119_999);
    expect(b.next()).toBe(3200); // 119.999 s after the previous failure: same streak
    await clock.advance(120_000);
    expect(b.next()).toBe(800);
  });

  test("reset() starts the next streak at 800 ms", () => {
    const clock = createFakeClock();
    const b = createBackoff({ clock, jitter: 0 });
    b.next();
    b.next();
    b.reset();
    expect(b.attempts).toBe(0);
    expect(b.next()).toBe(800);
  });

  test("impossible settings are refused with the rule broken", () => {
    const clock = createFakeClock();
    expect(() => createBackoff({ clock, initialMs: 0 })).toThrow(/0 < initialMs <= maxMs/);
    expect(() => createBackoff({ clock, initialMs: 5000, maxMs: 1000 })).toThrow(/initialMs=5000 maxMs=1000/);
    expect(() => createBackoff({ clock, jitter: 2 })).toThrow(/jitter must be within 0..1/);
  });
});
