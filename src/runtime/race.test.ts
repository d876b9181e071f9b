import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { race } from "./race.ts";

describe("race", () => {
  test("settles with the promise's value or its error, as values", async () => {
    const clock = createFakeClock(0);
    const signal = new AbortController().signal;
    expect(await race(Promise.resolve(7), clock, 1_000, signal)).toEqual({ kind: "value", value: 7 });
    const cause = new Error("no");
    expect(await race(Promise.reject(cause), clock, undefined, signal)).toEqual({ kind: "error", cause });
  });

  test("a promise that outlives the timeout settles as timeout, exactly when the clock reaches it", async () => {
    const clock = createFakeClock(0);
    let outcome: unknown;
    void race(new Promise(() => {}), clock, 500, new AbortController().signal).then((r) => (outcome = r));
    await clock.advance(499);
    expect(outcome).toBeUndefined();
    await clock.advance(1);
    expect(outcome).toEqual({ kind: "timeout" });
  });

  test("an abort, before or during, settles as aborted and leaves no listener behind", async () => {
    const clock = createFakeClock(0);
    const before = new AbortController();
    before.abort();
    expect(await race(new Promise(() => {}), clock, undefined, before.signal)).toEqual({ kind: "aborted" });
    const during = new AbortController();
    const removed: string[] = [];
    const signal = during.signal;
    const remove = signal.removeEventListener.bind(signal);
    signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
      removed.push(a[0]);
      remove(...a);
    }) as typeof remove;
    const r = race(new Promise(() => {}), clock, 1_000, signal);
    during.abort();
    expect(await r).toEqual({ kind: "aborted" });
    expect(removed).toEqual(["abort"]);
  });
});
