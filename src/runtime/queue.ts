/**
 * The work queue of a controller, with client-go's semantics (util/workqueue: basic, delaying and
 * rate-limiting layers in one object).
 *
 * Guarantees:
 * - Fair: keys of one priority are handed out in the order they were added (FIFO); waiting `get()` calls
 *   are served in the order they were made.
 * - Prioritised: `add(key, priority)` hands a key out before keys of lower priority (default 0; below 0 is
 *   work that may wait for everyone else's), with at most MAX_OVERTAKES keys in a row ahead of the key that
 *   waited longest (priority-fifo.ts). A key added again with a higher priority is raised, also while it is
 *   being processed (for its next run); a key's priority is never lowered while it is dirty.
 * - Stingy: a key added N times before it is handed out is handed out once.
 * - Exclusive: a key is never handed to two workers at once; an `add` while it is being processed
 *   marks it dirty, and `done()` puts it back in the queue. `queuedAgain(key)` tells a worker that this
 *   happened during its run (its result is already stale: another run follows).
 * - Delaying: `addAfter(key, ms)` adds the key once `ms` have passed on the injected clock; if the key
 *   is already waiting, the earlier deadline wins. `ms <= 0` adds at once.
 * - Rate-limited: `addRateLimited(key)` is `addAfter(key, rateLimiter.when(key))`; `forget(key)` resets
 *   the key's backoff (call it when the key was processed successfully).
 * - Shutdown: after `shutDown()` every add is ignored and pending delays are dropped; `get()` still
 *   hands out keys already queued, then resolves `undefined`. `shutDownWithDrain()` also waits until
 *   every handed-out key is `done()` (or until `shutDown()` is called).
 * - Metrics (optional): workqueue_depth counts dirty keys (waiting to be handed out, including keys
 *   that wait for their own in-flight run); adds_total counts effective adds; retries_total counts
 *   delayed adds; unfinished work and longest running processor are read at scrape time.
 */
import type { Clock } from "./clock.ts";
import { realClock } from "./clock.ts";
import { MinHeap } from "./heap.ts";
import type { WorkqueueMetrics } from "./metrics.ts";
import { PriorityFifo } from "./priority-fifo.ts";
import type { RateLimiter } from "./rate-limiter.ts";
import { defaultControllerRateLimiter } from "./rate-limiter.ts";

export interface WorkQueue<K> {
  /** Adds the key now; a higher `priority` goes first (default 0). */
  add(key: K, priority?: number): void;
  addAfter(key: K, ms: number): void;
  /** Adds the key after its rate-limited delay; returns that delay (ms), or 0 when shutting down. */
  addRateLimited(key: K): number;
  forget(key: K): void;
  numRequeues(key: K): number;
  /** The next key to process, or undefined once shut down and empty. Call done(key) after. */
  get(): Promise<{ key: K } | undefined>;
  done(key: K): void;
  /** True iff `key` is being processed and was added again meanwhile (it is handed out again after done()). */
  queuedAgain(key: K): boolean;
  /** Keys queued and not yet handed out (dirty keys in flight are not counted). */
  len(): number;
  shuttingDown(): boolean;
  shutDown(): void;
  shutDownWithDrain(): Promise<void>;
}

export interface QueueOptions<K> {
  clock?: Clock;
  /** Default: defaultControllerRateLimiter(clock). */
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkqueueMetrics;
}

/** Create a queue. Keys compare by SameValueZero: use strings (e.g. "namespace/name"). */
export function createQueue<K = string>(opts: QueueOptions<K> = {}): WorkQueue<K> {
  return new Queue<K>(opts);
}

interface Waiting<K> {
  readonly key: K;
  readonly readyAt: number;
}

class Queue<K> implements WorkQueue<K> {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter<K>;
  readonly #metrics: WorkqueueMetrics | undefined;
  readonly #unregisterProbe: () => void;

  /** Every key here is in #dirty and not in #processing; no duplicates. */
  readonly #queue = new PriorityFifo<K>();
  /** Keys that need processing: each is either in #queue or in #processing (re-queued at done()). */
  readonly #dirty = new Set<K>();
  /** The highest priority a dirty key was added with, when not 0 (absent: 0); its keys are in #dirty. */
  readonly #priority = new Map<K, number>();
  /** Time each dirty key became dirty; has exactly the keys of #dirty (for queue latency). */
  readonly #dirtySince = new Map<K, number>();
  /** Keys handed out by get() and not yet done(), with the time they were handed out. */
  readonly #processing = new Map<K, number>();
  /** Pending get() calls; non-empty only while #queue is empty and the queue is not shut down. */
  readonly #getters: Array<(item: { key: K } | undefined) => void> = [];
  /** Delayed keys and their deadline; a key appears at most once (the earliest deadline). */
  readonly #waiting = new Map<K, number>();
  /** Deadlines by time; entries whose readyAt differs from #waiting's are stale and skipped. */
  readonly #deadlines = new MinHeap<Waiting<K>>((a, b) => a.readyAt < b.readyAt);
  /** The clock timer for the earliest deadline; set iff #waiting is non-empty. */
  #timer: { handle: ReturnType<Clock["setTimeout"]>; at: number } | undefined;
  #shuttingDown = false;
  /** Resolvers of shutDownWithDrain(); called when #processing empties or shutDown() forces it. */
  #drainers: Array<() => void> = [];

