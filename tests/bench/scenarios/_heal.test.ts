import { expect, test } from "bun:test";
import { partTrials } from "./heal.ts";

test("the trials are split into consecutive parts, each of them once, the remainder in the first parts", () => {
  const parts = [0, 1, 2, 3].map((p) => partTrials(10, 4, p));
  expect(parts).toEqual([
    [0, 1, 2],
    [3, 4, 5],
    [6, 7],
    [8, 9],
  ]);
  expect(partTrials(100, 4, 3)).toEqual(Array.from({ length: 25 }, (_, i) => 75 + i));
  expect([0, 1].map((p) => partTrials(1, 2, p))).toEqual([[0], []]);
});
