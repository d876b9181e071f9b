/**
 * An informer = a watcher (watcher.ts) writing into a store (store.ts) and telling handlers what changed
 * (kube-rs `reflector`, client-go `SharedIndexInformer`).
 *
 * Properties:
 * - Store first: handlers are called after the store holds the change, so a handler (or the reconcile it
 *   enqueues) reading the cache sees at least that state.
 * - Synced once complete: `hasSynced()` turns true after the first full LIST was stored and its adds were
 *   handed to the handlers; it stays true across re-lists (a re-list's diff is delivered as add/update/delete,
 *   including deletes missed while the watch was down).
 * - Late handlers catch up: a handler registered after sync is first told about every cached object as "add".
 * - One handler's exception is logged and does not affect other handlers or the watch.
 * - It is the `EventSource` of source.ts, so a controller can watch it directly.
 * - Several namespaces: one informer per namespace, combined with `mergeInformers`; an informer without
 *   `namespace` watches all namespaces with one stream (needs cluster-wide list/watch permission).
 * - Readiness: `isStale()` and `lastEventAt` come from the watcher (see its doc).
 * - Shaped on ingest: with `transform`, every object (LIST pages, initial and re-lists, and watch events, deletes
 *   included) is transformed as it arrives, before it is stored and before any handler sees it (client-go
 *   `SetTransform`): the store and the handlers only ever hold the transformed object.
 */
import type { Clock } from "./clock.ts";
import { createStore, type Delta, type FreezeMode, type IndexFn } from "./store.ts";
import type { Logger } from "./logger.ts";
import type { EventSource, SourceEvent } from "./source.ts";
import { createWatcher, describeWatch, type WatcherEvent, type WatcherOptions } from "./watcher.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import { messageOf } from "../kube/errors.ts";

export type { EventSource, SourceEvent } from "./source.ts";

export interface Informer<T extends KubeObject> extends EventSource<T> {
  /** By "namespace/name" ("name" when cluster-scoped). */
  get(key: string): T | undefined;
  byIndex(name: string, value: string): T[];
  addIndex(name: string, fn: IndexFn<T>): void;
  /** Stores `replacement` in place of `current` (the same version), iff that instance is still cached (store.ts). */
  swap(current: T, replacement: T): boolean;
  /** Runs until `signal` aborts. Calling it twice at once throws. */
  start(signal: AbortSignal): Promise<void>;
  /** Resolves true once synced, false if `signal` aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
  isStale(): boolean;
  readonly lastEventAt: number | undefined;
  /** "deployments.apps in namespace x", for messages. */
  readonly description: string;
}

export interface InformerOptions
  extends Pick<
    WatcherOptions,
    "pageSize" | "timeoutSeconds" | "inactivityMs" | "backoff" | "random" | "onOutcome" | "transform"
  > {
  clock: Clock;
  logger: Logger;
  /** Watch one namespace only (namespaced types). Default: all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** How cached objects are frozen (store.ts). Default "shallow". */
  freeze?: FreezeMode;
}

