/**
 * The status write of a WebApp pass: a merge patch of the status subresource, as webapp-operator, and only
 * when it says something new.
 *
 * Contract:
 * - Nothing is sent when the status equals the stored one (statusEqual: what a user can see).
 * - A status that is already stale is not sent: when the request is superseded (its key was queued again while
 *   it ran), the pass that follows reads newer state and writes that. Nor is the status of a pass that wrote a
 *   child with nothing wrong (`leave`): it only reports progress on what the write came back as, and the caller
 *   asks for a pass (at the back of the queue) that reads that and writes it, so in a burst the writes of the
 *   children go first. Except news someone may be waiting for: a status that turns Ready or Stalled True is
 *   written at once (the queued pass may sit behind every other key).
 * - Says what it did: written, unchanged (nothing to write), or left (to the pass that follows).
 * - A WebApp deleted meanwhile (404) is not an error: nothing is left to report on.
 * - One Warning event and log line per change of problem when it is Degraded; a pod's message changes with
 *   every kubelet back-off, its reason does not, so for a pod failure only the reason counts. Not for a rollback:
 *   the reconciler sends its one Warning with its first report.
 */
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { WEBAPP_RESOURCE } from "../api/webapp.ts";
import { findCondition } from "../api/conditions.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient } from "../kube/types.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import type { Request } from "../runtime/reconcile.ts";
import { isPodFailureReason } from "../readiness/pods.ts";
import { FIELD_MANAGER } from "./converge.ts";
import { statusEqual } from "./status.ts";

export interface StatusWriteDeps {
  client: KubeClient;
  recorder: EventRecorder;
  logger: Logger;
}

/** What writeStatus did (see the contract above). */
export type StatusWrite = "written" | "unchanged" | "left";

/**
 * A merge patch of the status subresource, only when something a user can see changed and it is not left to the
 * pass that follows (req.superseded(), or `leave`: see the contract above) unless it turns Ready or Stalled True;
 * a Warning when it degrades.
 */
export async function writeStatus(
  deps: StatusWriteDeps,
  req: Request,
  webapp: WebAppObject,
  status: WebAppStatus,
  signal: AbortSignal,
  leave = false,
): Promise<StatusWrite> {
  if (statusEqual(webapp.status, status)) return "unchanged";
  const { name, namespace } = webapp.metadata;
  const news = turnsTrue(webapp.status, status, "Ready") || turnsTrue(webapp.status, status, "Stalled");
  if ((req.superseded() || leave) && !news) {
    const why = req.superseded() ? "a newer pass is queued" : "left to the pass after this one's writes";
    deps.logger.debug(`WebApp ${namespace}/${name}: status not written, ${why}`);
    return "left";
  }
  try {
    await deps.client.patch(
      WEBAPP_RESOURCE,
      name as string,
      namespace,
      { status: cleared(webapp.status, status) },
      "merge",
      {
        subresource: "status",
        fieldManager: FIELD_MANAGER,
        signal,
        discardResponse: true, // nobody reads the echo of the whole WebApp
      },
    );
  } catch (e) {
    if (isNotFound(e)) return "written"; // deleted meanwhile: nothing left to report on
    throw e;
  }
  deps.logger.debug(`WebApp ${namespace}/${name}: status written`, { changed: changedParts(webapp.status, status) });
  const before = findCondition(webapp.status?.conditions, "Degraded");
  const after = findCondition(status.conditions, "Degraded");
  // One Warning per change of problem; a pod's message changes with every kubelet back-off, its reason does not. A
  // rollback has its own Warning, sent with its first report (reconciler.ts).
  const podFailure = isPodFailureReason(after?.reason ?? "");
  const changed = before?.reason !== after?.reason || (!podFailure && before?.message !== after?.message);
  if (after?.status === "True" && after.reason !== "RolledBack" && (before?.status !== "True" || changed)) {
    deps.recorder.event(webapp, "Warning", after.reason, after.message);
    deps.logger.warn(`WebApp ${namespace}/${name} is degraded: ${after.message}`);
  }
  return "written";
}

/** The condition is True in `next` and was not in `stored`. */
function turnsTrue(stored: WebAppStatus | undefined, next: WebAppStatus, type: string): boolean {
  return (
    findCondition(next.conditions, type)?.status === "True" &&
    findCondition(stored?.conditions, type)?.status !== "True"
  );
}

/**
 * The status as a merge patch: a field the stored status has and this one has not (status.url once spec.expose is
 * gone, status.autoscaling, status.admitted) is null, which removes it; left out, a merge patch would keep it.
 */
function cleared(stored: WebAppStatus | undefined, next: WebAppStatus): Record<string, unknown> {
  const gone = Object.keys(stored ?? {}).filter((key) => !(key in next));
  return gone.length === 0 ? next : { ...next, ...Object.fromEntries(gone.map((key) => [key, null])) };
}

/** What a status write changes, for the debug log: top-level fields, and "Ready.reason"-style condition parts. */
function changedParts(before: WebAppStatus | undefined, after: WebAppStatus): string[] {
  const parts: string[] = [];
  for (const key of [
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "selector",
    "url",
    "lastReadyRevision",
  ] as const)
    if (before?.[key] !== after[key]) parts.push(`${key}=${after[key]}`);
  if (JSON.stringify(before?.admitted ?? []) !== JSON.stringify(after.admitted ?? [])) parts.push("admitted");
  if (JSON.stringify(before?.autoscaling) !== JSON.stringify(after.autoscaling)) parts.push("autoscaling");
  if (JSON.stringify(before?.rollouts ?? []) !== JSON.stringify(after.rollouts ?? [])) parts.push("rollouts");
  for (const c of after.conditions ?? []) {
    const old = findCondition(before?.conditions, c.type);
    for (const field of ["status", "reason", "message", "lastTransitionTime", "observedGeneration"] as const)
      if (old?.[field] !== c[field]) parts.push(`${c.type}.${field}=${c[field]}`);
  }
  return parts;
}
