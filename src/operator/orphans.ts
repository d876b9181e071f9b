/**
 * Collects the children kube-controller-manager's garbage collector missed: when a WebApp is deleted while
 * the collector's watches are down (an API-server restart), it may never see the deletion and never delete
 * the dependents (kubernetes/kubernetes#109748; measured by the chaos soak). This does what it would have.
 *
 * Properties:
 * - Narrow: a candidate is a Deployment or Service labelled managed-by=webapp-operator (checked here: the caches
 *   hold every Deployment and Service of the watched namespaces, someone else's too), not being deleted, whose
 *   controller owner reference is a WebApp of our group whose uid no cached WebApp has. Nothing else is ever
 *   deleted.
 * - Confirmed: a GET of the owner's name must answer 404 — names are unique in a namespace, so no object
 *   with that uid exists. A WebApp of that name with another uid is a re-creation: its reconciler adopts
 *   the child (adopt.ts), so the child is left to it.
 * - Patient: a candidate is deleted only after it has been seen orphaned for `graceMs` (the collector
 *   normally deletes it within seconds; we act only where it did not).
 * - Precise: DELETE with preconditions on the child's uid and resourceVersion as cached (a child re-created
 *   meanwhile under the same name, or adopted by a WebApp of that name a moment ago, is never hit), propagation
 *   Background. 404 means someone was faster, 409 that the child changed since: looked at again next sweep.
 * - Accounted for: each deletion is logged and recorded as a Normal event `OrphanDeleted` on the child.
 * - Runs every `intervalMs` until its signal aborts; the manager runs it only while leading.
 */
import { KIND, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { isConflict, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, OwnerReference, ResourceType } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import type { EventSource } from "../runtime/source.ts";
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from "./desired.ts";
import { webAppControllerOf } from "./diff.ts";

export const ORPHAN_SWEEP_MS = 15_000;
export const ORPHAN_GRACE_MS = 30_000;
export const REASON_ORPHAN_DELETED = "OrphanDeleted";

/** The WebApp controller reference of `child` when no live WebApp (by uid) has it, else undefined. */
export function goneOwner(child: KubeObject, liveUids: ReadonlySet<string>): OwnerReference | undefined {
  if (child.metadata.deletionTimestamp || child.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE)
    return undefined;
  const ref = webAppControllerOf(child);
  if (!ref) return undefined;
  return liveUids.has(ref.uid) ? undefined : ref;
}

/** What one sweep did with one candidate. */
export type Collected =
  | { kind: "deleted"; child: string; owner: string }
  | { kind: "waiting"; child: string }
  | { kind: "re-created"; child: string }
  | { kind: "owner-exists"; child: string }
  | { kind: "already-gone"; child: string }
  /** It changed since the cache showed it (adopted, re-created): the precondition failed, nothing was deleted. */
  | { kind: "changed"; child: string };

export interface ChildCache {
  rt: ResourceType;
  source: EventSource<KubeObject>;
}

export interface OrphanCollectorOptions {
  client: KubeClient;
  webapps: EventSource<KubeObject>;
  children: ChildCache[];
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
  intervalMs?: number;
  graceMs?: number;
}

export interface OrphanCollector {
  /** One pass over the caches. */
  sweep(): Promise<Collected[]>;
  /** Sweeps every intervalMs until `signal` aborts; a failed sweep is logged and the next one runs. */
  run(signal: AbortSignal): Promise<void>;
}

export function createOrphanCollector(o: OrphanCollectorOptions): OrphanCollector {
  const intervalMs = o.intervalMs ?? ORPHAN_SWEEP_MS;
  const graceMs = o.graceMs ?? ORPHAN_GRACE_MS;
  /** Child uid -> when it was first seen orphaned; forgotten once it is no candidate any more. */
  const firstSeen = new Map<string, number>();

  async function collect(rt: ResourceType, child: KubeObject, owner: OwnerReference): Promise<Collected> {
    const ns = child.metadata.namespace as string;
    const name = `${rt.kind} ${ns}/${child.metadata.name}`;
    const since = firstSeen.get(child.metadata.uid as string) ?? o.clock.now();
    firstSeen.set(child.metadata.uid as string, since);
    if (o.clock.now() - since < graceMs) return { kind: "waiting", child: name };
    try {
      const live = await o.client.get(WEBAPP_RESOURCE, owner.name, ns);
      return { kind: live.metadata.uid === owner.uid ? "owner-exists" : "re-created", child: name };
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const { uid, resourceVersion } = child.metadata;
    try {
      await o.client.delete(rt, child.metadata.name as string, ns, {
        preconditions: { uid, resourceVersion },
        propagationPolicy: "Background",
      });
    } catch (e) {
      if (isNotFound(e)) return { kind: "already-gone", child: name };
      if (isConflict(e)) return { kind: "changed", child: name };
      throw e;
    }
    firstSeen.delete(child.metadata.uid as string);
    const message =
      `deleted ${name}: its controller ${KIND} ${owner.name} (uid ${owner.uid}) no longer exists ` +
      "and the garbage collector left it behind";
    o.logger.info(message);
    const apiVersion = rt.group ? `${rt.group}/${rt.version}` : rt.version;
    o.recorder.event({ apiVersion, kind: rt.kind, metadata: child.metadata }, "Normal", REASON_ORPHAN_DELETED, message);
    return { kind: "deleted", child: name, owner: `${owner.name} (uid ${owner.uid})` };
  }

  const collector: OrphanCollector = {
    async sweep() {
      if (!o.webapps.hasSynced() || o.children.some((c) => !c.source.hasSynced())) return [];
      const live = new Set(o.webapps.list().map((w) => w.metadata.uid as string));
      const results: Collected[] = [];
      const candidates = new Set<string>();
      for (const { rt, source } of o.children) {
        for (const child of source.list()) {
          const owner = goneOwner(child, live);
          if (!owner) continue;
          candidates.add(child.metadata.uid as string);
          results.push(await collect(rt, child, owner));
        }
      }
      for (const uid of firstSeen.keys()) if (!candidates.has(uid)) firstSeen.delete(uid);
      return results;
    },
    async run(signal) {
      while (!signal.aborted) {
        await o.clock.sleep(intervalMs, signal);
        if (signal.aborted) return;
        try {
          await collector.sweep();
        } catch (e) {
          o.logger.warn("collecting orphaned children failed; trying again at the next sweep", e);
        }
      }
    },
  };
  return collector;
}
