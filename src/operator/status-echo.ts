/**
 * The echo of our own status writes: the WebApp update event that carries nothing but the status this process
 * has just written. A pass for it would read the same cache the writing pass read and change nothing, so the
 * controller need not run one (controller-runtime's predicates, applied to one case we can prove).
 *
 * Properties:
 * - Exact: an update is an echo only if the status it carries is statusEqual to the one written for that uid
 *   and generation, and nothing else a pass reads changed between its two states: generation (the spec),
 *   labels, annotations, finalizers, owner references, deletion. Anything else reaches the queue as before.
 *   A change to a child is that child's own event, which the filter never sees.
 * - One echo per write: a matching event consumes the entry; a later identical update (someone else writing
 *   the same status back) is reconciled.
 * - Told before the write is sent (writing), and told again if it failed (failed): the watch may deliver the echo
 *   before the write's own response has been read, and an echo that finds no entry runs a pass.
 * - Bounded: entries expire after ECHO_TTL_MS (a write the API server turned into a no-op has no event) and
 *   at most MAX_ENTRIES are kept (expectations.ts).
 */
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import type { Clock } from "../runtime/clock.ts";
import type { SourceEvent } from "../runtime/source.ts";
import { ExpiringMap, WRITTEN_TTL_MS } from "./expectations.ts";
import { statusEqual } from "./status.ts";

/** How long a written status waits for its echo (the watch normally delivers it in well under a second). */
export const ECHO_TTL_MS = WRITTEN_TTL_MS;

interface Written {
  generation: number | undefined;
  status: WebAppStatus;
}

/** What a pass reads of a WebApp besides its status. */
function sameButStatus(a: WebAppObject, b: WebAppObject): boolean {
  const x = a.metadata;
  const y = b.metadata;
  return (
    x.uid === y.uid &&
    x.generation === y.generation &&
    x.deletionTimestamp === y.deletionTimestamp &&
    JSON.stringify([x.labels, x.annotations, x.finalizers, x.ownerReferences]) ===
      JSON.stringify([y.labels, y.annotations, y.finalizers, y.ownerReferences])
  );
}

export class StatusEchoes {
  readonly #written: ExpiringMap<Written>;

  constructor(clock: Clock) {
    this.#written = new ExpiringMap<Written>(clock, ECHO_TTL_MS);
  }

  /** `status` is about to be written to this WebApp's status subresource (the WebApp as cached when the pass read it). */
  writing(webapp: WebAppObject, status: WebAppStatus): void {
    const uid = webapp.metadata.uid;
    if (uid) this.#written.set(uid, { generation: webapp.metadata.generation, status });
  }

  /** The write announced by writing() failed: no echo will come. */
  failed(webapp: WebAppObject): void {
    const uid = webapp.metadata.uid;
    if (uid) this.#written.delete(uid);
  }

  /** True iff `e` is the echo of a write recorded by wrote(): the controller may drop it. */
  isEcho(e: SourceEvent<WebAppObject>): boolean {
    if (e.type !== "update" || !e.old) return false;
    const uid = e.object.metadata.uid;
    const written = uid ? this.#written.get(uid) : undefined;
    if (!uid || !written || written.generation !== e.object.metadata.generation) return false;
    if (!sameButStatus(e.old, e.object) || !statusEqual(e.object.status, written.status)) return false;
    this.#written.delete(uid);
    return true;
  }
}