export function createInformer<T extends KubeObject>(
  client: KubeClient,
  rt: ResourceType,
  opts: InformerOptions,
): Informer<T> {
  const store = createStore<T>(opts.freeze ? { freeze: opts.freeze } : {});
  const watcher = createWatcher<T>(client, rt, opts);
  const description = describeWatch(rt, opts.namespace);
  const handlers = new Set<(e: SourceEvent<T>) => void>();
  const syncWaiters = new Set<() => void>();
  let synced = false;

  const dispatch = (d: Delta<T>) => {
    const e: SourceEvent<T> =
      d.old === undefined ? { type: d.type, object: d.object } : { type: d.type, object: d.object, old: d.old };
    for (const h of [...handlers]) deliver(h, e);
  };
  const deliver = (h: (e: SourceEvent<T>) => void, e: SourceEvent<T>) => {
    try {
      h(e);
    } catch (err) {
      const why = messageOf(err);
      opts.logger.error(`event handler of the informer for ${description} failed: ${why}`);
    }
  };

  const onWatchEvent = (e: WatcherEvent<T>) => {
    switch (e.type) {
      case "init-done": {
        const deltas = store.replace(e.objects);
        for (const d of deltas) dispatch(d);
        if (!synced) {
          synced = true;
          opts.logger.debug(`informer for ${description} synced with ${store.size} object(s)`);
          for (const w of [...syncWaiters]) w();
        }
        return;
      }
      case "apply": {
        const d = store.apply(e.object);
        if (d) dispatch(d);
        return;
      }
      case "delete":
        dispatch(store.delete(e.object));
        return;
    }
  };

  return {
    description,
    onEvent(handler) {
      handlers.add(handler);
      if (synced) for (const object of store.list()) deliver(handler, { type: "add", object });
      return () => void handlers.delete(handler);
    },
    hasSynced: () => synced,
    list: () => store.list(),
    get: (key) => store.get(key),
    byIndex: (name, value) => store.byIndex(name, value),
    addIndex: (name, fn) => store.addIndex(name, fn),
    swap: (current, replacement) => store.swap(current, replacement),
    start: (signal) => watcher.run(signal, onWatchEvent),
    waitForSync: (signal) => (synced ? Promise.resolve(true) : waitFor(syncWaiters, signal)),
    isStale: () => watcher.isStale(),
    get lastEventAt() {
      return watcher.lastEventAt;
    },
  };
}

/** Resolves true when one of `waiters` is called (it is added to them), false if `signal` aborts first. */
function waitFor(waiters: Set<() => void>, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const done = (v: boolean) => {
      waiters.delete(onSync);
      signal.removeEventListener("abort", onAbort);
      resolve(v);
    };
    const onSync = () => done(true);
    const onAbort = () => done(false);
    waiters.add(onSync);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Several informers of one type (typically one per namespace) seen as one: events of all, synced when
 * all are, stale when any is, lastEventAt the oldest. Keys include the namespace, so they never collide.
 */
export function mergeInformers<T extends KubeObject>(informers: readonly Informer<T>[]): Informer<T> {
  if (informers.length === 0) throw new Error("mergeInformers: give at least one informer");
  return {
    description: informers.map((i) => i.description).join("; "),
    onEvent(handler) {
      const offs = informers.map((i) => i.onEvent(handler));
      return () => {
        for (const off of offs) off();
      };
    },
    hasSynced: () => informers.every((i) => i.hasSynced()),
    list: () => informers.flatMap((i) => i.list()),
    get: (key) => informers.map((i) => i.get(key)).find((o) => o !== undefined),
    byIndex: (name, value) => informers.flatMap((i) => i.byIndex(name, value)),
    addIndex: (name, fn) => {
      for (const i of informers) i.addIndex(name, fn);
    },
    swap: (current, replacement) => informers.some((i) => i.swap(current, replacement)),
    start: async (signal) => void (await Promise.all(informers.map((i) => i.start(signal)))),
    waitForSync: async (signal) => (await Promise.all(informers.map((i) => i.waitForSync(signal)))).every(Boolean),
    isStale: () => informers.some((i) => i.isStale()),
    get lastEventAt() {
      const all = informers.map((i) => i.lastEventAt);
      return all.some((t) => t === undefined) ? undefined : Math.min(...(all as number[]));
    },
  };
}

/**
 * An informer of a resource the server does not serve (discovery said so): synced at once, always empty, never
 * stale; start() only waits for `signal`. So that what goes over every informer (readiness, the controller's
 * owns(), the orphan collector) needs no exception for it, and nothing ever lists or watches it.
 */
export function createUnservedInformer<T extends KubeObject>(rt: ResourceType): Informer<T> {
  return {
    description: `${describeWatch(rt)} (not served by this cluster)`,
    onEvent: () => () => {},
    hasSynced: () => true,
    list: () => [],
    get: () => undefined,
    byIndex: () => [],
    addIndex: () => {},
    swap: () => false,
    start: (signal) =>
      new Promise<void>((resolve) => {
        if (signal.aborted) resolve();
        else signal.addEventListener("abort", () => resolve(), { once: true });
      }),
    waitForSync: async () => true,
    isStale: () => false,
    lastEventAt: undefined,
  };
}
