/**
 * What the operator's caches keep of each object: the transforms on ingest (runtime/informer.ts `transform`,
 * client-go `SetTransform`), applied to every LIST item and watch event before it is stored or handed to a handler.
 *
 * Properties:
 * - Ours, kept whole but for two fields: a Deployment or Service is ours iff its controller owner reference is a
 *   WebApp of our group (`isWebAppChild`). That is the test the controller's owns() mapping uses, so every object
 *   that can enqueue a WebApp is whole. (Not "labelled managed-by *and* controlled": a child whose label someone
 *   removed is still compared by the reconciler, which must see its spec to report and re-apply only the label.)
 *   The reconciler (diff.ts needsApply: labels, annotations, ownerReferences, spec), the status computation
 *   (status.ts, readiness/: spec.replicas, the pod template's image, generation, status) and the orphan collector
 *   (labels, owner references, deletionTimestamp) read nothing else.
 * - managedFields: of our children, each entry is kept as `manager`, `operation` and `subresource` only, in the
 *   order received (ownership.ts patches an entry by its index); the `fieldsV1` sets, about 40% of a child's JSON,
 *   are dropped. Equal entries are one shared frozen object, and so are equal lists of them (a few distinct ones
 *   exist across a whole cluster).
 *   WebApps and someone else's objects keep none. The `kubectl.kubernetes.io/last-applied-configuration`
 *   annotation (a second copy of a kubectl-applied object) is dropped from every object.
 * - Someone else's objects (every Deployment and Service of a watched namespace is cached, so that a cache miss
 *   means "no such object") keep identity metadata only: name, namespace, uid, resourceVersion, generation,
 *   labels, ownerReferences, deletionTimestamp — enough to report a name conflict (status.ts
 *   resourceExistsProblem), to recognise a previous incarnation's child (adopt.ts, which GETs it before writing)
 *   and for the orphan collector to pass it by. No spec, status or annotations.
 * - The status of our children: what the operator reads of it, as its kind says (child-kinds.ts `statusRead`,
 *   built with keepStatus): a Deployment's replica counts and its Available, Progressing and ReplicaFailure
 *   conditions, an autoscaler's counts and ScalingActive, an Ingress's whole status, none of a Service or a
 *   PodDisruptionBudget. Conditions keep type, status, reason and message. Times, the autoscaler's metrics and the
 *   budget's counts are read by nobody here. Measured with 2,000 production-shaped WebApps (their children made
 *   by the bench's builders, ReplicaSets blocked by a quota) on a fresh start: 1 MiB less live heap, of 27.
 * - WebApps are kept whole but for managedFields and the last-applied annotation.
 * - Equal values are one frozen instance: in our children's spec and status and in a WebApp's spec and status, each
 *   object or array that mentions nothing of its WebApp's name (a probe, resources, a port list, a secret reference,
 *   a condition, an autoscaler's counts) is shared with every equal one cached (`shared`, bounded).
 * - The children of one WebApp share what they have alike and nothing else has: one frozen list of owner references
 *   and one frozen label map, wherever the map appears (each child's labels, the selectors, the pod template's
 *   labels: up to nine copies per WebApp). Found by the WebApp's uid (`familyOf`, bounded); a child whose labels or
 *   references differ (someone edited them) keeps its own.
 * - Measured (10,000 WebApps' objects LISTed from a bench fixture, shaped, JS heap after a full collection, per
 *   WebApp; 2026-12-06): production shape 7,718 -> 5,222 B, seed shape 3,849 -> 2,695 B. Of that, the families and
 *   the managedFields lists 1,126 and 264 B; the rest is `shared` no longer filling up (before, a bounded table that
 *   stopped taking values when full: 10,000 WebApps' conditions, each with its own times, filled it, and nothing
 *   offered later was shared, e.g. every Deployment's new template after an image change).
 * - Pure but for freezing: the result shares the input's nested values (they are freshly parsed JSON), and those it
 *   shares between WebApps are frozen; nothing else of the input is changed. "Frozen" holds for objects; arrays are
 *   frozen under bun test only (FREEZE_ARRAYS: a frozen array costs JavaScriptCore 160 B more), read-only by
 *   convention in the operator.
 * - Verified children go without their spec. Once a pass has compared a cached child of ours with its intent and
 *   found it carrying it (converge.ts), the cache swaps it (store.ts `swap`, the same resourceVersion) for
 *   `verifiedChild`: no spec, stamped with what it was compared against (converge.ts `intentStamp`: the intent and
 *   the admission records of its kind). Invariant: a child carrying a stamp is, at its resourceVersion, what a pass
 *   with an intent of that stamp would not write. A pass whose intent has that stamp writes nothing and compares
 *   nothing; one with another stamp reads the child whole (one GET); any newer version of the child comes whole from
 *   the watch and is compared again. Not the Deployment (child-kinds.ts `keepsSpec`). Measured (10,000 WebApps'
 *   children built by the operator's builders with the API server's defaults and a status, shaped, JS heap after a
 *   full collection, per WebApp, their WebApps not counted; 2026-12-07): production shape 3,716 -> 2,809 B, seed
 *   shape 1,831 -> 1,638 B.
 */
