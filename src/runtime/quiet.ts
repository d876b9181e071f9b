/**
 * Quiet: when the operator has nothing to do, for work that should yield to its reconciles (events).
 *
 * Why: on a busy cluster every request costs the API server the same CPU, whoever sends it. An Event says what
 * the operator did; it need not compete with the writes that do it (child creates, status). So Events wait
 * until the reconciles have been quiet for a moment, or until they have waited long enough, whichever is first.
 *
 * Contract:
 * - `createActivity(clock)`: `track(fn)` wraps an async function so that each call counts as work from its
 *   start until it settles. `quietForMs()` is 0 while any call runs, else the ms since the last one ended
 *   (since the activity was made, if none ran yet).
 * - `createQuietGate({ clock, activity, quietMs, maxDelayMs })`: `wait()` resolves at once if the activity has
 *   been quiet for `quietMs`; else once it has been, or once this wait has lasted `maxDelayMs`, whichever is
 *   first. Waiters resolve in the order they came. One timer checks, and only while someone waits.
 *   `releaseAll()` resolves every waiter now (flush, shutdown). Nothing here rejects.
 */
import type { Clock, ClockTimer } from "./clock.ts";

export interface Activity {
  /** `fn`, counted as work from each call's start until it settles. */
  track<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R>;
  /** 0 while work runs; else the ms since the last work ended. */
  quietForMs(): number;
}

export function createActivity(clock: Clock): Activity {
  let running = 0;
  let endedAt = clock.now();
  return {
    track(fn) {
      return async (...args) => {
        running += 1;
        try {
          return await fn(...args);
        } finally {
          running -= 1;
          endedAt = clock.now();
        }
      };
    },
    quietForMs: () => (running > 0 ? 0 : clock.now() - endedAt),
  };
}

export interface QuietGateOptions {
  clock: Clock;
  activity: Pick<Activity, "quietForMs">;
  /** How long the activity must have been quiet. */
  quietMs: number;
  /** The longest one wait lasts, quiet or not. */
  maxDelayMs: number;
}

export interface QuietGate {
  wait(): Promise<void>;
  releaseAll(): void;
}

export function createQuietGate(o: QuietGateOptions): QuietGate {
  const { clock, activity, quietMs, maxDelayMs } = o;
  /** In the order they came, so the first is the one due first. */
  const waiting: { since: number; resolve: () => void }[] = [];
  let timer: ClockTimer | undefined;

  const release = (count: number): void => {
    for (const w of waiting.splice(0, count)) w.resolve();
  };
  const check = (): void => {
    timer = undefined;
    const now = clock.now();
    const notDue = waiting.findIndex((w) => w.since + maxDelayMs > now);
    release(activity.quietForMs() >= quietMs || notDue < 0 ? waiting.length : notDue);
    schedule();
  };
  function schedule(): void {
    const first = waiting[0];
    if (timer !== undefined || !first) return;
    const quiet = activity.quietForMs();
    const untilQuiet = quietMs - quiet;
    const untilDue = first.since + maxDelayMs - clock.now();
    timer = clock.setTimeout(check, Math.max(0, Math.min(untilQuiet, untilDue)));
  }

  return {
    wait() {
      if (activity.quietForMs() >= quietMs) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiting.push({ since: clock.now(), resolve });
        schedule();
      });
    },
    releaseAll() {
      if (timer !== undefined) clock.clearTimeout(timer);
      timer = undefined;
      release(waiting.length);
    },
  };
}
