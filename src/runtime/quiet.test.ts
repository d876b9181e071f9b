import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createActivity, createQuietGate } from "./quiet.ts";

function setup() {
  const clock = createFakeClock(1_000);
  const activity = createActivity(clock);
  const gate = createQuietGate({ clock, activity, quietMs: 500, maxDelayMs: 5_000 });
  const released: string[] = [];
  const waitFor = (name: string) => void gate.wait().then(() => released.push(name));
  /** One tracked call that runs until the returned function is called. */
  const busy = () => {
    let finish = () => {};
    const done = activity.track(() => new Promise<void>((r) => (finish = r)))();
    return async () => {
      finish();
      await done;
    };
  };
  return { clock, activity, gate, released, waitFor, busy };
}

describe("activity", () => {
  test("is quiet for 0 ms while a tracked call runs, then counts from the moment the last one ended", async () => {
    const t = setup();
    await t.clock.advance(200);
    expect(t.activity.quietForMs()).toBe(200);
    const endA = t.busy();
    const endB = t.busy();
    await t.clock.advance(100);
    await endA();
    expect(t.activity.quietForMs()).toBe(0);
    await t.clock.advance(100);
    await endB();
    await t.clock.advance(30);
    expect(t.activity.quietForMs()).toBe(30);
  });

  test("a tracked call that throws still ends its work and passes the error on", async () => {
    const t = setup();
    const failing = t.activity.track(async () => {
      throw new Error("boom");
    });
    await expect(failing()).rejects.toThrow("boom");
    await t.clock.advance(10);
    expect(t.activity.quietForMs()).toBe(10);
  });
});

describe("quiet gate", () => {
  test("a wait resolves at once when the activity has been quiet long enough", async () => {
    const t = setup();
    await t.clock.advance(500);
    t.waitFor("a");
    await t.clock.settle();
    expect(t.released).toEqual(["a"]);
  });

  test("a wait during work resolves once the work has been quiet for quietMs", async () => {
    const t = setup();
    const end = t.busy();
    t.waitFor("a");
    await t.clock.advance(1_000);
    expect(t.released).toEqual([]);
    await end();
    await t.clock.advance(499);
    expect(t.released).toEqual([]);
    await t.clock.advance(1);
    expect(t.released).toEqual(["a"]);
  });

  test("work that never stops still lets each wait through after maxDelayMs, in the order they came", async () => {
    const t = setup();
    const end = t.busy();
    t.waitFor("a");
    await t.clock.advance(2_000);
    t.waitFor("b");
    await t.clock.advance(2_999);
    expect(t.released).toEqual([]);
    await t.clock.advance(1);
    expect(t.released).toEqual(["a"]);
    await t.clock.advance(1_999);
    expect(t.released).toEqual(["a"]);
    await t.clock.advance(1);
    expect(t.released).toEqual(["a", "b"]);
    await end();
  });

  test("short pauses between calls do not count as quiet", async () => {
    const t = setup();
    t.waitFor("a");
    for (let i = 0; i < 8; i++) {
      const end = t.busy();
      await t.clock.advance(100);
      await end();
      await t.clock.advance(400);
    }
    expect(t.released).toEqual([]);
    await t.clock.advance(100);
    expect(t.released).toEqual(["a"]);
  });

  test("releaseAll lets every waiter through now and leaves no timer behind", async () => {
    const t = setup();
    const end = t.busy();
    t.waitFor("a");
    t.waitFor("b");
    t.gate.releaseAll();
    await t.clock.settle();
    expect(t.released).toEqual(["a", "b"]);
    expect(t.clock.pendingTimers()).toBe(0);
    await end();
  });
});
