/**
 * The watch protocol of watcher.ts as data: its states, and the one `step` function that performs at most
 * one request (or reads one event) and says which state comes next and what happened. The driver in
 * watcher.ts owns the side effects (delivery, backoff waits, logging, staleness).
 *
 * - empty → LIST first page → listing (more pages) | listed (+ init-done); an error → empty (retry)
 * - listing → next page → listing | listed (+ init-done); a 410 (expired continue token) → empty;
 *   another error → the same page again
 * - listed → open WATCH from rv → watching; HTTP 410 → empty; other error or no answer in time → listed
 * - watching → one event → watching (rv advanced) ; ERROR 410 → empty; other ERROR, stream error, clean close,
 *   or nothing for inactivityMs → listed (stream closed)
 */
import type { Clock } from "./clock.ts";
import { race } from "./race.ts";
import { isGone } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType, Status, WatchEvent } from "../kube/types.ts";

export type WatcherEvent<T> =
  /** The complete current state; replaces whatever the consumer knew. */
  | { type: "init-done"; objects: readonly T[]; resourceVersion: string }
  | { type: "apply"; object: T }
  | { type: "delete"; object: T };

/** An open WATCH. */
export interface OpenStream<T extends KubeObject> {
  readonly iterator: AsyncIterator<WatchEvent<T>>;
  /** Aborting it closes the HTTP stream. */
  readonly abort: AbortController;
  readonly openedAt: number;
  /** Events and bookmarks received on this stream. */
  readonly received: number;
}

/** The protocol states (kube-rs `State`). */
export type WatchState<T extends KubeObject> =
  /** Nothing known: the next step starts a LIST. */
  | { kind: "empty" }
  /** A paginated LIST in progress: `buffer` holds the pages so far, `continueToken` asks for the next. */
  | { kind: "listing"; rv: string; continueToken: string; buffer: T[] }
  /** Resume point known, no stream open: the next step opens a WATCH from `rv`. */
  | { kind: "listed"; rv: string }
  /** A WATCH is open; `rv` is the last resourceVersion seen on it. */
  | { kind: "watching"; rv: string; stream: OpenStream<T> };

/** What a step did, for the driver: progress, or why the watch is not healthy. */
export type StepOutcome =
  | { kind: "listed" }
  | { kind: "page" }
  | { kind: "opened" }
  | { kind: "received" }
  | { kind: "closed" }
  | { kind: "desynced"; cause: unknown }
  | { kind: "inactive" }
  | { kind: "failed"; phase: "list" | "open" | "watch"; cause: unknown }
  | { kind: "aborted" };

export interface Transition<T extends KubeObject> {
  next: WatchState<T>;
  outcome: StepOutcome;
  event?: WatcherEvent<T>;
}

export interface StepContext {
  client: KubeClient;
  rt: ResourceType;
  clock: Clock;
  signal: AbortSignal;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  pageSize: number;
  /** Server-side timeout of each WATCH, seconds. */
  timeoutSeconds: () => number;
  inactivityMs: number;
  /** Applied to every object received (LIST items, watch events) after its apiVersion/kind are set. */
  transform?: (obj: KubeObject) => KubeObject;
}

/** Watch ended cleanly within this many ms without any event: treated as a failure (client-go). */
const VERY_SHORT_WATCH_MS = 1_000;

/** One protocol step: performs at most one request (or reads one event) and says where to go next. */
export function step<T extends KubeObject>(s: WatchState<T>, ctx: StepContext): Promise<Transition<T>> {
  switch (s.kind) {
    case "empty":
    case "listing":
      return listPage(s, ctx);
    case "listed":
      return openWatch(s, ctx);
    case "watching":
      return readEvent(s, ctx);
  }
}

