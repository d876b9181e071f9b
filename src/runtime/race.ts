/**
 * Settles a promise against an optional clock timeout and an abort signal, as a value: never rejects, never
 * leaves a timer or an abort listener behind once settled. Used by the watcher's step and the leader elector
 * to bound each API call without cancelling work they do not own.
 */
import type { Clock, ClockTimer } from "./clock.ts";

export type Raced<V> =
  | { kind: "value"; value: V }
  | { kind: "error"; cause: unknown }
  | { kind: "timeout" }
  | { kind: "aborted" };

/** Settles with the first of: the promise, the clock timeout (if ms given), the signal. Never rejects. */
export function race<V>(p: Promise<V>, clock: Clock, ms: number | undefined, signal: AbortSignal): Promise<Raced<V>> {
  return new Promise((resolve) => {
    let timer: ClockTimer | undefined;
    let settled = false;
    const finish = (r: Raced<V>) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(r);
    };
    const onAbort = () => finish({ kind: "aborted" });
    p.then(
      (value) => finish({ kind: "value", value }),
      (cause: unknown) => finish({ kind: "error", cause }),
    );
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (ms !== undefined && !settled) timer = clock.setTimeout(() => finish({ kind: "timeout" }), ms);
  });
}
