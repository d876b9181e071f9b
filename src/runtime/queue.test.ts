import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { MinHeap } from "./heap.ts";
import { createRuntimeMetrics } from "./metrics.ts";
import { createQueue } from "./queue.ts";
import { exponential } from "./rate-limiter.ts";

/** Resolves the pending promise's state without waiting: "pending" or its value. */
async function peek<T>(p: Promise<T>): Promise<T | "pending"> {
  return Promise.race([p, new Promise<"pending">((r) => setImmediate(() => r("pending")))]);
}

describe("work queue: basic semantics", () => {
  test("keys are handed out first in, first out", async () => {
    const q = createQueue({ clock: createFakeClock() });
    for (const k of ["a", "b", "c"]) q.add(k);
    expect([(await q.get())?.key, (await q.get())?.key, (await q.get())?.key]).toEqual(["a", "b", "c"]);
  });

  test("a key added several times before it is handed out is handed out once", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect((await q.get())?.key).toBe("a");
    expect((await q.get())?.key).toBe("b");
    expect(q.len()).toBe(0);
  });

  test("a key re-added while processing is not handed out again until done(), then it is", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    expect((await q.get())?.key).toBe("a");
    q.add("a");
    q.add("a");
    expect(q.len()).toBe(0);
    const next = q.get();
    expect(await peek(next)).toBe("pending");
    q.done("a");
    expect(await next).toEqual({ key: "a" });
    q.done("a");
    expect(await peek(q.get())).toBe("pending");
  });

  test("queuedAgain is true only while a key is processed and was added again meanwhile", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("b");
    expect(q.queuedAgain("a")).toBe(false); // queued, not processed
    await q.get();
    expect(q.queuedAgain("a")).toBe(false); // processed, nothing newer
    q.addAfter("a", 1_000);
    expect(q.queuedAgain("a")).toBe(false); // a delayed add is not due yet
    q.add("a");
    expect(q.queuedAgain("a")).toBe(true);
    expect(q.queuedAgain("b")).toBe(false);
    q.done("a");
    expect(q.queuedAgain("a")).toBe(false); // queued again, no longer processed
    await q.get();
    expect(q.queuedAgain("a")).toBe(false); // the newer run itself starts with nothing newer
  });

  test("a key not re-added while processing is gone after done()", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    await q.get();
    q.done("a");
    expect(q.len()).toBe(0);
  });

  test("waiting get() calls are served in the order they were made", async () => {
    const q = createQueue({ clock: createFakeClock() });
    const first = q.get();
    const second = q.get();
    q.add("x");
    q.add("y");
    expect(await first).toEqual({ key: "x" });
    expect(await second).toEqual({ key: "y" });
  });
});

describe("work queue: priorities", () => {
  test("a key added with a higher priority is handed out before keys added earlier", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("b");
    q.add("child", 1);
    expect([(await q.get())?.key, (await q.get())?.key, (await q.get())?.key]).toEqual(["child", "a", "b"]);
  });

  test("a queued key added again with a higher priority is raised, and still handed out once", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("b");
    q.add("b", 1);
    expect(q.len()).toBe(2);
    expect([(await q.get())?.key, (await q.get())?.key]).toEqual(["b", "a"]);
    expect(await peek(q.get())).toBe("pending");
  });

  test("a key raised while it is processed keeps that priority for its next run", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    await q.get();
    q.add("a", 1);
    q.add("b");
    q.done("a");
    expect([(await q.get())?.key, (await q.get())?.key]).toEqual(["a", "b"]);
  });

  test("a key added below 0 goes behind the keys of priority 0, also those added after it", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("later", -1);
    q.add("a");
    q.add("b");
    expect([(await q.get())?.key, (await q.get())?.key, (await q.get())?.key]).toEqual(["a", "b", "later"]);
  });

  test("a key added below 0 while it is processed runs next behind the others, unless an add raises it", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("c");
    await q.get();
    q.add("a", -1); // as a reconcile asking for a later pass does
    q.add("b");
    q.done("a");
    q.add("d");
    const order = [(await q.get())?.key, (await q.get())?.key, (await q.get())?.key, (await q.get())?.key];
    expect(order).toEqual(["c", "b", "d", "a"]);
    for (const k of ["a", "b", "c", "d"]) q.done(k);
    q.add("a", -1);
    q.add("b");
    q.add("a"); // an event: raised to 0, behind b
    expect([(await q.get())?.key, (await q.get())?.key]).toEqual(["b", "a"]);
  });

  test("a key's priority is forgotten once it is handed out", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a", 1);
    await q.get();
    q.done("a");
    q.add("b");
    q.add("a");
    expect([(await q.get())?.key, (await q.get())?.key]).toEqual(["b", "a"]);
  });
});

