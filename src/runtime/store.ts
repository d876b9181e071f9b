/**
 * The cache of one resource type, fed by a watcher (kube-rs `reflector::Store`, client-go `Indexer`).
 *
 * Properties:
 * - Keyed: objects are stored by `namespace/name` (`name` for cluster-scoped objects), see `objectKey`.
 * - Read-only: callers never mutate a cached object (copy first, e.g. `structuredClone`, to build a change).
 *   Enforced at the top by default ("shallow"): the object, its metadata, spec and status are frozen, so an
 *   assignment to one of their fields throws; what lies deeper (labels, containers, conditions) is read-only by
 *   contract only. Until issue #11 every object was deep-frozen: measured over real Deployments, Services and
 *   WebApps, that cost 6-13 µs per object stored (6% of the operator's CPU while converging) and ~500 bytes of
 *   heap per object (JSC turns a frozen array into a slower, larger representation), where "shallow" costs
 *   0.4 µs and no heap. "deep" is still there for tests that want to catch a stray write anywhere.
 * - Indexed on request only: `addIndex(name, fn)` indexes what is already stored and everything after, e.g.
 *   `addIndex(NAMESPACE_INDEX, namespaceIndex)` or `addIndex(CONTROLLER_INDEX, controllerIndex)` (UID of the
 *   controller owner reference). Indexes always match the objects. A store starts with none: each index holds a
 *   Set per value (one per child, for the controller index) and the operator looks nothing up by index; measured
 *   with 2,000 production-shaped WebApps, the two that every store used to carry were 3 MiB of live heap of 30.
 * - Delta-producing: every write returns what changed, so the informer can tell handlers after the store is
 *   updated. `apply` of an object whose resourceVersion is unchanged is not a change.
 * - Gap-safe: `replace(list)` (a re-list) swaps in the complete list and reports a delete for every stored
 *   object missing from it — deletes that happened while the watch was down are delivered, and nothing stale
 *   stays (the client-node #494 leak). Objects whose resourceVersion did not change produce no delta.
 * - Reshaped in place on request: `swap(current, replacement)` stores another representation of the object it holds
 *   (the same version, kept smaller: operator/cache-shape.ts `verifiedChild`) iff it still holds that very instance.
 *   Not a change, so no delta: nothing anyone watches for moved. The replacement must keep what indexes read.
 */
import { objectKey } from "./reconcile.ts";
import type { KubeObject } from "../kube/types.ts";

export type Delta<T> =
  | { type: "add"; object: T; old?: undefined }
  | { type: "update"; object: T; old: T }
  | { type: "delete"; object: T; old?: T };

/** Index function: the index values of an object (none, one or several). */
export type IndexFn<T> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = "namespace";
export const CONTROLLER_INDEX = "controller";

/** "namespace/name", or "name" for a cluster-scoped object: the same key as reconcile requests use. */
export { objectKey };

/** UID of the owner reference marked controller: true, if any. */
export function controllerUid(obj: Pick<KubeObject, "metadata">): string | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true)?.uid;
}

export interface Store<T extends KubeObject> {
  get(key: string): T | undefined;
  list(): T[];
  readonly size: number;
  /** Adds an index; objects already stored are indexed at once. Throws if the name is taken. */
  addIndex(name: string, fn: IndexFn<T>): void;
  /** Objects whose index `name` contains `value`. Throws for an unknown index (a programming error). */
  byIndex(name: string, value: string): T[];
  /** Stores an added or modified object; undefined when its resourceVersion is already stored. */
  apply(obj: T): Delta<T> | undefined;
  /** Removes an object; the delta carries the final state received and the stored one as `old`. */
  delete(obj: T): Delta<T>;
  /** Swaps in a complete list; the deltas turn the old content into the new one. */
  replace(objects: readonly T[]): Delta<T>[];
  /** Stores `replacement` (the same version) in place of `current` iff that instance is still stored; no delta. */
  swap(current: T, replacement: T): boolean;
}

/** "shallow": the object and its metadata, spec and status, one level each; "deep": everything; "none". */
export type FreezeMode = "shallow" | "deep" | "none";

export interface StoreOptions {
  /** How stored objects are frozen. Default "shallow" (see the module doc). */
  freeze?: FreezeMode;
}

export function createStore<T extends KubeObject>(opts: StoreOptions = {}): Store<T> {
  return new IndexedStore<T>(FREEZERS[opts.freeze ?? "shallow"]);
}

/** The NAMESPACE_INDEX function: an object's namespace (none for a cluster-scoped one). */
export const namespaceIndex: IndexFn<KubeObject> = (o) => (o.metadata.namespace ? [o.metadata.namespace] : []);

