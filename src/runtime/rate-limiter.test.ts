import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { bucket, defaultControllerRateLimiter, exponential, maxOf } from "./rate-limiter.ts";

describe("exponential", () => {
  test("delays double from the base per failure of a key, and forget starts over", () => {
    const rl = exponential<string>(5, 1_000_000);
    expect([1, 2, 3, 4, 5].map(() => rl.when("a"))).toEqual([5, 10, 20, 40, 80]);
    expect(rl.numRequeues("a")).toBe(5);
    rl.forget("a");
    expect(rl.numRequeues("a")).toBe(0);
    expect(rl.when("a")).toBe(5);
  });

  test("keys back off independently", () => {
    const rl = exponential<string>(1, 1000);
    rl.when("a");
    rl.when("a");
    expect(rl.when("a")).toBe(4);
    expect(rl.when("b")).toBe(1);
  });

  test("the delay is capped at maxMs, even after enough failures to overflow", () => {
    const rl = exponential<string>(5, 1_000_000);
    const delays = Array.from({ length: 2000 }, () => rl.when("k"));
    expect(delays[17]).toBe(655_360);
    expect(delays[18]).toBe(1_000_000);
    expect(delays[1999]).toBe(1_000_000);
  });

  test("nonsense bounds are refused", () => {
    expect(() => exponential(0, 10)).toThrow(RangeError);
    expect(() => exponential(10, 5)).toThrow(RangeError);
  });
});

describe("bucket", () => {
  test("the first burst is immediate, then each call waits one more token period", () => {
    const clock = createFakeClock();
    const rl = bucket<string>(10, 100, clock);
    const delays = Array.from({ length: 103 }, (_, i) => rl.when(`k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 0)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200, 300]);
  });

  test("tokens refill with time, up to the burst", async () => {
    const clock = createFakeClock();
    const rl = bucket<string>(10, 2, clock);
    expect([rl.when("a"), rl.when("a"), rl.when("a")]).toEqual([0, 0, 100]);
    await clock.advance(100); // the reserved token is now used; bucket empty
    expect(rl.when("a")).toBe(100);
    await clock.advance(10_000); // refills to the burst, not beyond
    expect([rl.when("a"), rl.when("a"), rl.when("a")]).toEqual([0, 0, 100]);
  });

  test("forget and numRequeues keep no per-key state", () => {
    const rl = bucket<string>(10, 1, createFakeClock());
    rl.when("a");
    expect(rl.numRequeues("a")).toBe(0);
    rl.forget("a");
    expect(rl.when("a")).toBe(100);
  });
});

describe("maxOf", () => {
  test("returns the longest delay, records in every limiter, and forgets in every limiter", () => {
    const clock = createFakeClock();
    const rl = maxOf<string>(exponential(1, 1000), bucket(1, 2, clock));
    expect([rl.when("a"), rl.when("a"), rl.when("a"), rl.when("a")]).toEqual([1, 2, 1000, 2000]);
    expect(rl.numRequeues("a")).toBe(4);
    rl.forget("a");
    expect(rl.numRequeues("a")).toBe(0);
  });
});

describe("defaultControllerRateLimiter", () => {
  test("follows per-key exponential backoff from 5 ms while the global bucket has tokens", () => {
    const rl = defaultControllerRateLimiter<string>(createFakeClock());
    expect([rl.when("a"), rl.when("a"), rl.when("a"), rl.when("a")]).toEqual([5, 10, 20, 40]);
    rl.forget("a");
    expect(rl.when("a")).toBe(5);
  });

  test("the global bucket bounds the rate across keys after a burst of 100", () => {
    const rl = defaultControllerRateLimiter<string>(createFakeClock());
    const delays = Array.from({ length: 102 }, (_, i) => rl.when(`k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200]);
  });
});
