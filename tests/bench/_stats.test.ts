import { expect, test } from "bun:test";
import { fmtMs, median, percentile, spread } from "./_stats.ts";

test("the median of an odd count is the middle sample and of an even count the mean of the two middle ones", () => {
  expect(median([5, 1, 3])).toBe(3);
  expect(median([4, 1, 3, 2])).toBe(2.5);
  expect(median([])).toBeNaN();
});

test("p99 of 100 samples is the 99th smallest and p50 of 1..100 is 50 (nearest rank, no interpolation)", () => {
  const xs = Array.from({ length: 100 }, (_, i) => 100 - i);
  expect(percentile(xs, 99)).toBe(99);
  expect(percentile(xs, 50)).toBe(50);
  expect(percentile(xs, 100)).toBe(100);
  expect(percentile([7], 99)).toBe(7);
});

test("summaries leave their input in the order given", () => {
  const xs = [3, 1, 2];
  median(xs);
  percentile(xs, 90);
  expect(xs).toEqual([3, 1, 2]);
});

test("durations below 10 s print in ms and longer ones in seconds; a spread names the count", () => {
  expect(fmtMs(850.4)).toBe("850 ms");
  expect(fmtMs(12_345)).toBe("12.3 s");
  expect(spread([1, 3, 2], (x) => `${x}`)).toBe("2 (1–3, n=3)");
});