/** The CONTROLLER_INDEX function: the UID of its controller owner reference, if any. */
export const controllerIndex: IndexFn<KubeObject> = (o) => {
  const uid = controllerUid(o);
  return uid ? [uid] : [];
};

class IndexedStore<T extends KubeObject> implements Store<T> {
  readonly #freeze: <V>(obj: V) => V;
  /** By objectKey(obj). */
  readonly #objects = new Map<string, T>();
  /** index name -> index value -> keys. Invariant: key k is under value v iff #fns[name](#objects[k]) includes v. */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();
  readonly #fns = new Map<string, IndexFn<T>>();

  constructor(freeze: <V>(obj: V) => V) {
    this.#freeze = freeze;
  }

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }
  list(): T[] {
    return [...this.#objects.values()];
  }
  get size(): number {
    return this.#objects.size;
  }

  addIndex(name: string, fn: IndexFn<T>): void {
    if (this.#fns.has(name)) throw new Error(`store: an index named "${name}" already exists`);
    this.#fns.set(name, fn);
    this.#indexes.set(name, new Map());
    for (const [key, obj] of this.#objects) this.#indexOne(name, key, obj, true);
  }

  byIndex(name: string, value: string): T[] {
    const idx = this.#indexes.get(name);
    if (!idx) throw new Error(`store: no index named "${name}" (known: ${[...this.#fns.keys()].join(", ")})`);
    return [...(idx.get(value) ?? [])].map((k) => this.#objects.get(k)!);
  }

  apply(obj: T): Delta<T> | undefined {
    const key = objectKey(obj);
    const old = this.#objects.get(key);
    if (old && sameVersion(old, obj)) return undefined;
    const object = this.#put(key, obj);
    return old ? { type: "update", object, old } : { type: "add", object };
  }

  delete(obj: T): Delta<T> {
    const old = this.#remove(objectKey(obj));
    const object = this.#freeze(obj);
    return old ? { type: "delete", object, old } : { type: "delete", object };
  }

  replace(list: readonly T[]): Delta<T>[] {
    const deltas: Delta<T>[] = [];
    const seen = new Set<string>();
    for (const obj of list) {
      seen.add(objectKey(obj));
      const d = this.apply(obj);
      if (d) deltas.push(d);
    }
    for (const [key, old] of [...this.#objects]) {
      if (seen.has(key)) continue;
      this.#remove(key);
      deltas.push({ type: "delete", object: old, old });
    }
    return deltas;
  }

  swap(current: T, replacement: T): boolean {
    const key = objectKey(current);
    if (this.#objects.get(key) !== current || !sameVersion(current, replacement)) return false;
    this.#put(key, replacement);
    return true;
  }

  #indexOne(name: string, key: string, obj: T, add: boolean): void {
    const idx = this.#indexes.get(name)!;
    for (const v of new Set(this.#fns.get(name)!(obj))) {
      let keys = idx.get(v);
      if (add) {
        if (!keys) idx.set(v, (keys = new Set()));
        keys.add(key);
      } else if (keys) {
        keys.delete(key);
        if (keys.size === 0) idx.delete(v);
      }
    }
  }

  #index(key: string, obj: T, add: boolean): void {
    for (const name of this.#fns.keys()) this.#indexOne(name, key, obj, add);
  }

  #put(key: string, obj: T): T {
    const prev = this.#objects.get(key);
    if (prev) this.#index(key, prev, false);
    const stored = this.#freeze(obj);
    this.#objects.set(key, stored);
    this.#index(key, stored, true);
    return stored;
  }

  #remove(key: string): T | undefined {
    const prev = this.#objects.get(key);
    if (!prev) return undefined;
    this.#index(key, prev, false);
    this.#objects.delete(key);
    return prev;
  }
}

/** Same object version: equal, non-empty resourceVersions. */
export function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const rv = a.metadata.resourceVersion;
  return rv !== undefined && rv !== "" && rv === b.metadata.resourceVersion;
}

const FREEZERS: Record<FreezeMode, <V>(obj: V) => V> = { shallow: freezeTop, deep: deepFreeze, none: (v) => v };

/** The object and its metadata, spec and status (when they are objects), one level each. */
function freezeTop<V>(v: V): V {
  if (v === null || typeof v !== "object" || Object.isFrozen(v)) return v;
  const o = v as Record<string, unknown>;
  for (const part of [o.metadata, o.spec, o.status]) if (part !== null && typeof part === "object") Object.freeze(part);
  return Object.freeze(v);
}

function deepFreeze<V>(v: V): V {
  if (v === null || typeof v !== "object" || Object.isFrozen(v)) return v;
  for (const child of Object.values(v)) deepFreeze(child);
  return Object.freeze(v);
}