  constructor(opts: QueueOptions<K>) {
    this.#clock = opts.clock ?? realClock;
    this.#limiter = opts.rateLimiter ?? defaultControllerRateLimiter<K>(this.#clock);
    this.#metrics = opts.metrics;
    this.#unregisterProbe = this.#metrics?.inFlight(() => this.#inFlight()) ?? (() => {});
  }

  add(key: K, priority = 0): void {
    if (this.#shuttingDown) return;
    const raised = this.#dirty.has(key) ? Math.max(this.#priority.get(key) ?? 0, priority) : priority;
    if (raised === 0) this.#priority.delete(key);
    else this.#priority.set(key, raised);
    if (this.#dirty.has(key)) {
      if (this.#queue.has(key)) this.#queue.push(key, priority); // raised, if higher; else done() pushes it
      return;
    }
    this.#metrics?.added();
    this.#dirty.add(key);
    this.#dirtySince.set(key, this.#clock.now());
    this.#metrics?.depth(this.#dirty.size);
    if (this.#processing.has(key)) return; // re-queued by done()
    this.#queue.push(key, priority);
    this.#serveGetters();
  }

  addAfter(key: K, ms: number): void {
    if (this.#shuttingDown) return;
    this.#metrics?.retry();
    if (!(ms > 0)) {
      this.add(key);
      return;
    }
    const readyAt = this.#clock.now() + ms;
    const current = this.#waiting.get(key);
    if (current !== undefined && current <= readyAt) return; // the earlier deadline wins
    this.#waiting.set(key, readyAt);
    this.#deadlines.push({ key, readyAt });
    if (!this.#timer || readyAt < this.#timer.at) this.#armTimer();
  }

  addRateLimited(key: K): number {
    if (this.#shuttingDown) return 0;
    const delay = this.#limiter.when(key);
    this.addAfter(key, delay);
    return delay;
  }

  forget(key: K): void {
    this.#limiter.forget(key);
  }

  numRequeues(key: K): number {
    return this.#limiter.numRequeues(key);
  }

  get(): Promise<{ key: K } | undefined> {
    if (this.#queue.size > 0) return Promise.resolve(this.#handOut());
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#getters.push(resolve));
  }

  done(key: K): void {
    const started = this.#processing.get(key);
    if (started === undefined) return;
    this.#processing.delete(key);
    this.#metrics?.workDuration((this.#clock.now() - started) / 1000);
    if (this.#dirty.has(key)) {
      this.#queue.push(key, this.#priority.get(key));
      this.#serveGetters();
    }
    if (this.#processing.size === 0) this.#releaseDrainers();
  }

  queuedAgain(key: K): boolean {
    return this.#processing.has(key) && this.#dirty.has(key);
  }

  len(): number {
    return this.#queue.size;
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  shutDown(): void {
    this.#stop();
    this.#releaseDrainers();
  }

  shutDownWithDrain(): Promise<void> {
    this.#stop();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drainers.push(resolve));
  }

  #stop(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    if (this.#timer) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    this.#waiting.clear();
    this.#deadlines.clear();
    for (const resolve of this.#getters.splice(0)) resolve(undefined);
    this.#unregisterProbe();
  }

  #releaseDrainers(): void {
    for (const resolve of this.#drainers.splice(0)) resolve();
  }

  #handOut(): { key: K } {
    const key = this.#queue.take() as K;
    const now = this.#clock.now();
    const since = this.#dirtySince.get(key);
    if (since !== undefined) this.#metrics?.queueLatency((now - since) / 1000);
    this.#dirty.delete(key);
    this.#dirtySince.delete(key);
    this.#priority.delete(key);
    this.#processing.set(key, now);
    this.#metrics?.depth(this.#dirty.size);
    return { key };
  }

  #serveGetters(): void {
    while (this.#getters.length > 0 && this.#queue.size > 0) this.#getters.shift()?.(this.#handOut());
  }

  /** (Re)arms the timer for the earliest live deadline, dropping stale heap entries on the way. */
  #armTimer(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
    for (let top = this.#deadlines.peek(); top; top = this.#deadlines.peek()) {
      if (this.#waiting.get(top.key) === top.readyAt) {
        const at = top.readyAt;
        const handle = this.#clock.setTimeout(() => this.#onTimer(), at - this.#clock.now());
        this.#timer = { handle, at };
        return;
      }
      this.#deadlines.pop();
    }
  }

  #onTimer(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    for (let top = this.#deadlines.peek(); top && top.readyAt <= now; top = this.#deadlines.peek()) {
      this.#deadlines.pop();
      if (this.#waiting.get(top.key) !== top.readyAt) continue; // stale: superseded by an earlier deadline
      this.#waiting.delete(top.key);
      this.add(top.key);
    }
    this.#armTimer();
  }

  #inFlight(): { unfinishedSeconds: number; longestRunningSeconds: number } {
    const now = this.#clock.now();
    let sum = 0;
    let longest = 0;
    for (const started of this.#processing.values()) {
      sum += now - started;
      longest = Math.max(longest, now - started);
    }
    return { unfinishedSeconds: sum / 1000, longestRunningSeconds: longest / 1000 };
  }
}
