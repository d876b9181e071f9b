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
import { messageOf } from "../kube/errors.ts";

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
  /**
   * Applied to every object received, LIST pages (initial and re-lists) and watch events alike, as it arrives
   * (so a LIST of many pages never holds the untransformed objects of more than one page). Default: none.
   */
  transform?: (obj: KubeObject) => KubeObject;
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

export function createWatcher<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  opts: WatcherOptions,
): Watcher<T> {
  return new ListWatcher<T>(client, rt, opts);
}

/** The driver of `step`: delivers events, waits out backoffs, logs, and keeps the staleness flag. */
class ListWatcher<T extends KubeObject> implements Watcher<T> {
  readonly #client: KubeClient;
  readonly #rt: ResourceType;
  readonly #opts: WatcherOptions;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  /** "deployments.apps in namespace x", for log lines. */
  readonly #what: string;
  /** True from start and from any failure until a watch is open again. */
  #stale = true;
  #lastEventAt: number | undefined;
  #state: WatchState<T>["kind"] = "empty";
  #running = false;
  /** Failures since the watch was last healthy; only the first of a streak is logged as a warning. */
  #failures = 0;

  constructor(client: KubeClient, rt: ResourceType, opts: WatcherOptions) {
    this.#client = client;
    this.#rt = rt;
    this.#opts = opts;
    this.#random = opts.random ?? Math.random;
    this.#backoff = opts.backoff ?? createBackoff({ clock: opts.clock, random: this.#random });
    this.#what = describeWatch(rt, opts.namespace);
  }

  isStale(): boolean {
    return this.#stale;
  }
  get lastEventAt(): number | undefined {
    return this.#lastEventAt;
  }
  get state(): WatchState<T>["kind"] {
    return this.#state;
  }

  async run(signal: AbortSignal, handler: (e: WatcherEvent<T>) => void | Promise<void>): Promise<void> {
    if (this.#running) throw new Error(`watcher of ${this.#what} is already running`);
    this.#running = true;
    this.#failures = 0;
    const ctx = this.#context(signal);
    let s: WatchState<T> = { kind: "empty" };
    try {
      while (!signal.aborted) {
        const t: Transition<T> = await step(s, ctx);
        s = t.next;
        this.#state = s.kind;
        this.#opts.onOutcome?.(t.outcome);
        await this.#react(t.outcome, s, ctx);
        if (t.event && !signal.aborted) {
          try {
            await handler(t.event);
          } catch (e) {
            this.#opts.logger.error(`event handler of the watch of ${this.#what} failed: ${messageOf(e)}`);
          }
        }
      }
    } finally {
      closeStream(s);
      this.#stale = true;
      this.#state = "empty";
      this.#running = false;
    }
  }

  #context(signal: AbortSignal): StepContext {
    const o = this.#opts;
    const timeoutSeconds = o.timeoutSeconds ?? WATCHER_DEFAULTS.timeoutSeconds;
    return {
      client: this.#client,
      rt: this.#rt,
      clock: o.clock,
      signal,
      namespace: o.namespace,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
      pageSize: o.pageSize ?? WATCHER_DEFAULTS.pageSize,
      timeoutSeconds: () => Math.max(1, Math.floor(timeoutSeconds * (1 - 0.1 * this.#random()))),
      inactivityMs: o.inactivityMs ?? WATCHER_DEFAULTS.inactivityMs,
      ...(o.transform ? { transform: o.transform } : {}),
    };
  }

  /** What a step's outcome means for staleness, logging and backoff (the one switch over StepOutcome). */
  async #react(o: StepOutcome, s: WatchState<T>, ctx: StepContext): Promise<void> {
    const { clock, logger } = this.#opts;
    const what = this.#what;
    switch (o.kind) {
      case "listed":
        this.#lastEventAt = clock.now();
        break;
      case "opened":
        this.#stale = false;
        break;
      case "received":
        this.#lastEventAt = clock.now();
        this.#healthy();
        break;
      case "closed":
        this.#healthy();
        break;
      case "inactive": {
        this.#stale = true;
        const rv = s.kind === "listed" ? s.rv : "?";
        logger.info(
          `watch of ${what}: no event or bookmark for ${ctx.inactivityMs} ms; re-watching from resourceVersion ${rv}`,
        );
        break;
      }
      case "desynced": {
        this.#stale = true;
        const delay = this.#backoff.next();
        logger.debug(`watch of ${what}: resourceVersion too old (${messageOf(o.cause)}); re-listing in ${delay} ms`);
        await clock.sleep(delay, ctx.signal);
        break;
      }
      case "failed": {
        this.#stale = true;
        const delay = this.#backoff.next();
        const text = `watch of ${what} failed (${o.phase}): ${messageOf(o.cause)}; retrying in ${delay} ms`;
        if (this.#failures++ === 0) logger.warn(`${text} (further failures are logged at debug until it recovers)`);
        else logger.debug(`${text} (attempt ${this.#failures})`);
        await clock.sleep(delay, ctx.signal);
        break;
      }
    }
  }

  #healthy(): void {
    if (this.#failures > 0)
      this.#opts.logger.info(`watch of ${this.#what} recovered after ${this.#failures} failed attempt(s)`);
    this.#failures = 0;
  }
}
