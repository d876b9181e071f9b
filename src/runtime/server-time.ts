/**
 * The API server's clock, as far as this process can know it: its own clock, corrected by the smallest offset that the
 * Date headers of the API server's recent answers allow.
 *
 * Why: the operator stamps times into statuses (conditions' lastTransitionTime, the rollout history's startedAt,
 * readyAt and failedAt) and a later pass, maybe another leader's on another node, compares them with its clock: the
 * automatic rollback waits failureThreshold after failedAt, a failure within READY_SETTLE_MS of readyAt is the
 * rollout's, the pods of a WebApp not Ready for 10 s are read. Each leader's own clock would put the skew between two
 * nodes into those waits (a leader behind by S rolled back S late). On the API server's clock they all agree, within
 * a second, and agree with the times the API server writes itself (creationTimestamp).
 *
 * Contract:
 * - `observe(date, sentAt, receivedAt)`: the Date header (RFC 9110 IMF-fixdate, whole seconds) of an answer to a
 *   request sent at `sentAt` and answered at `receivedAt` (this process's clock, ms). The server wrote it when its
 *   clock read in [D, D + 1 s), and ours then read in [sentAt, receivedAt], so the offset (server minus ours) lies in
 *   [D - receivedAt, D + 1000 - sentAt]. A date that does not parse, or an answer timed backwards, is ignored.
 * - `offset()`: the value nearest to 0 that lies within the bounds of each of the last SAMPLES answers: 0 with no
 *   answer yet, and 0 whenever the clocks agree as far as whole-second dates can tell, so a process whose clock is
 *   right stamps exactly what it did before. Otherwise it is off from the true offset by less than a second plus
 *   the round trip, towards 0. When an answer's bounds contradict the others' (one of the clocks was set since), the
 *   older answers are forgotten.
 * - `serverTimeClock(base, time)`: a Clock whose `now()` is `base.now() + time.offset()`; timers and sleeps are
 *   base's (a duration needs no correction). `base.now()` must be the clock the samples were timed with.
 */
import type { Clock } from "./clock.ts";

/** Answers whose bounds are intersected: enough to narrow a second's uncertainty, few enough to follow a clock set. */
export const SAMPLES = 16;

export class ServerTime {
  /** Lower and upper bounds on the offset, one pair per answer, the newest last; every pair intersects every other. */
  #bounds: { lo: number; hi: number }[] = [];
  /** The last date header seen and its value in ms (answers in the same second carry the same text). */
  #lastDate = "";
  #lastDateMs = Number.NaN;

  observe(date: string | null | undefined, sentAt: number, receivedAt: number): void {
    if (!date || receivedAt < sentAt) return;
    if (date !== this.#lastDate) {
      this.#lastDate = date;
      this.#lastDateMs = Date.parse(date);
    }
    const d = this.#lastDateMs;
    if (!Number.isFinite(d)) return;
    const sample = { lo: d - receivedAt, hi: d + 1000 - sentAt };
    if (!this.#bounds.every((b) => b.lo <= sample.hi && sample.lo <= b.hi)) this.#bounds = [];
    this.#bounds.push(sample);
    if (this.#bounds.length > SAMPLES) this.#bounds.shift();
  }

  offset(): number {
    let lo = Number.NEGATIVE_INFINITY;
    let hi = Number.POSITIVE_INFINITY;
    for (const b of this.#bounds) {
      lo = Math.max(lo, b.lo);
      hi = Math.min(hi, b.hi);
    }
    // lo <= hi: pairwise intersecting intervals of a line intersect all together (Helly). 0, clamped into [lo, hi].
    return Math.min(Math.max(lo, 0), hi);
  }
}

export function serverTimeClock(base: Clock, time: ServerTime): Clock {
  return {
    now: () => base.now() + time.offset(),
    setTimeout: (fn, ms) => base.setTimeout(fn, ms),
    clearTimeout: (timer) => base.clearTimeout(timer),
    sleep: (ms, signal) => base.sleep(ms, signal),
  };
}
