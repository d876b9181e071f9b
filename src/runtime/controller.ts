/**
 * A controller: a work queue of keys, `concurrency` workers running the reconciler, and the one
 * place where a reconcile's outcome becomes a queue action and a metric (`settle`).
 *
 * Guarantees:
 * - Bounded: at most `concurrency` reconciles run at once; never two for the same key (the queue).
 * - A request's `superseded()` is the queue's `queuedAgain(key)`: true once an event or resync queued the
 *   key again during the run, which then runs once more right after it.
 * - Every outcome is settled in one switch (see reconcile.ts for the contract):
 *     done           -> forget,              reconcile_total{result="success"}
 *     requeueAfter   -> forget + addAfter,   reconcile_total{result="requeue_after"}
 *     requeue        -> forget + add at its priority, reconcile_total{result="requeue"}
 *     error          -> addRateLimited,      reconcile_errors_total, reconcile_total{result="error"}
 *     TerminalError  -> forget (no retry),   terminal_reconcile_errors_total, reconcile_errors_total, result="error"
 *   A "panic" (a JS fault such as TypeError/ReferenceError, a non-Error throw, or a value that is not an
 *   Outcome) also bumps reconcile_panics_total, then takes the error path. No exception leaves a worker.
 * - Timeout: with `reconcileTimeoutMs`, a reconcile running longer has its signal aborted
 *   (reason: ReconcileTimeoutError) and counts as an error, whatever it returns. The worker still
 *   waits for it to return, so a key is never run twice at once.
 * - Start waits until every watched source has synced (up to `cacheSyncTimeoutMs`) before workers run;
 *   events that arrive meanwhile are queued.
 * - Stop: no new reconcile starts; in-flight ones get `graceMs` (default 30 s) to finish, then their
 *   signals abort and stop returns.
 * - Fair to the event loop: a worker waits one turn of it (setImmediate) after each reconcile. A reconcile that
 *   sends no request (a pass over a converged WebApp) finishes in microtasks, and a worker taking the next key at
 *   once ran a whole queue so: a fresh start over 2,000 converged WebApps answered no probe or scrape, fired no
 *   timer (the lease's renewal) and read no watch event until all were done; over 10,000 production-shaped ones a
 *   metrics scrape waited more than 10 s (the bench's, 2026-12-07). The turn costs a few µs per reconcile.
 */
import type { Clock } from "./clock.ts";
import { realClock, repeatJittered } from "./clock.ts";
import { type Logger, reconcileContext, withLogContext } from "./logger.ts";
import type { ControllerMetrics, RuntimeMetrics } from "./metrics.ts";
import { createRuntimeMetrics } from "./metrics.ts";
import type { WorkQueue } from "./queue.ts";
import { createQueue } from "./queue.ts";
import type { Reconciler, Request, Settled } from "./reconcile.ts";
import { ReconcileTimeoutError, requestFor, settleReturned, settleThrown } from "./reconcile.ts";
import type { EventHandler, EventSource, SourceEvent } from "./source.ts";
import { messageOf } from "../kube/errors.ts";

/** One turn of the event loop: timers, I/O and HTTP handlers waiting behind the current work run first. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const DEFAULT_GRACE_MS = 30_000;
export const DEFAULT_RESYNC_MS = 10 * 60 * 60 * 1000;
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;
const SYNC_POLL_MS = 100;

export interface ControllerOptions {
  /** Names metrics (controller=, name=) and log lines. */
  name: string;
  reconcile: Reconciler;
  /** Maximum concurrent reconciles (default 1). */
  concurrency?: number;
  /** Abort a reconcile after this many ms (default: no timeout). */
  reconcileTimeoutMs?: number;
  /** The controller owns it and shuts it down on stop. Default: createQueue with the default rate limiter. */
  queue?: WorkQueue<string>;
  clock?: Clock;
  /** Where to record; default: a private registry nobody scrapes. */
  metrics?: RuntimeMetrics;
  logger: Logger;
  /** How long start() waits for watched sources to sync; 0 waits forever (default 2 min). */
  cacheSyncTimeoutMs?: number;
}

