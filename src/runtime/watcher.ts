/**
 * The watcher turns LIST + WATCH of one resource type into an endless stream of events (kube-rs `watcher`).
 *
 * Properties:
 * - Complete: the initial LIST is read page by page (limit 500 + continue), buffered, and delivered as
 *   one `init-done` carrying every object, so a consumer can swap its whole cache at once. The LIST has no
 *   resourceVersion: a consistent read, never older than what this process saw before (no time travel).
 * - Resumable: the WATCH starts at the LIST's resourceVersion with bookmarks on; every event and bookmark
 *   advances the resume point. A clean close by the server (after `timeoutSeconds`, 290 s as kube-rs,
 *   lowered by up to 10% at random so replicas do not reconnect together) re-watches from there.
 * - Desync-safe: a 410 — an ERROR event with code 410, or an HTTP 410 when opening — means the resume point
 *   was compacted away: back to `empty`, a fresh LIST, whose `init-done` lets the store delete what vanished.
 * - Never gives up, never storms: any other failure is retried after a bounded, jittered backoff
 *   (backoff.ts, 0.8 s → 30 s). A 410 relist also waits one backoff step (as client-go's reflector), so a
 *   410 loop costs one LIST per delay, not a LIST storm. A watch closed cleanly within 1 s without any event
 *   counts as a failure too (client-go's "very short watch"). One warning per failure streak, with the cause.
 * - Dead streams are noticed: no event or bookmark for `inactivityMs` aborts the stream and re-watches.
 *   The default, 90 s, is above the ~60 s interval at which the API server's watch cache sends bookmarks,
 *   with 30 s of slack for a loaded server; a healthy idle stream is therefore never cut, and a silently dead
 *   one (the complaint in client-node #596/#958) is replaced within 90 s. The same limit bounds opening a watch.
 * - Observable: `isStale()` is true until the first watch is open and again from any failure, 410 or
 *   inactivity until a watch is open again; `lastEventAt` is the clock time of the last LIST or event.
 * - Stoppable: aborting the signal ends `run()` promptly, closing the open stream.
 */
import type { Clock } from "./clock.ts";
import { createBackoff, type Backoff } from "./backoff.ts";
import type { Logger } from "./logger.ts";
import {
  closeStream,
  step,
  type StepContext,
  type StepOutcome,
  type Transition,
  type WatcherEvent,
  type WatchState,
} from "./_watch-step.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";

export { closeStream, step, WatchStatusError } from "./_watch-step.ts";
export type { OpenStream, StepContext, StepOutcome, Transition, WatcherEvent, WatchState } from "./_watch-step.ts";

export interface WatcherOptions {
  clock: Clock;
  logger: Logger;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** LIST page size. Default 500 (kube-rs, client-go). */
  pageSize?: number;
  /** Server-side WATCH timeout, seconds; each request uses a value up to 10% lower at random. Default 290. */
  timeoutSeconds?: number;
  /** No event or bookmark for this long aborts the stream. Default 90 000 (see the module doc). */
  inactivityMs?: number;
  /** Reconnect delays. Default createBackoff() (0.8 s → 30 s, jittered, reset after 120 s without failure). */
  backoff?: Backoff;
  /** Uniform in [0, 1). Default Math.random. */
  random?: () => number;
  /** Told every step outcome (metrics, tests). */
  onOutcome?: (outcome: StepOutcome) => void;
}

export interface Watcher<T extends KubeObject> {
  /** Lists and watches until `signal` aborts; `handler` is awaited for each event, in order. */
  run(signal: AbortSignal, handler: (e: WatcherEvent<T>) => void | Promise<void>): Promise<void>;
  /** True unless a watch is open and healthy (see the module doc). */
  isStale(): boolean;
  /** Clock time of the last completed LIST or received event/bookmark; undefined before the first. */
  readonly lastEventAt: number | undefined;
  readonly state: WatchState<T>["kind"];
}

export const WATCHER_DEFAULTS = { pageSize: 500, timeoutSeconds: 290, inactivityMs: 90_000 } as const;

/** "deployments.apps in namespace x", for messages. */
export function describeWatch(rt: ResourceType, namespace?: string): string {
  return `${rt.plural}${rt.group ? `.${rt.group}` : ""}${namespace ? ` in namespace "${namespace}"` : ""}`;
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function createWatcher<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  opts: WatcherOptions,
): Watcher<T> {
  const { clock, logger } = opts;
  const random = opts.random ?? Math.random;
  const backoff = opts.backoff ?? createBackoff({ clock, random });
  const timeoutSeconds = opts.timeoutSeconds ?? WATCHER_DEFAULTS.timeoutSeconds;
  const what = describeWatch(rt, opts.namespace);
  /** True from start and from any failure until a watch is open again. */
  let stale = true;
  let lastEventAt: number | undefined;
  let state: WatchState<T>["kind"] = "empty";
  let running = false;

  async function run(signal: AbortSignal, handler: (e: WatcherEvent<T>) => void | Promise<void>): Promise<void> {
    if (running) throw new Error(`watcher of ${what} is already running`);
    running = true;
    const ctx: StepContext = {
      client,
      rt,
      clock,
      signal,
      namespace: opts.namespace,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      pageSize: opts.pageSize ?? WATCHER_DEFAULTS.pageSize,
      timeoutSeconds: () => Math.max(1, Math.floor(timeoutSeconds * (1 - 0.1 * random()))),
      inactivityMs: opts.inactivityMs ?? WATCHER_DEFAULTS.inactivityMs,
    };
    /** Failures since the watch was last healthy; only the first of a streak is logged as a warning. */
    let failures = 0;
    let s: WatchState<T> = { kind: "empty" };
    const healthy = () => {
      if (failures > 0) logger.info(`watch of ${what} recovered after ${failures} failed attempt(s)`);
      failures = 0;
    };
    try {
      while (!signal.aborted) {
        const t: Transition<T> = await step(s, ctx);
        s = t.next;
        state = s.kind;
        const o = t.outcome;
        opts.onOutcome?.(o);
        switch (o.kind) {
          case "listed":
            lastEventAt = clock.now();
            break;
          case "opened":
            stale = false;
            break;
          case "received":
            lastEventAt = clock.now();
            healthy();
            break;
          case "closed":
            healthy();
            break;
          case "inactive":
            stale = true;
            logger.info(
              `watch of ${what}: no event or bookmark for ${ctx.inactivityMs} ms; re-watching from resourceVersion ${s.kind === "listed" ? s.rv : "?"}`,
            );
            break;
          case "desynced": {
            stale = true;
            const delay = backoff.next();
            logger.debug(`watch of ${what}: resourceVersion too old (${message(o.cause)}); re-listing in ${delay} ms`);
            await clock.sleep(delay, signal);
            break;
          }
          case "failed": {
            stale = true;
            const delay = backoff.next();
            const text = `watch of ${what} failed (${o.phase}): ${message(o.cause)}; retrying in ${delay} ms`;
            if (failures++ === 0) logger.warn(`${text} (further failures are logged at debug until it recovers)`);
            else logger.debug(`${text} (attempt ${failures})`);
            await clock.sleep(delay, signal);
            break;
          }
        }
        if (t.event && !signal.aborted) {
          try {
            await handler(t.event);
          } catch (e) {
            logger.error(`event handler of the watch of ${what} failed: ${message(e)}`);
          }
        }
      }
    } finally {
      closeStream(s);
      stale = true;
      state = "empty";
      running = false;
    }
  }

  return {
    run,
    isStale: () => stale,
    get lastEventAt() {
      return lastEventAt;
    },
    get state() {
      return state;
    },
  };
}