import type { WebAppObject } from "../api/webapp.ts";
import type { KubeObject, ObjectMeta, OwnerReference } from "../kube/types.ts";
import { Generations } from "../runtime/generations.ts";
import { isRecord, webAppControllerOf } from "./diff.ts";
import type { ManagerEntry } from "./ownership.ts";

export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/** The controller owner reference is a WebApp of our group (any uid: a previous incarnation's child too). */
export function isWebAppChild(obj: Pick<KubeObject, "metadata">): boolean {
  return webAppControllerOf(obj) !== undefined;
}

/** What of a child's status the operator reads; undefined: nothing (child-kinds.ts `statusRead`). */
export type StatusRead = (status: Record<string, unknown>) => Record<string, unknown> | undefined;

/**
 * A child as the cache keeps it: when ours, whole but for managedFields' field sets, the last-applied annotation
 * and the status `statusRead` leaves out (default: the whole status); identity metadata only when not ours.
 */
export function shapeChild(obj: KubeObject, statusRead?: StatusRead): KubeObject {
  const owner = webAppControllerOf(obj);
  if (!owner) return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: identity(obj.metadata) };
  const { status, ...rest } = obj;
  const kept = statusRead && isRecord(status) ? statusRead(status) : status;
  const metadata = withoutBulk(obj.metadata, managerEntries);
  const family = familyOf(owner.uid, metadata);
  if (metadata.ownerReferences && sameList(metadata.ownerReferences, family.ownerReferences))
    metadata.ownerReferences = family.ownerReferences as OwnerReference[];
  if (metadata.labels && isFamilyLabels(metadata.labels, family)) metadata.labels = family.labels;
  return {
    ...rest,
    ...(rest.spec !== undefined ? { spec: shared(rest.spec, owner.name, family) } : {}),
    metadata,
    ...(kept !== undefined ? { status: shared(kept, owner.name) } : {}),
  };
}

/**
 * What the children of one WebApp have alike and nothing else has (it names the WebApp): the owner references and
 * the label map, one frozen instance for all its cached children, which hold them up to nine times (metadata,
 * selectors, the pod template). Keyed by the WebApp's uid, first seen on one of its children.
 */
interface Family {
  ownerReferences: readonly OwnerReference[];
  labels: Readonly<Record<string, string>> | undefined;
  /** The keys of `labels`, in order. */
  labelKeys: readonly string[];
}

/** Families by WebApp uid; a dropped family stays shared by the children that hold it, later ones start anew. */
const families = new Generations<Family>(32_768);

function familyOf(uid: string, meta: ObjectMeta): Family {
  const known = families.get(uid);
  if (known) return known;
  const family = {
    ownerReferences: freezeShared((meta.ownerReferences ?? []).map((r) => Object.freeze({ ...r }))),
    labels: meta.labels ? Object.freeze({ ...meta.labels }) : undefined,
    labelKeys: Object.keys(meta.labels ?? {}),
  };
  families.set(uid, family);
  return family;
}

/** `map` equals the family's label map: the same keys in the same order, the same strings. */
function isFamilyLabels(map: object, family: Family): family is Family & { labels: Record<string, string> } {
  const labels = family.labels;
  if (labels === undefined) return false;
  if (map === labels) return true;
  let i = 0;
  for (const k in map) {
    if (k !== family.labelKeys[i++] || (map as Record<string, unknown>)[k] !== labels[k]) return false;
  }
  return i === family.labelKeys.length;
}

/** Equal lists of flat records: same keys in the same order, equal scalars. */
function sameList(a: readonly object[], b: readonly object[]): boolean {
  return (
    a.length === b.length && a.every((x, i) => sameMap(x as Record<string, unknown>, b[i] as Record<string, unknown>))
  );
}

/** Equal flat records: same keys in the same order, equal scalar values. */
function sameMap(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  if (a === b) return true;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k] && typeof a[k] !== "object");
}

