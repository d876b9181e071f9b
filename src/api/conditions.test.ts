import { describe, expect, test } from "bun:test";
import { conditionsEqual, formatTime, withTransitionTimes } from "./conditions.ts";
import type { Condition } from "./webapp.ts";

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const T1 = T0 + 60_000;

describe("withTransitionTimes", () => {
  test("a condition whose status is unchanged keeps its earlier lastTransitionTime, even with a new message", () => {
    const before: Condition[] = [
      { type: "Available", status: "True", reason: "A", message: "old", lastTransitionTime: formatTime(T0) },
    ];
    const [c] = withTransitionTimes(
      [{ type: "Available", status: "True", reason: "A", message: "new" }],
      before,
      T1,
      3,
    );
    expect(c).toEqual({
      type: "Available",
      status: "True",
      reason: "A",
      message: "new",
      lastTransitionTime: "2024-05-01T12:00:00Z",
      observedGeneration: 3,
    });
  });

  test("a condition whose status changed, or that is new, gets now", () => {
    const before: Condition[] = [
      { type: "Available", status: "False", reason: "A", message: "m", lastTransitionTime: formatTime(T0) },
    ];
    const next = withTransitionTimes(
      [
        { type: "Available", status: "True", reason: "A", message: "m" },
        { type: "Degraded", status: "False", reason: "B", message: "m" },
      ],
      before,
      T1,
    );
    expect(next.map((c) => c.lastTransitionTime)).toEqual(["2024-05-01T12:01:00Z", "2024-05-01T12:01:00Z"]);
    expect(next[0]).not.toHaveProperty("observedGeneration");
  });
});

describe("conditionsEqual", () => {
  const a: Condition = {
    type: "A",
    status: "True",
    reason: "R",
    message: "m",
    lastTransitionTime: "2024-05-01T12:00:00Z",
  };
  const b: Condition = {
    type: "B",
    status: "False",
    reason: "R",
    message: "m",
    lastTransitionTime: "2024-05-01T12:00:00Z",
  };

  test("ignores order, as conditions are a map keyed by type", () => {
    expect(conditionsEqual([a, b], [b, a])).toBe(true);
    expect(conditionsEqual(undefined, [])).toBe(true);
  });

  test("notices any changed field, a missing type or an extra one", () => {
    for (const changed of [
      { status: "False" },
      { reason: "S" },
      { message: "n" },
      { lastTransitionTime: "2024-05-01T12:00:01Z" },
      { observedGeneration: 2 },
    ]) {
      expect(conditionsEqual([a, b], [{ ...a, ...changed } as Condition, b])).toBe(false);
    }
    expect(conditionsEqual([a, b], [a])).toBe(false);
    expect(conditionsEqual([a], [b])).toBe(false);
  });
});

test("formatTime drops milliseconds, as metav1.Time does", () => {
  expect(formatTime(T0 + 999)).toBe("2024-05-01T12:00:00Z");
});
