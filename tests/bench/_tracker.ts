/**
 * Watch-based timing: a LIST + WATCH of one resource in one namespace, kept as a map by name, and
 * waits that resolve at the event that made them true (not at a poll tick).
 *
 * Properties:
 * - `start()` resolves once the initial list is in the map and the watch is open, so nothing that
 *   happens afterwards is missed.
 * - until(count, pred): resolves with performance.now() at the first event after which at least
 *   `count` objects satisfy `pred` (checked incrementally: one predicate call per event).
 *   An optional `progress(satisfied, now)` hears every change of that number (for curves over time).
 * - untilObject(name, pred): the same for one object (pred sees undefined once it is deleted).
 * - subscribe(fn) hears every change of every object (undefined once deleted) until the returned function is called.
 * - A watch the server ends is re-opened from the last resourceVersion; a 410 re-lists. Every wait
 *   rejects after its timeout, naming what it waited for and how far it got.
 */
import { isGone } from "../../src/kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../src/kube/types.ts";

interface Waiter<T> {
  onChange(name: string, obj: T | undefined, now: number): void;
}

export interface Tracker<T extends KubeObject> {
  start(): Promise<void>;
  get(name: string): T | undefined;
  all(): IterableIterator<T>;
  size(): number;
  until(
    count: number,
    pred: (o: T) => boolean,
    timeoutMs: number,
    what: string,
    progress?: (satisfied: number, now: number) => void,
  ): Promise<number>;
  untilObject(name: string, pred: (o: T | undefined) => boolean, timeoutMs: number, what: string): Promise<number>;
  subscribe(fn: (name: string, obj: T | undefined) => void): () => void;
  stop(): void;
}

export function createTracker<T extends KubeObject>(
  kube: KubeClient,
  rt: ResourceType,
  namespace: string,
  labelSelector?: string,
): Tracker<T> {
  const objects = new Map<string, T>();
  const waiters = new Set<Waiter<T>>();
  const stop = new AbortController();
  let rv = "";

  const apply = (name: string, obj: T | undefined) => {
    if (obj) objects.set(name, obj);
    else objects.delete(name);
    const now = performance.now();
    for (const w of [...waiters]) w.onChange(name, obj, now);
  };

  async function relist(): Promise<void> {
    const list = await kube.listAll<T>(rt, { namespace, ...(labelSelector ? { labelSelector } : {}) });
    const seen = new Set<string>();
    for (const o of list.items) {
      const name = o.metadata.name as string;
      seen.add(name);
      apply(name, o);
    }
    for (const name of [...objects.keys()]) if (!seen.has(name)) apply(name, undefined);
    rv = list.metadata.resourceVersion ?? "";
  }

  async function watchLoop(opened: () => void): Promise<void> {
    while (!stop.signal.aborted) {
      try {
        const stream = await kube.watch<T>(rt, {
          namespace,
          resourceVersion: rv,
          allowWatchBookmarks: true,
          timeoutSeconds: 1800,
          signal: stop.signal,
          ...(labelSelector ? { labelSelector } : {}),
        });
        opened();
        for await (const ev of stream) {
          if (ev.type === "ERROR") {
            if (ev.object.code === 410) throw Object.assign(new Error("gone"), { gone: true });
            continue;
          }
          rv = ev.object.metadata.resourceVersion ?? rv;
          if (ev.type === "BOOKMARK") continue;
          apply(ev.object.metadata.name as string, ev.type === "DELETED" ? undefined : ev.object);
        }
      } catch (e) {
        if (stop.signal.aborted) return;
        if (isGone(e) || (e as { gone?: boolean }).gone) await relist().catch(() => {});
        else await Bun.sleep(200);
      }
    }
  }

  function wait(
    what: string,
    timeoutMs: number,
    make: (resolve: (t: number) => void) => Waiter<T> & { initial(): boolean; progress(): string },
  ): Promise<number> {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const w = make((t) => {
        waiters.delete(w);
        if (timer) clearTimeout(timer);
        resolve(t);
      });
      if (w.initial()) return resolve(performance.now());
      waiters.add(w);
      timer = setTimeout(() => {
        waiters.delete(w);
        reject(new Error(`timed out after ${(timeoutMs / 1000).toFixed(0)} s waiting for ${what} (${w.progress()})`));
      }, timeoutMs);
    });
  }

  return {
    async start() {
      await relist();
      await new Promise<void>((opened, failed) => {
        watchLoop(opened).catch(failed);
      });
    },
    get: (name) => objects.get(name),
    all: () => objects.values(),
    size: () => objects.size,
    until(count, pred, timeoutMs, what, progress) {
      return wait(what, timeoutMs, (done) => {
        const ok = new Set<string>();
        return {
          initial() {
            for (const [name, o] of objects) if (pred(o)) ok.add(name);
            progress?.(ok.size, performance.now());
            return ok.size >= count;
          },
          progress: () => `${ok.size} of ${count}`,
          onChange(name, obj, now) {
            const before = ok.size;
            if (obj && pred(obj)) ok.add(name);
            else ok.delete(name);
            if (ok.size !== before) progress?.(ok.size, now);
            if (ok.size >= count) done(now);
          },
        };
      });
    },
    untilObject(name, pred, timeoutMs, what) {
      return wait(what, timeoutMs, (done) => ({
        initial: () => pred(objects.get(name)),
        progress: () => (objects.has(name) ? "it exists but does not match yet" : "it does not exist"),
        onChange(n, obj, now) {
          if (n === name && pred(obj)) done(now);
        },
      }));
    },
    subscribe(fn) {
      const w: Waiter<T> = { onChange: (name, obj) => fn(name, obj) };
      waiters.add(w);
      return () => waiters.delete(w);
    },
    stop: () => stop.abort(),
  };
}
