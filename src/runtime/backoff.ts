/**
 * Reconnect backoff for watches and other long-lived requests (kube-rs `DefaultBackoff`, client-go reflector).
 *
 * Properties:
 * - Bounded: every delay lies in [initialMs, maxMs] (defaults 800 ms and 30 s, the numbers kube-rs and the
 *   client-go reflector use), so a failing server is never hammered and a recovered one is never waited on
 *   for more than maxMs.
 * - Growing: the n-th delay of a streak is drawn from [max(initialMs, d/2), d] with d = min(maxMs, initialMs·2ⁿ)
 *   ("equal jitter"): the upper bound doubles, and at the cap replicas are still spread over 15-30 s so that
 *   they do not reconnect in lock-step after an API server restart.
 * - Self-resetting: when `resetAfterMs` (default 120 s, as kube-rs' `ResetTimerBackoff` and client-go's
 *   backoff manager) passed since the previous `next()`, the streak starts over at initialMs — a long healthy
 *   period ends the streak without anyone calling `reset()`.
 * - Deterministic under test: time and randomness are injected.
 */
import type { Clock } from "./clock.ts";

export interface BackoffOptions {
  clock: Pick<Clock, "now">;
  /** First delay of a streak, ms. Default 800. */
  initialMs?: number;
  /** Largest delay, ms. Default 30 000. */
  maxMs?: number;
  /** Fraction of each delay that is random, 0..1. Default 0.5; 0 gives exact doubling. */
  jitter?: number;
  /** A streak ends by itself when no `next()` was asked for this long, ms. Default 120 000. */
  resetAfterMs?: number;
  /** Uniform in [0, 1). Default Math.random. */
  random?: () => number;
}

export interface Backoff {
  /** The delay before the next attempt, ms; counts one more failure. */
  next(): number;
  /** Ends the streak: the next delay is initialMs again. */
  reset(): void;
  /** Failures counted in the current streak. */
  readonly attempts: number;
}

export const DEFAULT_BACKOFF = { initialMs: 800, maxMs: 30_000, jitter: 0.5, resetAfterMs: 120_000 } as const;

export function createBackoff(opts: BackoffOptions): Backoff {
  const initialMs = opts.initialMs ?? DEFAULT_BACKOFF.initialMs;
  const maxMs = opts.maxMs ?? DEFAULT_BACKOFF.maxMs;
  const jitter = opts.jitter ?? DEFAULT_BACKOFF.jitter;
  const resetAfterMs = opts.resetAfterMs ?? DEFAULT_BACKOFF.resetAfterMs;
  const random = opts.random ?? Math.random;
  if (!(initialMs > 0) || !(maxMs >= initialMs)) {
    throw new RangeError(`backoff: need 0 < initialMs <= maxMs, got initialMs=${initialMs} maxMs=${maxMs}`);
  }
  if (!(jitter >= 0 && jitter <= 1)) throw new RangeError(`backoff: jitter must be within 0..1, got ${jitter}`);

  /** Failures in the current streak; 0 = no streak. */
  let attempts = 0;
  /** Clock time of the last next(); undefined when no streak is running. */
  let lastAt: number | undefined;

  return {
    next() {
      const now = opts.clock.now();
      if (lastAt !== undefined && now - lastAt >= resetAfterMs) attempts = 0;
      lastAt = now;
      // 2^attempts overflows to Infinity long after it passed maxMs; min() keeps it finite.
      const ceiling = Math.min(maxMs, initialMs * 2 ** attempts);
      attempts++;
      const delay = ceiling * (1 - jitter * random());
      return Math.round(Math.max(initialMs, Math.min(ceiling, delay)));
    },
    reset() {
      attempts = 0;
      lastAt = undefined;
    },
    get attempts() {
      return attempts;
    },
  };
}
