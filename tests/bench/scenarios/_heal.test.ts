import { expect, test } from "bun:test";
import { addRequests, partTrials, requestsSince } from "./heal.ts";

test("requests per method are what the operator sent between the two scrapes, sorted by method", () => {
  const before = { GET: 12, PATCH: 3 };
  const after = { PATCH: 8, GET: 13, POST: 2 };
  expect(requestsSince(before, after)).toEqual({ GET: 1, PATCH: 5, POST: 2 });
  expect(Object.keys(requestsSince(before, after))).toEqual(["GET", "PATCH", "POST"]);
});

test("a method the operator did not use during the trials counts zero, and no scrape at all gives no methods", () => {
  expect(requestsSince({ PUT: 4 }, { PUT: 4 })).toEqual({ PUT: 0 });
  expect(requestsSince({}, {})).toEqual({});
});

test("requests of the parts add up per method, sorted by method", () => {
  expect(addRequests({ POST: 2, GET: 1 }, { PATCH: 1, GET: 3 })).toEqual({ GET: 4, PATCH: 1, POST: 2 });
  expect(Object.keys(addRequests({ POST: 1 }, { GET: 1 }))).toEqual(["GET", "POST"]);
});

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