export interface WatchOptions<T = never> {
  /** The queue priority of the keys an event enqueues (default 0): a number, or one chosen per event. */
  priority?: number | ((e: SourceEvent<T>) => number);
}

export type ControllerStatus = "idle" | "syncing" | "running" | "stopping" | "stopped";

export interface ResyncOptions {
  /** Mean period (default 10 h, as controller-runtime's SyncPeriod). */
  everyMs?: number;
  /** Each period is everyMs · (1 ± jitter) (default 0.1). */
  jitter?: number;
  /** Source of randomness in [0, 1) (default Math.random). */
  random?: () => number;
}

export interface Controller {
  readonly name: string;
  /** Adds a key to the queue (ignored once stopping). */
  enqueue(key: string): void;
  /**
   * Subscribes a handler to a source until stop; start() waits for the source to sync. The keys it enqueues
   * have `opts.priority` (default 0; queue.ts: a higher priority is handed out first), fixed or per event.
   */
  watch<T>(source: EventSource<T>, handler: EventHandler<T>, opts?: WatchOptions<T>): void;
  /** Every ~everyMs, enqueues every key keys() returns. Returns a cancel function. */
  resync(keys: () => Iterable<string>, opts?: ResyncOptions): () => void;
  /** Resolves once workers run; rejects if sources do not sync in time. Call once. */
  start(): Promise<void>;
  /** Idempotent; resolves when workers have finished or the grace period ran out. */
  stop(opts?: { graceMs?: number }): Promise<void>;
  /** start(), then stop() when signal aborts; resolves after the stop. */
  run(signal: AbortSignal, opts?: { graceMs?: number }): Promise<void>;
  status(): ControllerStatus;
}

export function createController(opts: ControllerOptions): Controller {
  return new ControllerImpl(opts);
}

class ControllerImpl implements Controller {
  readonly name: string;
  readonly #reconcile: Reconciler;
  readonly #concurrency: number;
  readonly #timeoutMs: number;
  readonly #syncTimeoutMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #metrics: ControllerMetrics;
  readonly #queue: WorkQueue<string>;

  #status: ControllerStatus = "idle";
  /** Aborted when stop begins; wakes the sync wait. */
  readonly #stopping = new AbortController();
  #stopped: Promise<void> | undefined;
  /** Sources whose hasSynced gates start(). */
  readonly #sources: EventSource<unknown>[] = [];
  /** Unsubscribe and cancel functions to run at stop. */
  readonly #cleanups = new Set<() => void>();
  /** One promise per worker; each resolves when the worker exits. */
  #workers: Promise<void>[] = [];
  /** Abort controllers of reconciles in flight; size <= concurrency. */
  readonly #inFlight = new Set<AbortController>();
  /** Workers currently inside a reconcile. */
  #active = 0;

