/**
 * Time, injected. Every runtime part that waits or measures takes a `Clock`, so tests drive time
 * with `createFakeClock()` and assert exact delays instead of sleeping.
 *
 * Contract:
 * - `now()` is milliseconds; `realClock.now()` is wall time (Date.now()), a fake clock starts where told.
 * - `setTimeout` timers of `realClock` are unref'd: a pending timer never holds the process open
 *   (queue delays, resyncs and timeouts are background work).
 * - `sleep(ms, signal)` resolves after `ms`, or as soon as `signal` aborts; it never rejects, so
 *   loops check `signal.aborted` after it. A real sleep holds the process open (someone awaits it);
 *   aborting the signal releases it.
 * - Fake clock: `advance(ms)` fires due timers one at a time in deadline order (ties in creation
 *   order), with `now()` equal to each timer's deadline while it runs, and lets promises settle after
 *   each firing, so timers scheduled by the code it wakes also fire if due within the same advance.
 */

declare const clockTimerBrand: unique symbol;
/** An opaque timer handle; only the clock that made it can clear it. */
export type ClockTimer = { readonly [clockTimerBrand]: true };

export interface Clock {
  /** Milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
  /** Resolves after ms, or early when signal aborts. Never rejects. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepWith(clock: Pick<Clock, "setTimeout" | "clearTimeout">, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const onAbort = (): void => {
      clock.clearTimeout(timer);
      resolve();
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The process clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return t as unknown as ClockTimer;
  },
  clearTimeout(timer) {
    clearTimeout(timer as unknown as ReturnType<typeof setTimeout>);
  },
  sleep(ms, signal) {
    // Ref'd on purpose: an awaited sleep must keep the process alive.
    const ref = {
      setTimeout: (fn: () => void, d: number) => setTimeout(fn, Math.max(0, d)) as unknown as ClockTimer,
      clearTimeout: (t: ClockTimer) => clearTimeout(t as unknown as ReturnType<typeof setTimeout>),
    };
    return sleepWith(ref, ms, signal);
  },
};

/**
 * Calls fn every everyMs · (1 ± jitter), each period drawn anew (controller-runtime's resync jitter:
 * everyMs = 10 h, jitter = 0.1). The first call comes after one period. Returns the stop function.
 */
export function repeatJittered(
  clock: Clock,
  opts: { everyMs: number; jitter?: number; random?: (() => number) | undefined },
  fn: () => void,
): () => void {
  const { everyMs, jitter = 0, random = Math.random } = opts;
  if (!(everyMs > 0) || !(jitter >= 0 && jitter < 1)) {
    throw new RangeError(`repeatJittered: need everyMs > 0 and 0 <= jitter < 1, got ${everyMs} and ${jitter}`);
  }
  let stopped = false;
  let timer: ClockTimer | undefined;
  const schedule = (): void => {
    timer = clock.setTimeout(
      () => {
        try {
          fn();
        } finally {
          if (!stopped) schedule(); // a throwing fn does not end the repetition
        }
      },
      everyMs * (1 - jitter + 2 * jitter * random()),
    );
  };
  schedule();
  return () => {
    stopped = true;
    if (timer !== undefined) clock.clearTimeout(timer);
  };
}

export interface FakeClock extends Clock {
  /** Moves time forward by ms, firing due timers in order; resolves once everything woken has settled. */
  advance(ms: number): Promise<void>;
  /** Lets pending promise chains run without moving time. */
  settle(): Promise<void>;
  /** Number of timers not yet fired or cleared. */
  pendingTimers(): number;
  /** Deadline of the earliest pending timer, if any. */
  nextTimerAt(): number | undefined;
}

interface FakeTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** Turns of the macrotask queue that settle() waits: enough for chains that hop through setImmediate. */
const SETTLE_TURNS = 5;

export function createFakeClock(startMs = 0): FakeClock {
  let now = startMs;
  let nextId = 1;
  /** Pending timers by id; fired or cleared timers are removed. */
  const timers = new Map<number, FakeTimer>();

  const earliest = (limit: number): FakeTimer | undefined => {
    let best: FakeTimer | undefined;
    for (const t of timers.values()) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.id < best.id)) best = t;
    }
    return best;
  };

  const settle = async (): Promise<void> => {
    for (let i = 0; i < SETTLE_TURNS; i++) await new Promise<void>((r) => setImmediate(r));
  };

  const clock: FakeClock = {
    now: () => now,
    setTimeout(fn, ms) {
      const t: FakeTimer = { id: nextId++, at: now + Math.max(0, ms), fn };
      timers.set(t.id, t);
      return t.id as unknown as ClockTimer;
    },
    clearTimeout(timer) {
      timers.delete(timer as unknown as number);
    },
    sleep(ms, signal) {
      return sleepWith(clock, ms, signal);
    },
    async advance(ms) {
      if (ms < 0) throw new RangeError(`advance(${ms}): time cannot go backwards`);
      const target = now + ms;
      await settle();
      for (let t = earliest(target); t; t = earliest(target)) {
        timers.delete(t.id);
        now = t.at;
        t.fn();
        await settle();
      }
      now = target;
      await settle();
    },
    settle,
    pendingTimers: () => timers.size,
    nextTimerAt: () => earliest(Number.POSITIVE_INFINITY)?.at,
  };
  return clock;
}
