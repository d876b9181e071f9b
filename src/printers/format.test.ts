import { describe, expect, test } from "bun:test";
import { formatTable, humanDuration } from "./format.ts";

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe("humanDuration", () => {
  // The cases of k8s.io/apimachinery/pkg/util/duration TestHumanDuration and TestHumanDurationBoundaries.
  const cases: [number, string][] = [
    [S, "1s"],
    [70 * S, "70s"],
    [190 * S, "3m10s"],
    [70 * M, "70m"],
    [47 * H, "47h"],
    [49 * H, "2d1h"],
    [(8 * 24 + 2) * H, "8d"],
    [367 * D, "367d"],
    [(365 * 2 * 24 + 25) * H, "2y1d"],
    [(365 * 8 * 24 + 2) * H, "8y"],
    [-2 * S, "<invalid>"],
    [-2 * S + 1, "0s"],
    [0, "0s"],
    [S - 1, "0s"],
    [2 * M - 1, "119s"],
    [2 * M, "2m"],
    [2 * M + S, "2m1s"],
    [10 * M - 1, "9m59s"],
    [10 * M, "10m"],
    [10 * M + S, "10m"],
    [3 * H - 1, "179m"],
    [3 * H, "3h"],
    [3 * H + M, "3h1m"],
    [8 * H - 1, "7h59m"],
    [8 * H, "8h"],
    [8 * H + 59 * M, "8h"],
    [2 * D - 1, "47h"],
    [2 * D, "2d"],
    [2 * D + H, "2d1h"],
    [8 * D - 1, "7d23h"],
    [8 * D, "8d"],
    [8 * D + 23 * H, "8d"],
    [2 * 365 * D - 1, "729d"],
    [2 * 365 * D, "2y"],
    [2 * 365 * D + 23 * H, "2y"],
    [2 * 365 * D + D, "2y1d"],
    [3 * 365 * D, "3y"],
    [8 * 365 * D - 1, "7y364d"],
    [8 * 365 * D, "8y"],
  ];
  for (const [ms, want] of cases) {
    test(`${ms} ms reads ${want}, as kubectl prints it`, () => expect(humanDuration(ms)).toBe(want));
  }
});

describe("formatTable", () => {
  test("pads every column but the last to its widest cell plus three spaces, like kubectl", () => {
    expect(
      formatTable([
        ["NAME", "IMAGE", "AGE"],
        ["a-long-name", "x", "5s"],
      ]),
    ).toBe("NAME          IMAGE   AGE\n" + "a-long-name   x       5s");
  });

  test("columns are at least six wide and the last column is never padded", () => {
    expect(
      formatTable([
        ["A", "B"],
        ["", "c"],
      ]),
    ).toBe("A     B\n      c");
  });
});
