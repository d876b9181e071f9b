import { expect, test } from "bun:test";
import { requestsSince } from "./heal.ts";

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