/** empty | listing → one LIST page → listing (more pages) | listed (+ init-done); 410 → empty. */
async function listPage<T extends KubeObject>(
  s: Extract<WatchState<T>, { kind: "empty" | "listing" }>,
  ctx: StepContext,
): Promise<Transition<T>> {
  const cont = s.kind === "listing" ? s.continueToken : undefined;
  const r = await race(
    ctx.client.list<T>(ctx.rt, { ...selectors(ctx), limit: ctx.pageSize, continue: cont, signal: ctx.signal }),
    ctx.clock,
    undefined,
    ctx.signal,
  );
  if (r.kind === "aborted") return { next: s, outcome: { kind: "aborted" } };
  if (r.kind !== "value") {
    const cause = r.kind === "error" ? r.cause : undefined;
    // An expired continue token is a 410 as well: start the LIST over.
    if (isGone(cause)) return { next: { kind: "empty" }, outcome: { kind: "desynced", cause } };
    return { next: s, outcome: { kind: "failed", phase: "list", cause } };
  }
  const page = r.value;
  const rv = s.kind === "listing" ? s.rv : (page.metadata.resourceVersion ?? "");
  const buffer = s.kind === "listing" ? s.buffer : [];
  for (const item of page.items) buffer.push(ingest(item, ctx));
  if (page.metadata.continue) {
    return { next: { kind: "listing", rv, continueToken: page.metadata.continue, buffer }, outcome: { kind: "page" } };
  }
  return {
    next: { kind: "listed", rv },
    outcome: { kind: "listed" },
    event: { type: "init-done", objects: buffer, resourceVersion: rv },
  };
}

/** listed → WATCH from rv → watching; 410 → empty; another error or no answer in time → listed. */
async function openWatch<T extends KubeObject>(
  s: Extract<WatchState<T>, { kind: "listed" }>,
  ctx: StepContext,
): Promise<Transition<T>> {
  const abort = new AbortController();
  const unlink = link(ctx.signal, abort);
  const r = await race(
    ctx.client.watch<T>(ctx.rt, {
      ...selectors(ctx),
      resourceVersion: s.rv,
      allowWatchBookmarks: true,
      timeoutSeconds: ctx.timeoutSeconds(),
      signal: abort.signal,
    }),
    ctx.clock,
    ctx.inactivityMs,
    ctx.signal,
  );
  if (r.kind !== "value") {
    unlink();
    abort.abort();
    if (r.kind === "aborted") return { next: s, outcome: { kind: "aborted" } };
    if (r.kind === "timeout") {
      const cause = new Error(`no answer to WATCH within ${ctx.inactivityMs} ms`);
      return { next: s, outcome: { kind: "failed", phase: "open", cause } };
    }
    if (isGone(r.cause)) return { next: { kind: "empty" }, outcome: { kind: "desynced", cause: r.cause } };
    return { next: s, outcome: { kind: "failed", phase: "open", cause: r.cause } };
  }
  const iterator = r.value[Symbol.asyncIterator]();
  abort.signal.addEventListener("abort", unlink, { once: true });
  const stream: OpenStream<T> = { iterator, abort, openedAt: ctx.clock.now(), received: 0 };
  return { next: { kind: "watching", rv: s.rv, stream }, outcome: { kind: "opened" } };
}

/** watching → one event → watching; a 410 → empty; stream error, clean close or inactivity → listed. */
async function readEvent<T extends KubeObject>(
  s: Extract<WatchState<T>, { kind: "watching" }>,
  ctx: StepContext,
): Promise<Transition<T>> {
  const r = await race(s.stream.iterator.next(), ctx.clock, ctx.inactivityMs, ctx.signal);
  const resume: WatchState<T> = { kind: "listed", rv: s.rv };
  if (r.kind === "aborted") return { next: closeStream(s), outcome: { kind: "aborted" } };
  if (r.kind === "timeout") return { next: closeStream(s), outcome: { kind: "inactive" } };
  if (r.kind === "error") {
    closeStream(s);
    if (isGone(r.cause)) return { next: { kind: "empty" }, outcome: { kind: "desynced", cause: r.cause } };
    return { next: resume, outcome: { kind: "failed", phase: "watch", cause: r.cause } };
  }
  if (r.value.done) {
    closeStream(s);
    const lived = ctx.clock.now() - s.stream.openedAt;
    if (s.stream.received === 0 && lived < VERY_SHORT_WATCH_MS) {
      const cause = new Error(`very short watch: closed after ${lived} ms without any event`);
      return { next: resume, outcome: { kind: "failed", phase: "watch", cause } };
    }
    return { next: resume, outcome: { kind: "closed" } };
  }
  return received(s, r.value.value, ctx);
}

