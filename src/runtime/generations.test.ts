import { expect, test } from "bun:test";
import { Generations } from "./generations.ts";

test("holds at most two generations; what nobody asked for over a whole generation goes", () => {
  const g = new Generations<number>(3);
  for (let i = 0; i < 3; i++) g.set(`k${i}`, i);
  expect(g.size).toBe(3);
  for (let i = 3; i < 6; i++) g.set(`k${i}`, i); // k0-k2 are now the older generation
  expect(g.size).toBe(6);
  expect(g.get("k0")).toBe(0); // found in the older one: moves to the newer (which turns: k3-k5 become the older)
  g.set("k6", 6);
  g.set("k7", 7); // the newer generation (k0, k6, k7) is full
  g.set("k8", 8); // turns: k3-k5 are dropped, k0/k6/k7 are the older
  expect(g.size).toBe(4);
  expect([g.get("k3"), g.get("k4"), g.get("k5")]).toEqual([undefined, undefined, undefined]);
  expect([g.get("k1"), g.get("k2")]).toEqual([undefined, undefined]);
  expect(g.get("k0")).toBe(0);
  expect(g.get("k8")).toBe(8);
});

test("setting a key it holds in the newer generation replaces it and does not turn", () => {
  const g = new Generations<string>(2);
  g.set("a", "1");
  g.set("b", "2");
  g.set("a", "3");
  expect(g.size).toBe(2);
  expect(g.get("a")).toBe("3");
  expect(g.get("b")).toBe("2");
});

test("bounded under any number of distinct keys", () => {
  const g = new Generations<number>(100);
  for (let i = 0; i < 10_000; i++) g.set(String(i), i);
  expect(g.size).toBeLessThanOrEqual(200);
  expect(g.get("9999")).toBe(9999);
  expect(g.get("0")).toBeUndefined();
});

test("refuses a generation below 1", () => {
  expect(() => new Generations(0)).toThrow("generation must be at least 1, got 0");
});
