/**
 * The reconciler's two memories, each bounded and expiring: what this process wrote recently that its caches may
 * not show yet (WrittenChildren, client-go's controller expectations), so that a reconcile running before the
 * watch delivered our own write neither writes again nor asks the API server; and what it knows of a WebApp that
 * its cache does not say (WebAppMemory: one record per WebApp uid, each field with its invariant).
 *
 * Properties:
 * - Bounded: every memory forgets an entry after its time to live (on the injected clock) and holds at most
 *   `max` entries (the oldest go first); expired entries are dropped whenever the memory is used, so the
 *   keys of deleted WebApps do not accumulate.
 * - The cache wins as soon as it has caught up: a remembered child is used only while the cache has an older
 *   version of the same object (same uid, lower resourceVersion), or nothing under its key when we created it;
 *   a cached object with another uid, or as new or newer, drops the entry, and so does an empty cache under the
 *   key of one we only updated (it was deleted since). So does the API server answering NotFound or Conflict
 *   about a remembered child (contradicted()).
 * - The watch wins too (client-go's CreationObserved/DeletionObserved): every event of a child is told to
 *   observed(), so a creation the watch delivered, and deleted, before any pass ran is never stood in for by the
 *   memory of it, whichever of the create's answer and the events came first.
 */
import { isConflict, isNotFound } from "../kube/errors.ts";
import type { KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import { ExpiringMap } from "../runtime/expiring-map.ts";
import type { AdmittedField } from "./admission.ts";
import { shapeChild, type StatusRead } from "./cache-shape.ts";

/** How long a written child stands in for a cache that has not shown it (the watch normally takes < 1 s). */
export const WRITTEN_TTL_MS = 30_000;
/** How long a WebApp counts as "had a child created by this process" (see children.ts, the owner check). */
export const CREATED_TTL_MS = 60_000;
/** How long a WebApp's record lives after it was last set: its longest-lived field, admission records. */
export const WEBAPP_MEMORY_TTL_MS = 10 * 60_000;
/** At most this many entries per memory (a burst of creations beyond it forgets the oldest first). */
const MAX_ENTRIES = 10_000;

/** The children this process created or updated, by "namespace/name", as the API server returned them. */
export class WrittenChildren {
  /** An entry is a write whose result the watch has not delivered yet (observed() drops it once it has). */
  readonly #written: ExpiringMap<{ obj: KubeObject; created: boolean }>;
  /** uids of children the watch delivered as deleted: never remembered or stood in for (a uid never comes back). */
  readonly #deleted: ExpiringMap<true>;

  constructor(clock: Clock, ttlMs = WRITTEN_TTL_MS, max = MAX_ENTRIES) {
    this.#written = new ExpiringMap(clock, ttlMs, max);
    this.#deleted = new ExpiringMap(clock, ttlMs, max);
  }

  /**
   * A watch event of a child (`deleted`: its deletion): the cache shows this state now. A remembered write of the
   * same object is forgotten once the event is as new as it, or is its deletion.
   */
  observed(obj: KubeObject, deleted: boolean): void {
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const uid = obj.metadata.uid;
    if (deleted && uid !== undefined) this.#deleted.set(uid, true);
    const mine = this.#written.get(key);
    if (!mine || mine.obj.metadata.uid !== uid) return;
    if (deleted || !isOlder(obj, mine.obj)) this.#written.delete(key);
  }

  get size(): number {
    return this.#written.size;
  }

  /**
   * Remembers what a write returned, shaped as the cache keeps a child of ours (cache-shape.ts): managedFields
   * reduced to manager and operation, which the ownership handover reads (ownership.ts), field sets dropped, and
   * the status as its kind's `statusRead` keeps it.
   * `created`: the write made the object, so the cache may not show it yet; a later write of the same object
   * (same uid) while that is still remembered keeps it so.
   */
  remember(key: string, obj: KubeObject, created: boolean, statusRead?: StatusRead): void {
    if (obj.metadata.uid !== undefined && this.#deleted.get(obj.metadata.uid)) return; // the watch saw it go
    const before = this.#written.get(key);
    const stillUnseen = before?.created === true && before.obj.metadata.uid === obj.metadata.uid;
    this.#written.set(key, { obj: shapeChild(obj, statusRead), created: created || stillUnseen });
  }

  /**
   * The object to converge from: the cached one once the cache shows our write (or anything newer), else the
   * one we wrote. With nothing cached, only a creation stands (the cache has not shown it yet); an object we
   * updated that the cache no longer has was deleted since (the chaos soak's app-038: its Service, updated while
   * the watch was down, was gone in the re-list, and the remembered update hid that until it expired, when no
   * event was left to reconcile it again). A creation deleted before the cache ever showed it is forgotten when
   * the watch delivers the deletion (observed()), or the API server contradicts it (contradicted()).
   */
  resolve(key: string, cached: KubeObject | undefined): KubeObject | undefined {
    const mine = this.#written.get(key);
    if (!mine) return cached;
    if (mine.obj.metadata.uid !== undefined && this.#deleted.get(mine.obj.metadata.uid)) {
      this.#written.delete(key);
      return cached;
    }
    if (!cached && mine.created) return mine.obj;
    // The cache shows a version from before our write: of the same object, or (our write created it again) of the
    // one it replaced, which the watch has not said is gone (the chaos soak of 2026-12-07: applied with that one's
    // uid, refused as "field is immutable").
    const same = cached?.metadata.uid === mine.obj.metadata.uid;
    if (cached && (same || mine.created) && isOlder(cached, mine.obj)) return mine.obj;
    this.#written.delete(key);
    return cached;
  }

  /**
   * Forgets what was written under `key` when the API server contradicts it (NotFound: the child was deleted
   * before the cache showed our write; Conflict: it changed or was re-created since), and says whether it
   * did: the child is then converged from the cache, which shows what happened or will, instead of failing
   * on the stale memory until it expires.
   */
  contradicted(key: string, error: unknown): boolean {
    if (this.#written.get(key) === undefined || !(isNotFound(error) || isConflict(error))) return false;
    this.#written.delete(key);
    return true;
  }
}

/** What this process knows of one WebApp (by uid: a uid never comes back) that its cache does not show. */
export interface WebAppMemo {
  /** When it last created a child for this WebApp: a creation within CREATED_TTL_MS may be a re-creation. */
  createdAt?: number;
  /** The API server said this WebApp is gone (or being deleted): nothing is created for its uid again. */
  gone?: true;
  /** Its workload was created and announced with the others as next: their pass is their first creation. */
  othersNext?: true;
  /** When a pass that wrote a child left its status to the next pass: within WRITTEN_TTL_MS that one writes it. */
  statusLeftAt?: number;
  /** Admission records (admission.ts) a pass computed that the cached status does not carry yet. */
  admitted?: AdmittedField[];
}

/** WebAppMemo by WebApp uid: an entry lives WEBAPP_MEMORY_TTL_MS after it was last changed, at most MAX_ENTRIES. */
export class WebAppMemory {
  readonly #clock: Clock;
  readonly #memos: ExpiringMap<WebAppMemo>;

  constructor(clock: Clock) {
    this.#clock = clock;
    this.#memos = new ExpiringMap(clock, WEBAPP_MEMORY_TTL_MS, MAX_ENTRIES);
  }

  get(uid: string | undefined): Readonly<WebAppMemo> {
    return (uid === undefined ? undefined : this.#memos.get(uid)) ?? {};
  }

  /**
   * Sets (a value) or clears (undefined) the given fields of a WebApp's record. A set that changes nothing leaves the
   * record as it is, its time to live too: a pass over a WebApp does not keep its record alive.
   */
  set(uid: string | undefined, fields: { [K in keyof WebAppMemo]?: WebAppMemo[K] | undefined }): void {
    if (uid === undefined) return;
    const before: Record<string, unknown> = { ...this.#memos.get(uid) };
    const memo: Record<string, unknown> = { ...before, ...fields };
    for (const [k, v] of Object.entries(memo)) if (v === undefined) delete memo[k];
    const keys = Object.keys(memo);
    if (keys.length === Object.keys(before).length && keys.every((k) => memo[k] === before[k])) return;
    if (keys.length === 0) this.#memos.delete(uid);
    else this.#memos.set(uid, memo as WebAppMemo);
  }

  /** This process created a child for the WebApp now. */
  created(uid: string | undefined): void {
    this.set(uid, { createdAt: this.#clock.now() });
  }

  /** This process created a child for the WebApp within CREATED_TTL_MS. */
  createdRecently(uid: string | undefined): boolean {
    const at = this.get(uid).createdAt;
    return at !== undefined && this.#clock.now() - at < CREATED_TTL_MS;
  }

  /** A pass left the WebApp's status to the next pass within WRITTEN_TTL_MS. */
  statusLeft(uid: string | undefined): boolean {
    const at = this.get(uid).statusLeftAt;
    return at !== undefined && this.#clock.now() - at < WRITTEN_TTL_MS;
  }
}

/**
 * True iff `a` is an older version of the same object than `b`. resourceVersions are opaque to clients in
 * general; etcd's are integers, and anything else reads as "not older" (the cache wins: at worst one more apply).
 */
function isOlder(a: KubeObject, b: KubeObject): boolean {
  const x = Number(a.metadata.resourceVersion);
  const y = Number(b.metadata.resourceVersion);
  return Number.isSafeInteger(x) && Number.isSafeInteger(y) && x < y;
}
