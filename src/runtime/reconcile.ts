/**
 * The reconcile contract.
 *
 * - Level-based: a `Request` carries only the object's key ("namespace/name", or "name" for
 *   cluster-scoped objects), never the event that caused it. A reconcile reads the current state and
 *   converges; it must give the same result however many events were folded into one request.
 * - Outcomes are values, and these are all of them:
 *   - `done()`: converged; the key's backoff is reset. The key runs again on the next event or resync.
 *   - `requeueAfter(ms)`: converged for now, look again after `ms` (e.g. waiting for a rollout);
 *     the key's backoff is reset.
 *   - `requeue(priority)`: more to do, in another pass that need not go first: the key is queued again at
 *     once, at `priority` (queue.ts: below 0 it goes behind the keys events queued, which may be waited on);
 *     the key's backoff is reset. controller-runtime's priority queue has such a lane (LowPriority).
 *   - throw any error: a transient failure; the key is retried with per-key exponential backoff.
 *   - throw `TerminalError`: retrying cannot help (e.g. an invalid spec); the key is not retried
 *     until a new event or resync brings it back.
 * - The `signal` aborts when the reconcile exceeds its timeout or the controller's shutdown grace
 *   runs out; pass it to every API call.
 * - At most one reconcile runs per key at a time (the work queue guarantees it).
 * - `req.superseded()` is true once the key was queued again while this reconcile runs (a newer event,
 *   a resync): another reconcile of the key follows this one and reads newer state, so a write that only
 *   reports what this one observed (a status) may be left to it. Once true it stays true until the
 *   reconcile returns (the queue hands the key out again only after that); a controller that stops
 *   meanwhile leaves that pass to the next leader, which reconciles every key when it starts. False when
 *   nothing newer is queued, or when the caller cannot tell (`requestFor`): a write is never skipped
 *   unless a newer run is due.
 */

export interface Request {
  /** "namespace/name", or "name" for a cluster-scoped object. */
  readonly key: string;
  /** undefined for a cluster-scoped object. */
  readonly namespace: string | undefined;
  readonly name: string;
  /** True iff the key was queued again since this reconcile began (see the contract above). */
  superseded(): boolean;
}

export type Outcome =
  | { readonly kind: "done" }
  | { readonly kind: "requeueAfter"; readonly ms: number }
  | { readonly kind: "requeue"; readonly priority: number };

export type Reconciler = (req: Request, signal: AbortSignal) => Promise<Outcome>;

const DONE: Outcome = Object.freeze({ kind: "done" });

/** Converged: reset backoff, wait for the next event. */
export function done(): Outcome {
  return DONE;
}

/** Converged for now: look again after ms. */
export function requeueAfter(ms: number): Outcome {
  if (!Number.isFinite(ms) || ms < 0)
    throw new RangeError(`requeueAfter(${ms}): give a finite number of milliseconds >= 0`);
  return { kind: "requeueAfter", ms };
}

/** More to do in another pass: queued again at once, at `priority` (see the contract above). */
export function requeue(priority: number): Outcome {
  if (!Number.isInteger(priority)) throw new RangeError(`requeue(${priority}): give a whole number`);
  return { kind: "requeue", priority };
}

/** A failure that retrying cannot fix; the key is not retried. Say in the message what to fix. */
export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** The abort reason of a reconcile that ran longer than the controller's reconcileTimeoutMs. */
export class ReconcileTimeoutError extends Error {
  override readonly name = "ReconcileTimeoutError";
  constructor(
    readonly key: string,
    readonly timeoutMs: number,
  ) {
    super(`reconcile of ${key} exceeded its timeout of ${timeoutMs} ms and was aborted`);
  }
}

export function isOutcome(x: unknown): x is Outcome {
  if (typeof x !== "object" || x === null) return false;
  const o = x as { kind?: unknown; ms?: unknown; priority?: unknown };
  return (
    o.kind === "done" ||
    (o.kind === "requeueAfter" && typeof o.ms === "number" && Number.isFinite(o.ms) && o.ms >= 0) ||
    (o.kind === "requeue" && Number.isInteger(o.priority))
  );
}

/**
 * How a reconcile ended, every case: its Outcome, a transient error, or a terminal one. A "panic" is
 * a JS fault that means a bug in the reconciler (TypeError, ReferenceError, SyntaxError, a throw of a
 * non-Error, or a return value that is not an Outcome), the analogue of a Go panic.
 */
export type Settled =
  | { readonly kind: "done" }
  | { readonly kind: "requeueAfter"; readonly ms: number }
  | { readonly kind: "requeue"; readonly priority: number }
  | { readonly kind: "error"; readonly error: unknown; readonly panic: boolean }
  | { readonly kind: "terminal"; readonly error: TerminalError };

function isPanic(e: unknown): boolean {
  return !(e instanceof Error) || e instanceof TypeError || e instanceof ReferenceError || e instanceof SyntaxError;
}

/** What a reconcile's exception means. */
export function settleThrown(e: unknown): Settled {
  if (e instanceof TerminalError) return { kind: "terminal", error: e };
  return { kind: "error", error: e, panic: isPanic(e) };
}

/** What a reconcile's return value means. */
export function settleReturned(v: unknown): Settled {
  if (isOutcome(v)) return v;
  const error = new TypeError(
    `reconcile returned ${JSON.stringify(v)}; return done(), requeueAfter(ms) or requeue(priority), or throw`,
  );
  return { kind: "error", error, panic: true };
}

/** The key of an object: "namespace/name", or "name" when it has no namespace. */
export function objectKey(obj: { metadata: { namespace?: string; name?: string } }): string {
  const { namespace, name = "" } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

const NEVER_SUPERSEDED = (): boolean => false;

/** The request for a key made by objectKey; `superseded` defaults to "not known" (always false). */
export function requestFor(key: string, superseded: () => boolean = NEVER_SUPERSEDED): Request {
  const slash = key.indexOf("/");
  if (slash < 0) return { key, namespace: undefined, name: key, superseded };
  return { key, namespace: key.slice(0, slash), name: key.slice(slash + 1), superseded };
}