  constructor(o: ControllerOptions) {
    if (!o.name) throw new RangeError("createController: give the controller a name");
    const concurrency = o.concurrency ?? 1;
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`controller "${o.name}": concurrency must be an integer >= 1, got ${concurrency}`);
    this.name = o.name;
    this.#reconcile = o.reconcile;
    this.#concurrency = concurrency;
    this.#timeoutMs = o.reconcileTimeoutMs ?? 0;
    this.#syncTimeoutMs = o.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS;
    this.#clock = o.clock ?? realClock;
    this.#log = o.logger;
    const metrics = o.metrics ?? createRuntimeMetrics({ process: false });
    this.#metrics = metrics.controller(o.name);
    this.#queue = o.queue ?? createQueue<string>({ clock: this.#clock, metrics: metrics.workqueue(o.name) });
  }

  status(): ControllerStatus {
    return this.#status;
  }

  enqueue(key: string): void {
    this.#queue.add(key);
  }

  watch<T>(source: EventSource<T>, handler: EventHandler<T>, opts: WatchOptions<T> = {}): void {
    if (this.#status === "stopping" || this.#status === "stopped") return;
    const { priority = 0 } = opts;
    const fixed = typeof priority === "number" ? (key: string): void => this.#queue.add(key, priority) : undefined;
    const off = source.onEvent((e) => {
      try {
        const p = typeof priority === "number" ? priority : priority(e);
        handler(e, fixed ?? ((key) => this.#queue.add(key, p)));
      } catch (err) {
        this.#log.error(
          `[${this.name}] an event handler failed on a ${e.type} event; the event was dropped: ${messageOf(err)}`,
          err,
        );
      }
    });
    this.#sources.push(source as EventSource<unknown>);
    this.#cleanups.add(off);
  }

  resync(keys: () => Iterable<string>, opts: ResyncOptions = {}): () => void {
    if (this.#status === "stopping" || this.#status === "stopped") return () => {};
    const every = { everyMs: opts.everyMs ?? DEFAULT_RESYNC_MS, jitter: opts.jitter ?? 0.1, random: opts.random };
    const stopRepeat = repeatJittered(this.#clock, every, () => {
      try {
        let n = 0;
        for (const key of keys()) {
          this.#queue.add(key);
          n++;
        }
        this.#log.debug(`[${this.name}] resync enqueued ${n} keys`);
      } catch (err) {
        this.#log.error(`[${this.name}] resync could not list keys: ${messageOf(err)}`, err);
      }
    });
    const cancel = (): void => {
      stopRepeat();
      this.#cleanups.delete(cancel);
    };
    this.#cleanups.add(cancel);
    return cancel;
  }

  async start(): Promise<void> {
    if (this.#status !== "idle")
      throw new Error(`controller "${this.name}" was already started; create a new controller to start again`);
    this.#status = "syncing";
    this.#metrics.maxConcurrent(this.#concurrency);
    this.#metrics.activeWorkers(0);
    const began = this.#clock.now();
    while (!this.#sources.every((s) => s.hasSynced())) {
      if (this.#stopping.signal.aborted) return;
      if (this.#syncTimeoutMs > 0 && this.#clock.now() - began >= this.#syncTimeoutMs) {
        await this.stop({ graceMs: 0 });
        throw new Error(
          `controller "${this.name}": its watched resources did not sync within ${this.#syncTimeoutMs} ms; ` +
            "check that the API server is reachable and that RBAC allows list and watch on them",
        );
      }
      await this.#clock.sleep(SYNC_POLL_MS, this.#stopping.signal);
    }
    if (this.#stopping.signal.aborted) return;
    this.#status = "running";
    this.#log.info(`[${this.name}] starting ${this.#concurrency} worker(s)`);
    this.#workers = Array.from({ length: this.#concurrency }, () => this.#worker());
  }

  stop(opts: { graceMs?: number } = {}): Promise<void> {
    this.#stopped ??= this.#stop(opts.graceMs ?? DEFAULT_GRACE_MS);
    return this.#stopped;
  }

  async run(signal: AbortSignal, opts: { graceMs?: number } = {}): Promise<void> {
    const aborted = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      else signal.addEventListener("abort", () => resolve(), { once: true });
    });
    void aborted.then(() => this.stop(opts));
    await this.start();
    await aborted;
    await this.stop(opts);
  }

  async #stop(graceMs: number): Promise<void> {
    const wasRunning = this.#status === "running";
    this.#status = "stopping";
    this.#stopping.abort();
    for (const cleanup of [...this.#cleanups]) cleanup();
    this.#cleanups.clear();
    this.#queue.shutDown();
    if (wasRunning) {
      this.#log.info(
        `[${this.name}] stopping; waiting up to ${graceMs} ms for ${this.#inFlight.size} reconcile(s) in flight`,
      );
      const grace = new AbortController();
      const finished = Promise.all(this.#workers).then(() => true);
      const expired = this.#clock.sleep(graceMs, grace.signal).then(() => false);
      const inTime = await Promise.race([finished, expired]);
      grace.abort();
      if (!inTime) {
        this.#log.warn(
          `[${this.name}] ${this.#inFlight.size} reconcile(s) still running after the ${graceMs} ms grace period; aborting them`,
        );
        for (const ac of this.#inFlight) ac.abort(new Error(`controller "${this.name}" is stopping`));
      }
    }
    this.#status = "stopped";
  }

  async #worker(): Promise<void> {
    for (;;) {
      const item = await this.#queue.get();
      if (!item) return;
      if (this.#status !== "running") {
        this.#queue.done(item.key); // stopping: start nothing new
        continue;
      }
      this.#metrics.activeWorkers(++this.#active);
      try {
        // Every line of this reconcile (here and in the reconciler) carries its controller, key and reconcileID.
        const req = requestFor(item.key, () => this.#queue.queuedAgain(item.key));
        await withLogContext(reconcileContext(this.name, item.key), () => this.#reconcileOne(req));
      } catch (err) {
        this.#log.error(`[${this.name}] internal error while handling ${item.key}: ${messageOf(err)}`, err);
      } finally {
        this.#queue.done(item.key);
        this.#metrics.activeWorkers(--this.#active);
      }
      await nextTurn();
    }
  }

  async #reconcileOne(req: Request): Promise<void> {
    const ac = new AbortController();
    this.#inFlight.add(ac);
    const started = this.#clock.now();
    let timeout: ReconcileTimeoutError | undefined;
    const timer =
      this.#timeoutMs > 0
        ? this.#clock.setTimeout(() => {
            timeout = new ReconcileTimeoutError(req.key, this.#timeoutMs);
            ac.abort(timeout);
          }, this.#timeoutMs)
        : undefined;
    let settled: Settled;
    try {
      settled = settleReturned(await this.#reconcile(req, ac.signal));
    } catch (err) {
      settled = settleThrown(err);
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      this.#inFlight.delete(ac);
    }
    if (timeout) settled = { kind: "error", error: timeout, panic: false };
    this.#settle(req, settled, (this.#clock.now() - started) / 1000);
  }

  /** The one mapping from outcome to queue action and metrics. */
  #settle(req: Request, s: Settled, seconds: number): void {
    const { key } = req;
    switch (s.kind) {
      case "done":
        this.#queue.forget(key);
        this.#metrics.reconciled("success", seconds);
        this.#log.debug(`[${this.name}] reconciled ${key} in ${seconds} s`);
        return;
      case "requeueAfter":
        this.#queue.forget(key);
        this.#queue.addAfter(key, s.ms);
        this.#metrics.reconciled("requeue_after", seconds);
        this.#log.debug(`[${this.name}] reconciled ${key}; looking again in ${s.ms} ms`);
        return;
      case "requeue":
        this.#queue.forget(key);
        this.#queue.add(key, s.priority);
        this.#metrics.reconciled("requeue", seconds);
        this.#log.debug(`[${this.name}] reconciled ${key}; looking again at priority ${s.priority}`);
        return;
      case "terminal":
        this.#queue.forget(key);
        this.#metrics.terminalError();
        this.#metrics.error();
        this.#metrics.reconciled("error", seconds);
        this.#log.error(
          `[${this.name}] reconcile of ${key} failed and will not be retried until it changes: ${s.error.message}`,
          s.error,
        );
        return;
      case "error": {
        if (s.panic) this.#metrics.panic();
        const attempt = this.#queue.numRequeues(key) + 1;
        const delay = this.#queue.addRateLimited(key);
        this.#metrics.error();
        this.#metrics.reconciled("error", seconds);
        const what = s.panic ? "crashed (a bug in the reconciler)" : "failed";
        const next = this.#queue.shuttingDown() ? "not retried: the controller is stopping" : `retrying in ${delay} ms`;
        this.#log.error(
          `[${this.name}] reconcile of ${key} ${what} (attempt ${attempt}); ${next}: ${messageOf(s.error)}`,
          s.error,
        );
        return;
      }
    }
  }
}