describe("work queue: delays and rate limiting", () => {
  test("addAfter hands the key out only once the delay has passed", async () => {
    const clock = createFakeClock();
    const q = createQueue({ clock });
    q.addAfter("a", 100);
    const got = q.get();
    await clock.advance(99);
    expect(await peek(got)).toBe("pending");
    await clock.advance(1);
    expect(await got).toEqual({ key: "a" });
  });

  test("when a key is delayed twice the earlier deadline wins and it is added once", async () => {
    const clock = createFakeClock();
    const q = createQueue({ clock });
    q.addAfter("a", 100);
    q.addAfter("a", 30);
    q.addAfter("a", 60);
    await clock.advance(30);
    expect(q.len()).toBe(1);
    expect((await q.get())?.key).toBe("a");
    q.done("a");
    await clock.advance(200);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  test("delayed keys come out in deadline order", async () => {
    const clock = createFakeClock();
    const q = createQueue({ clock });
    q.addAfter("late", 50);
    q.addAfter("early", 10);
    q.addAfter("middle", 20);
    await clock.advance(50);
    expect([(await q.get())?.key, (await q.get())?.key, (await q.get())?.key]).toEqual(["early", "middle", "late"]);
  });

  test("addAfter with no delay adds at once", () => {
    const q = createQueue({ clock: createFakeClock() });
    q.addAfter("a", 0);
    expect(q.len()).toBe(1);
  });

  test("addRateLimited backs off 5, 10, 20, 40 ms and forget resets to 5 ms", async () => {
    const clock = createFakeClock();
    const q = createQueue({ clock, rateLimiter: exponential(5, 1_000_000) });
    const delays: number[] = [];
    for (let i = 0; i < 4; i++) {
      const at = clock.now();
      expect(q.addRateLimited("a")).toBe(5 * 2 ** i);
      const got = q.get();
      await clock.advance(5 * 2 ** i - 1);
      expect(await peek(got)).toBe("pending");
      await clock.advance(1);
      await got;
      delays.push(clock.now() - at);
      q.done("a");
    }
    expect(delays).toEqual([5, 10, 20, 40]);
    expect(q.numRequeues("a")).toBe(4);
    q.forget("a");
    expect(q.numRequeues("a")).toBe(0);
    expect(q.addRateLimited("a")).toBe(5);
  });
});

describe("work queue: shutdown", () => {
  test("shutDown releases waiting getters, ignores new adds and drops pending delays", async () => {
    const clock = createFakeClock();
    const q = createQueue({ clock });
    const waiting = q.get();
    q.addAfter("later", 10);
    q.shutDown();
    expect(await waiting).toBeUndefined();
    q.add("a");
    await clock.advance(20);
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    expect(clock.pendingTimers()).toBe(0);
    expect(q.shuttingDown()).toBe(true);
  });

  test("keys queued before shutDown are still handed out, then get() ends", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.shutDown();
    expect(await q.get()).toEqual({ key: "a" });
    expect(await q.get()).toBeUndefined();
  });

  test("shutDownWithDrain resolves only once every handed-out key is done", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    q.add("b");
    await q.get();
    await q.get();
    const drained = q.shutDownWithDrain();
    q.done("a");
    expect(await peek(drained)).toBe("pending");
    q.done("b");
    expect(await peek(drained)).toBeUndefined();
  });

  test("shutDown after shutDownWithDrain stops waiting for the drain", async () => {
    const q = createQueue({ clock: createFakeClock() });
    q.add("a");
    await q.get();
    const drained = q.shutDownWithDrain();
    q.shutDown();
    expect(await peek(drained)).toBeUndefined();
  });
});

describe("work queue: metrics", () => {
  test("records depth, adds, retries, queue and work durations, and in-flight work at scrape time", async () => {
    const clock = createFakeClock();
    const m = createRuntimeMetrics({ process: false });
    const q = createQueue({ clock, metrics: m.workqueue("w") });
    const l = '{controller="w",name="w"}';
    q.add("a");
    q.add("a");
    q.add("b");
    expect(m.expose()).toContain(`workqueue_depth${l} 2\n`);
    expect(m.expose()).toContain(`workqueue_adds_total${l} 2\n`);
    await clock.advance(2_000);
    await q.get();
    expect(m.expose()).toContain(`workqueue_depth${l} 1\n`);
    expect(m.expose()).toContain(`workqueue_queue_duration_seconds_sum${l} 2\n`);
    await clock.advance(3_000);
    await q.get();
    await clock.advance(1_000);
    let text = m.expose();
    expect(text).toContain(`workqueue_unfinished_work_seconds${l} 5\n`); // a: 4 s, b: 1 s
    expect(text).toContain(`workqueue_longest_running_processor_seconds${l} 4\n`);
    q.done("a");
    q.addAfter("c", 10);
    text = m.expose();
    expect(text).toContain(`workqueue_work_duration_seconds_sum${l} 4\n`);
    expect(text).toContain(`workqueue_work_duration_seconds_bucket${l.slice(0, -1)},le="10"} 1\n`);
    expect(text).toContain(`workqueue_retries_total${l} 1\n`);
    expect(text).toContain(`workqueue_unfinished_work_seconds${l} 1\n`);
  });
});

describe("MinHeap", () => {
  test("pops in ascending order whatever the push order", () => {
    const h = new MinHeap<number>((a, b) => a < b);
    const xs = Array.from({ length: 200 }, (_, i) => (i * 7919) % 211);
    for (const x of xs) h.push(x);
    const out: number[] = [];
    for (let x = h.pop(); x !== undefined; x = h.pop()) out.push(x);
    expect(out).toEqual([...xs].sort((a, b) => a - b));
    expect(h.size).toBe(0);
  });
});
