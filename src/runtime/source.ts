/**
 * Event sources and the handlers that turn their events into keys (controller-runtime's `source`
 * and `handler` packages, reduced to what devctl needs).
 *
 * - `EventSource<T>` is what an informer offers a controller: a subscription to add/update/delete
 *   events, whether its cache holds a complete list yet, and that list.
 *   A delete event carries the object's last known state.
 * - An `EventHandler` maps one event to zero or more keys and hands each distinct key to `enqueue`
 *   once per event (an update maps both states, which usually give the same key: enqueueing it twice
 *   could run it twice, as a worker may take the first copy at once).
 * - The built-in handlers enqueue nothing for an object they cannot map (no name, no matching owner).
 *   A handler that throws is logged by the controller and that event is dropped.
 */
import type { KubeObject } from "../kube/types.ts";
import { objectKey } from "./reconcile.ts";

export interface SourceEvent<T> {
  type: "add" | "update" | "delete";
  object: T;
  /** The previous state, on updates. */
  old?: T;
}

export interface EventSource<T> {
  /** Subscribes; returns the unsubscribe function. */
  onEvent(handler: (e: SourceEvent<T>) => void): () => void;
  /** True once the source has delivered its complete initial list. */
  hasSynced(): boolean;
  /** Every object the source knows now. */
  list(): T[];
}

export type EventHandler<T> = (e: SourceEvent<T>, enqueue: (key: string) => void) => void;

/** The kind a controller is for, as owner references name it (a ResourceType fits). */
export interface OwnerKind {
  /** API group ("" for core). Owner references match on group and kind, not version. */
  readonly group: string;
  readonly kind: string;
  /** false for a cluster-scoped owner: its key is its name alone. Default true. */
  readonly namespaced?: boolean;
}

/** Both states of an update, else the one object. */
function statesOf<T>(e: SourceEvent<T>): T[] {
  return e.type === "update" && e.old !== undefined ? [e.old, e.object] : [e.object];
}

/** Enqueues the object's own key (controller-runtime EnqueueRequestForObject). */
export function enqueueForObject<T extends KubeObject>(): EventHandler<T> {
  return (e, enqueue) => {
    const keys = new Set<string>();
    for (const obj of statesOf(e)) if (obj.metadata?.name) keys.add(objectKey(obj));
    for (const k of keys) enqueue(k);
  };
}

/** The group of an apiVersion: "apps/v1" -> "apps", "v1" -> "". */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** The key of obj's controller owner if that owner is of `owner` kind, else undefined. */
export function controllerOwnerKey(obj: KubeObject, owner: OwnerKind): string | undefined {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller === true);
  if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== owner.group || !ref.name) return undefined;
  const ns = obj.metadata.namespace;
  return owner.namespaced === false || !ns ? ref.name : `${ns}/${ref.name}`;
}

/**
 * Enqueues the key of the object's controller owner, when that owner is of `owner` kind
 * (controller-runtime EnqueueRequestForOwner(..., OnlyControllerOwner())). On updates both the old
 * and the new owner are enqueued, so a changed owner reference reaches both.
 */
export function enqueueForOwner<T extends KubeObject>(owner: OwnerKind): EventHandler<T> {
  return (e, enqueue) => {
    const keys = new Set<string>();
    for (const obj of statesOf(e)) {
      const key = controllerOwnerKey(obj, owner);
      if (key !== undefined) keys.add(key);
    }
    for (const k of keys) enqueue(k);
  };
}

/** Enqueues the keys `map` returns (controller-runtime EnqueueRequestsFromMapFunc); old and new on updates. */
export function enqueueMapped<T>(map: (obj: T) => Iterable<string>): EventHandler<T> {
  return (e, enqueue) => {
    const keys = new Set<string>();
    for (const obj of statesOf(e)) for (const key of map(obj)) keys.add(key);
    for (const k of keys) enqueue(k);
  };
}
