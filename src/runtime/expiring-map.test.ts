import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { ExpiringMap } from "./expiring-map.ts";

describe("an expiring map", () => {
  test("forgets an entry once its time to live has passed, and counts only live entries", async () => {
    const clock = createFakeClock();
    const m = new ExpiringMap<number>(clock, 1_000, 100);
    m.set("a", 1);
    await clock.advance(600);
    m.set("b", 2);
    await clock.advance(399);
    expect([m.get("a"), m.get("b"), m.size]).toEqual([1, 2, 2]);
    await clock.advance(1);
    expect([m.get("a"), m.get("b"), m.size]).toEqual([undefined, 2, 1]);
  });

  test("setting a key again restarts its time to live", async () => {
    const clock = createFakeClock();
    const m = new ExpiringMap<number>(clock, 1_000, 100);
    m.set("a", 1);
    await clock.advance(900);
    m.set("a", 2);
    await clock.advance(900);
    expect(m.get("a")).toBe(2);
  });

  test("holds at most `max` entries, forgetting the oldest first", () => {
    const m = new ExpiringMap<number>(createFakeClock(), 1_000, 2);
    m.set("a", 1);
    m.set("b", 2);
    m.set("c", 3);
    expect([m.get("a"), m.get("b"), m.get("c"), m.size]).toEqual([undefined, 2, 3, 2]);
  });

  test("keeps nothing of keys never looked up again once they expired (no leak for deleted WebApps)", async () => {
    const clock = createFakeClock();
    const m = new ExpiringMap<number>(clock, 1_000, 100);
    for (let i = 0; i < 100; i++) m.set(`gone-${i}`, i);
    await clock.advance(1_000);
    m.set("new", 0);
    expect(m.size).toBe(1);
  });
});
