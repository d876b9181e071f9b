/**
 * Rate limiters for retrying keys, with client-go's semantics (util/workqueue/default_rate_limiters.go).
 *
 * Contract:
 * - `when(key)` records one more failure of `key` and returns how long to wait (ms) before retrying it.
 * - `forget(key)` ends the key's retry history: the next `when` starts again from the base delay.
 *   It does not cancel a retry already scheduled.
 * - `numRequeues(key)` is how many failures are recorded for the key.
 * - Defaults are client-go's: per key 5 ms doubling to 1000 s, and overall 10 qps with a burst of 100,
 *   combined by taking the larger delay (`defaultControllerRateLimiter`).
 */
import type { Clock } from "./clock.ts";
import { realClock } from "./clock.ts";

export interface RateLimiter<K> {
  /** Records a failure and returns the delay in ms before the key may be retried. */
  when(key: K): number;
  /** Clears the key's failure history. */
  forget(key: K): void;
  /** Failures recorded for the key since the last forget. */
  numRequeues(key: K): number;
}

/** Per-key exponential backoff: baseMs · 2^failures, capped at maxMs (client-go ItemExponentialFailureRateLimiter). */
export function exponential<K>(baseMs = 5, maxMs = 1_000_000): RateLimiter<K> {
  if (!(baseMs > 0) || !(maxMs >= baseMs)) {
    throw new RangeError(`exponential(${baseMs}, ${maxMs}): need 0 < baseMs <= maxMs`);
  }
  /** Failures per key since its last forget; keys with no failures are absent. */
  const failures = new Map<K, number>();
  return {
    when(key) {
      const exp = failures.get(key) ?? 0;
      failures.set(key, exp + 1);
      const backoff = baseMs * 2 ** exp; // Infinity once it overflows, which the cap handles.
      return Math.min(backoff, maxMs);
    },
    forget: (key) => void failures.delete(key),
    numRequeues: (key) => failures.get(key) ?? 0,
  };
}

/**
 * One token bucket shared by every key (client-go BucketRateLimiter over golang.org/x/time/rate):
 * holds up to `burst` tokens, refilled at `qps` per second; each `when` takes a token, reserving one
 * in the future when the bucket is empty, and returns the wait until that token exists.
 * Starting full, `burst` calls at one instant get 0 ms, then each further call waits 1000/qps ms more.
 */
export function bucket<K>(qps = 10, burst = 100, clock: Clock = realClock): RateLimiter<K> {
  if (!(qps > 0) || !(burst >= 1)) throw new RangeError(`bucket(${qps}, ${burst}): need qps > 0 and burst >= 1`);
  /** Tokens at time `last`; never above burst, negative when tokens are reserved ahead. */
  let tokens = burst;
  /** Time (ms) at which `tokens` was computed; never after clock.now() as seen by the last call. */
  let last = clock.now();
  return {
    when() {
      const now = clock.now();
      const elapsed = Math.max(0, now - last);
      tokens = Math.min(burst, tokens + (elapsed * qps) / 1000) - 1;
      last = Math.max(last, now);
      return tokens < 0 ? (-tokens * 1000) / qps : 0;
    },
    forget() {},
    numRequeues: () => 0,
  };
}

/** The worst (longest) delay of several limiters; every limiter records every failure. */
export function maxOf<K>(...limiters: RateLimiter<K>[]): RateLimiter<K> {
  if (limiters.length === 0) throw new RangeError("maxOf() needs at least one rate limiter");
  return {
    when(key) {
      let delay = 0;
      for (const l of limiters) delay = Math.max(delay, l.when(key));
      return delay;
    },
    forget(key) {
      for (const l of limiters) l.forget(key);
    },
    numRequeues(key) {
      let n = 0;
      for (const l of limiters) n = Math.max(n, l.numRequeues(key));
      return n;
    },
  };
}

/** client-go DefaultControllerRateLimiter: max of exponential(5 ms, 1000 s) and bucket(10 qps, burst 100). */
export function defaultControllerRateLimiter<K>(clock: Clock = realClock): RateLimiter<K> {
  return maxOf<K>(exponential<K>(5, 1_000_000), bucket<K>(10, 100, clock));
}
