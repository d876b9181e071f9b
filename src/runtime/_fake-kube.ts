/**
 * TEST DOUBLE — imported by *.test.ts files only, never by runtime code.
 *
 * A scripted KubeClient:
 * - `list` and `watch` answer from queues the test fills (`answerList`, `answerWatch`); a call made while
 *   its queue is empty waits for the next answer (or rejects when its signal aborts).
 * - A `WatchScript` is an open stream the test drives: `push(event)`, `end()`, `fail(error)`; aborting the
 *   watch's signal ends it quietly, as the real client does.
 * - `get`/`create`/`replace`/`patch`/`delete` work on an in-memory object map with resourceVersions and
 *   optimistic concurrency (replace with a stale resourceVersion is a Conflict); `failWith` injects errors.
 * - Every call is recorded with the clock time it was made at.
 */
import { KubeError } from "../kube/errors.ts";
import type { KubeClient, KubeList, KubeObject, ListOptions, ResourceType, WatchEvent } from "../kube/types.ts";

export interface RecordedCall {
  method: string;
  rt: ResourceType;
  at: number;
  args: Record<string, unknown>;
}

type Answer<V> = V | Error;

/** A queue whose take() waits for the next answer. */
class AnswerQueue<V> {
  readonly #items: Answer<V>[] = [];
  readonly #waiters: ((a: Answer<V>) => void)[] = [];
  give(a: Answer<V>): void {
    const w = this.#waiters.shift();
    if (w) w(a);
    else this.#items.push(a);
  }
  take(signal?: AbortSignal): Promise<V> {
    const next = this.#items.shift();
    const settle = (a: Answer<V>) => (a instanceof Error ? Promise.reject(a) : Promise.resolve(a));
    if (next !== undefined) return settle(next);
    return new Promise<V>((resolve, reject) => {
      const waiter = (a: Answer<V>) => {
        signal?.removeEventListener("abort", onAbort);
        if (a instanceof Error) reject(a);
        else resolve(a);
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(new DOMException("aborted", "AbortError"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }
}

/** An open WATCH stream driven by the test. */
export class WatchScript<T extends KubeObject = KubeObject> implements AsyncIterable<WatchEvent<T>> {
  readonly #queue: ({ ev: WatchEvent<T> } | { end: true } | { error: unknown })[] = [];
  #wake: (() => void) | undefined;
  #done = false;
  /** Set when the watcher opened this stream. */
  signal: AbortSignal | undefined;
  push(ev: WatchEvent<T>): this {
    this.#queue.push({ ev });
    this.#wake?.();
    return this;
  }
  end(): this {
    this.#queue.push({ end: true });
    this.#wake?.();
    return this;
  }
  fail(error: unknown): this {
    this.#queue.push({ error });
    this.#wake?.();
    return this;
  }
  get aborted(): boolean {
    return this.signal?.aborted ?? false;
  }
  attach(signal: AbortSignal | undefined): void {
    this.signal = signal;
    signal?.addEventListener("abort", () => this.#wake?.(), { once: true });
  }
  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    while (!this.#done) {
      if (this.signal?.aborted) return;
      const item = this.#queue.shift();
      if (!item) {
        await new Promise<void>((r) => (this.#wake = r));
        this.#wake = undefined;
        continue;
      }
      if ("ev" in item) yield item.ev;
      else if ("end" in item) this.#done = true;
      else throw item.error;
    }
  }
}

export interface FakeKube extends KubeClient {
  readonly calls: RecordedCall[];
  answerList(a: Answer<KubeList>): void;
  answerWatch(a: Answer<WatchScript>): void;
  /** Stored objects by "plural/namespace/name". */
  readonly objects: Map<string, KubeObject>;
  /** Return an error to make a call fail. */
  failWith: ((method: string, rt: ResourceType, name?: string) => Error | undefined) | undefined;
}

export const objKey = (rt: ResourceType, ns: string | undefined, name: string | undefined) =>
  `${rt.plural}/${ns ?? ""}/${name ?? ""}`;

export function createFakeKube(now: () => number = () => 0): FakeKube {
  const lists = new AnswerQueue<KubeList>();
  const watches = new AnswerQueue<WatchScript>();
  const objects = new Map<string, KubeObject>();
  const calls: RecordedCall[] = [];
  let rvCounter = 100;
  const record = (method: string, rt: ResourceType, args: Record<string, unknown>) =>
    calls.push({ method, rt, at: now(), args });
  const check = (method: string, rt: ResourceType, name?: string) => {
    const e = fake.failWith?.(method, rt, name);
    if (e) throw e;
  };
  const notFound = (rt: ResourceType, name?: string) =>
    new KubeError("NotFound", `${rt.plural} "${name}" not found`, 404);
  const clone = <T>(o: T): T => structuredClone(o);

  const fake: FakeKube = {
    server: "https://fake",
    context: "fake",
    namespace: "default",
    calls,
    objects,
    failWith: undefined,
    answerList: (a) => lists.give(a),
    answerWatch: (a) => watches.give(a),
    async list<T extends KubeObject>(rt: ResourceType, opts: ListOptions = {}) {
      record("list", rt, { ...opts });
      return (await lists.take(opts.signal)) as KubeList<T>;
    },
    async listAll() {
      throw new Error("fake: listAll is not scripted");
    },
    async watch<T extends KubeObject>(rt: ResourceType, opts: Parameters<KubeClient["watch"]>[1]) {
      record("watch", rt, { ...opts });
      const script = await watches.take(opts.signal);
      script.attach(opts.signal);
      return script as unknown as AsyncIterable<WatchEvent<T>>;
    },
    async get<T extends KubeObject>(rt: ResourceType, name: string, ns?: string) {
      record("get", rt, { name, namespace: ns });
      check("get", rt, name);
      const o = objects.get(objKey(rt, ns, name));
      if (!o) throw notFound(rt, name);
      return clone(o) as T;
    },
    async create<T extends KubeObject>(rt: ResourceType, obj: T) {
      record("create", rt, { obj: clone(obj) });
      check("create", rt, obj.metadata.name);
      const k = objKey(rt, obj.metadata.namespace, obj.metadata.name);
      if (objects.has(k))
        throw new KubeError("AlreadyExists", `${rt.plural} "${obj.metadata.name}" already exists`, 409);
      const stored = {
        ...clone(obj),
        metadata: { ...clone(obj.metadata), resourceVersion: String(++rvCounter), uid: `uid-${rvCounter}` },
      };
      objects.set(k, stored);
      return clone(stored) as T;
    },
    async replace<T extends KubeObject>(rt: ResourceType, obj: T) {
      record("replace", rt, { obj: clone(obj) });
      check("replace", rt, obj.metadata.name);
      const k = objKey(rt, obj.metadata.namespace, obj.metadata.name);
      const cur = objects.get(k);
      if (!cur) throw notFound(rt, obj.metadata.name);
      if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== cur.metadata.resourceVersion) {
        throw new KubeError(
          "Conflict",
          `the object has been modified; please apply your changes to the latest version`,
          409,
        );
      }
      const stored = { ...clone(obj), metadata: { ...clone(obj.metadata), resourceVersion: String(++rvCounter) } };
      objects.set(k, stored);
      return clone(stored) as T;
    },
    async replaceStatus() {
      throw new Error("fake: replaceStatus is not scripted");
    },
    async patch<T extends KubeObject>(
      rt: ResourceType,
      name: string,
      ns: string | undefined,
      patch: unknown,
      type: string,
    ) {
      record("patch", rt, { name, namespace: ns, patch: clone(patch), type });
      check("patch", rt, name);
      const k = objKey(rt, ns, name);
      const cur = objects.get(k);
      if (!cur) throw notFound(rt, name);
      const stored = {
        ...cur,
        ...(patch as object),
        metadata: { ...cur.metadata, resourceVersion: String(++rvCounter) },
      } as KubeObject;
      objects.set(k, stored);
      return clone(stored) as T;
    },
    async apply() {
      throw new Error("fake: apply is not scripted");
    },
    async delete(rt, name, ns) {
      record("delete", rt, { name, namespace: ns });
      check("delete", rt, name);
      if (!objects.delete(objKey(rt, ns, name))) throw notFound(rt, name);
    },
    async raw() {
      throw new Error("fake: raw is not scripted");
    },
  };
  return fake;
}