/**
 * A statusRead that keeps these top-level `fields` and the conditions of these `types`, each as type, status,
 * reason and message (no times: nothing here reads them).
 */
export function keepStatus(fields: readonly string[], types: readonly string[]): StatusRead {
  return (status) => {
    const out: Record<string, unknown> = {};
    for (const f of fields) if (status[f] !== undefined) out[f] = status[f];
    const conditions = Array.isArray(status.conditions)
      ? status.conditions.filter((c) => isRecord(c) && types.includes(c.type as string)).map(conditionRead)
      : [];
    if (conditions.length > 0) out.conditions = conditions;
    return out;
  };
}

function conditionRead(c: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of CONDITION_READ) if (c[f] !== undefined) out[f] = c[f];
  return out;
}

const CONDITION_READ = ["type", "status", "reason", "message"] as const;

/**
 * The stamp a verified child carries (see the module doc): a symbol-keyed property that is not enumerable, so no copy
 * (a spread) or JSON of the child carries it on: only the cached instance claims what it was compared against.
 */
const VERIFIED: unique symbol = Symbol("verified against the intent of this stamp");

/** `obj` (a cached child of ours) as kept once found carrying the intent of `stamp`: without its spec, stamped. */
export function verifiedChild(obj: KubeObject, stamp: number): KubeObject {
  const { spec: _dropped, ...rest } = obj;
  return Object.defineProperty(rest, VERIFIED, { value: stamp });
}

/** The stamp of a verified child (verifiedChild); undefined for a child kept whole. */
export function verifiedStamp(obj: KubeObject): number | undefined {
  return (obj as { [VERIFIED]?: number })[VERIFIED];
}

/** An object only its name (and identity) matters of, e.g. an IngressClass: cached as that alone. */
export function nameOnly(obj: KubeObject): KubeObject {
  const { name, uid, resourceVersion } = obj.metadata;
  return { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name, uid, resourceVersion } };
}

/** A WebApp as the cache keeps it: without managedFields and the last-applied annotation. */
export function shapeWebApp<T extends WebAppObject>(obj: T): T {
  const name = obj.metadata.name ?? "";
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj))
    out[key] = key === "metadata" ? withoutBulk(obj.metadata) : shared(value, name);
  return out as T;
}

/**
 * `value` with every object and array in it that does not mention `name` (the WebApp's, so nothing per WebApp is
 * offered) replaced by one frozen instance per distinct value: a probe, the resources, a port list, the Deployment's
 * Available condition are the same in most WebApps' children. Bottom-up; an object is offered only when all of its
 * members were shared, under a key of its scalars and its members' ids (never reused), so equal keys mean equal
 * values. The table is two generations of 4,096 values (runtime/generations.ts): values in use stay, others go.
 * Measured (the objects the API server returned for a seed-shaped and a production-shaped WebApp, made 10,000 WebApps'
 * with their own names, uids and resourceVersions, parsed and shaped; JS heap after a full collection): seed shape
 * 3,537 -> 2,251 B per WebApp (-36%), production shape 7,819 -> 5,758 B (-26%). It costs about 8 µs per
 * Deployment event (shaping took 1-2 µs, the parse 3-4 µs): about 1% of the operator's CPU per converged WebApp.
 */
function shared(value: unknown, name: string, family?: Family): unknown {
  return share(value, name, family)[0];
}

interface SharedValue {
  value: object;
  id: number;
}

const sharedValues = new Generations<SharedValue>(4_096);
/** The next shared value's id: ids are never reused, so a key made of ids names one value for good. */
let nextId = 0;

/** [the value or its shared equal, the shared instance's id, or undefined when it is not shared]. */
function share(value: unknown, name: string, family?: Family): [unknown, number | undefined] {
  if (typeof value !== "object" || value === null) return [value, undefined];
  if (Object.isFrozen(value)) return [value, undefined]; // interned already (managedFields entries) or a stored value
  const array = Array.isArray(value);
  let key = array ? "[" : "{";
  let shareable = true;
  let copy: Record<string, unknown> | unknown[] | undefined;
  let members = 0;
  let strings = 0;
  for (const k of Object.keys(value)) {
    members++;
    const member = (value as Record<string, unknown>)[k];
    let part: string | undefined;
    if (typeof member === "object" && member !== null) {
      const [v, id] = share(member, name, family);
      if (v !== member) {
        copy ??= array ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) };
        (copy as Record<string, unknown>)[k] = v;
      }
      part = id === undefined ? undefined : `#${id};`;
    } else if (typeof member === "string") {
      strings++;
      part = member.includes(name) ? undefined : `s${member.length}:${member}`;
    } else part = `${typeof member}${member};`;
    if (part === undefined) shareable = false;
    else if (shareable) key += array ? part : `${k.length}:${k}${part}`;
  }
  const out = (copy ?? value) as object;
  if (!shareable)
    return [family && !array && strings === members && isFamilyLabels(out, family) ? family.labels : out, undefined];
  const known = sharedValues.get(key);
  if (known) return [known.value, known.id];
  const entry = { value: freezeShared(out), id: nextId++ };
  sharedValues.set(key, entry);
  return [entry.value, entry.id];
}

