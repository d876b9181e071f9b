import { expect, test } from "bun:test";
import { goal, goalsTable, overall, ratioGoal } from "./_goals.ts";

const ms = (x: number) => `${x} ms`;

test("a ratio goal is met at or below its bound and missed above it", () => {
  expect(goal({ name: "heal p99", ratioAtMost: 1 }, 50, 50, ms)).toEqual({
    name: "heal p99",
    bound: "devctl / Go ≤ 1.0",
    devctl: "50 ms",
    peer: "50 ms",
    ratio: "1.00",
    verdict: "met",
  });
  expect(goal({ name: "RSS idle", ratioAtMost: 1.5 }, 64, 32, ms).verdict).toBe("missed");
});

test("a ratio goal without the peer's figure, or with a NaN, is not measured rather than met", () => {
  expect(goal({ name: "x", ratioAtMost: 1 }, 10, undefined, ms)).toMatchObject({
    peer: "n/a",
    verdict: "not measured",
  });
  expect(goal({ name: "x", ratioAtMost: 1 }, Number.NaN, 10, ms).verdict).toBe("not measured");
});

test("a value goal judges devctl's own figure and shows the peer's beside it", () => {
  const restart = goal({ name: "restart writes", valueAtMost: 0 }, 0, 1000, String);
  expect(restart).toMatchObject({ bound: "devctl ≤ 0", devctl: "0", peer: "1000", verdict: "met" });
  expect(goal({ name: "restart writes", valueAtMost: 0 }, 3, undefined, String).verdict).toBe("missed");
});

test("a goal with a precomputed ratio (median of per-repeat ratios) is judged on that ratio, not on the medians", () => {
  // medians 50 and 50 would give 1.0; the per-repeat ratios had a median of 0.8
  const g = ratioGoal({ name: "convergence", ratioAtMost: 0.9 }, 50, 50, 0.8, ms);
  expect(g).toMatchObject({ ratio: "0.80", verdict: "met" });
  expect(ratioGoal({ name: "c", ratioAtMost: 0.9 }, 50, undefined, Number.NaN, ms).verdict).toBe("not measured");
});

test("several goals are met only when every one is; one missed makes them missed", () => {
  const met = goal({ name: "a", ratioAtMost: 1 }, 1, 2, ms);
  const missed = goal({ name: "b", ratioAtMost: 1 }, 3, 2, ms);
  const unknown = goal({ name: "c", ratioAtMost: 1 }, 3, undefined, ms);
  expect(overall([met, met])).toBe("met");
  expect(overall([met, unknown])).toBe("not measured");
  expect(overall([unknown, missed])).toBe("missed");
  expect(overall([])).toBe("not measured");
});

test("the goals table has one row per goal with the ratio and the verdict in bold", () => {
  const t = goalsTable([goal({ name: "heal p99", ratioAtMost: 1 }, 40, 80, ms)]);
  expect(t.head).toEqual(["goal", "bound", "devctl", "Go peer", "devctl / Go", "verdict"]);
  expect(t.rows).toEqual([["heal p99", "devctl / Go ≤ 1.0", "40 ms", "80 ms", "**0.50**", "**met**"]]);
});