/** What one watch event means: the state advanced to its resourceVersion, and the event to deliver. */
function received<T extends KubeObject>(
  s: Extract<WatchState<T>, { kind: "watching" }>,
  ev: WatchEvent<T>,
  ctx: StepContext,
): Transition<T> {
  const stream = { ...s.stream, received: s.stream.received + 1 };
  const advanced = (obj: KubeObject): WatchState<T> => ({
    kind: "watching",
    rv: obj.metadata?.resourceVersion || s.rv,
    stream,
  });
  switch (ev.type) {
    case "ADDED":
    case "MODIFIED":
    case "DELETED": {
      const type = ev.type === "DELETED" ? "delete" : "apply";
      const event = { type, object: ingest(ev.object, ctx) } as const;
      return { next: advanced(ev.object), outcome: { kind: "received" }, event };
    }
    case "BOOKMARK":
      return { next: advanced(ev.object), outcome: { kind: "received" } };
    case "ERROR": {
      closeStream(s);
      const cause = new WatchStatusError(ev.object);
      if (cause.gone) return { next: { kind: "empty" }, outcome: { kind: "desynced", cause } };
      return { next: { kind: "listed", rv: s.rv }, outcome: { kind: "failed", phase: "watch", cause } };
    }
    default:
      return { next: { ...s, stream }, outcome: { kind: "received" } };
  }
}

/** An ERROR event of a watch stream. */
export class WatchStatusError extends Error {
  override readonly name = "WatchStatusError";
  /** The resourceVersion is too old (410 / Expired / Gone): re-list. */
  readonly gone: boolean;
  constructor(readonly status: Status) {
    super(`watch ERROR ${status.code ?? "?"} ${status.reason ?? ""}: ${status.message ?? "(no message)"}`);
    this.gone = status.code === 410 || status.reason === "Expired" || status.reason === "Gone";
  }
}

/** Closes the stream of a watching state (idempotent) and returns the state to resume from. */
export function closeStream<T extends KubeObject>(s: WatchState<T>): WatchState<T> {
  if (s.kind !== "watching") return s;
  s.stream.abort.abort();
  s.stream.iterator.return?.().catch(() => {});
  return { kind: "listed", rv: s.rv };
}

function selectors(ctx: StepContext) {
  return { namespace: ctx.namespace, labelSelector: ctx.labelSelector, fieldSelector: ctx.fieldSelector };
}

/** An object as received, typed and transformed, ready to deliver. */
function ingest<T extends KubeObject>(obj: T, ctx: StepContext): T {
  const typed = withTypeMeta(obj, ctx.rt);
  return ctx.transform ? (ctx.transform(typed) as T) : typed;
}

/** LIST items come without apiVersion/kind; put them back so objects are self-describing. */
function withTypeMeta<T extends KubeObject>(obj: T, rt: ResourceType): T {
  if (obj.apiVersion && obj.kind) return obj;
  return { ...obj, apiVersion: rt.group ? `${rt.group}/${rt.version}` : rt.version, kind: rt.kind };
}

/** Aborts `child` when `parent` aborts; returns the unlink function. */
function link(parent: AbortSignal, child: AbortController): () => void {
  const onAbort = () => child.abort();
  if (parent.aborted) child.abort();
  else parent.addEventListener("abort", onAbort, { once: true });
  return () => parent.removeEventListener("abort", onAbort);
}