/**
 * Arrays are frozen under `bun test` only, where a pass that changed a shared value would fail: JavaScriptCore gives
 * every array with an integrity level (frozen, sealed, not extensible) a sparse-array map of its own, +160 B per array
 * (measured: a one-element array of owner references, 207 -> 367 B). A fresh start over 10,000 production-shaped
 * WebApps held 20,482 of them (heap statistics by object type, 2026-12-07): each family's owner references and
 * each WebApp's conditions (distinct by their times). Objects are frozen everywhere.
 */
const FREEZE_ARRAYS = process.env.NODE_ENV === "test";

function freezeShared<T extends object>(value: T): T {
  return Array.isArray(value) && !FREEZE_ARRAYS ? value : Object.freeze(value);
}

/** Metadata without the last-applied annotation, managedFields as `fields` makes them (none by default). */
function withoutBulk(meta: ObjectMeta, fields: (m: unknown[]) => unknown[] | undefined = () => undefined): ObjectMeta {
  const out: ObjectMeta = {};
  for (const key of Object.keys(meta) as (keyof ObjectMeta)[]) {
    if (key === "managedFields") {
      const kept = Array.isArray(meta.managedFields) ? fields(meta.managedFields) : undefined;
      if (kept) out.managedFields = kept;
      continue;
    }
    if (key === "annotations") {
      const annotations = withoutLastApplied(meta.annotations);
      if (annotations) out.annotations = annotations;
      continue;
    }
    (out as Record<string, unknown>)[key] = meta[key];
  }
  return out;
}

function withoutLastApplied(a: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!a || !(LAST_APPLIED_ANNOTATION in a)) return a;
  const { [LAST_APPLIED_ANNOTATION]: _dropped, ...rest } = a;
  return Object.keys(rest).length > 0 ? rest : undefined;
}

function identity(meta: ObjectMeta): ObjectMeta {
  const { name, namespace, uid, resourceVersion, generation, labels, ownerReferences, deletionTimestamp } = meta;
  const out: ObjectMeta = { name, namespace, uid, resourceVersion };
  if (generation !== undefined) out.generation = generation;
  if (labels) out.labels = labels;
  if (ownerReferences) out.ownerReferences = ownerReferences;
  if (deletionTimestamp) out.deletionTimestamp = deletionTimestamp;
  return out;
}

/** One frozen object per distinct (manager, operation, subresource); bounded by the managers a cluster runs. */
const internedEntries = new Map<string, ManagerEntry>();
const MAX_INTERNED = 1_000;

/** One frozen list per distinct sequence of entries (a few per cluster: who writes a child, in what order). */
const internedLists = new Map<string, readonly ManagerEntry[]>();

/** Each entry reduced to what ownership.ts reads, in order; the list interned. */
function managerEntries(entries: unknown[]): ManagerEntry[] {
  const list = entries.map(managerEntry);
  const key = list.map((e) => `${e.manager}\u0000${e.operation}\u0000${e.subresource}`).join("\u0001");
  const known = internedLists.get(key);
  if (known) return known as ManagerEntry[];
  if (internedLists.size < MAX_INTERNED) internedLists.set(key, Object.freeze(list));
  return list;
}

function managerEntry(e: unknown): ManagerEntry {
  const { manager, operation, subresource } = (typeof e === "object" && e !== null ? e : {}) as ManagerEntry;
  const key = `${manager}\u0000${operation}\u0000${subresource}`;
  const known = internedEntries.get(key);
  if (known) return known;
  const entry: ManagerEntry = Object.freeze({
    ...(typeof manager === "string" ? { manager } : {}),
    ...(typeof operation === "string" ? { operation } : {}),
    ...(typeof subresource === "string" ? { subresource } : {}),
  });
  if (internedEntries.size < MAX_INTERNED) internedEntries.set(key, entry);
  return entry;
}
