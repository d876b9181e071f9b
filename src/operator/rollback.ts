/**
 * Automatic rollback (spec.rollout.autoRollback, issue #32): whether a pass runs the last Ready revision instead of
 * the spec's, decided from the WebApp alone (its spec, its stored status, the clock). Pure.
 *
 * Properties:
 * - Only a failed revision is rolled back: the newest record of the history is the spec's current revision, was
 *   never Ready (or only for an instant: history.ts READY_SETTLE_MS), has failedAt, and the stored status still says
 *   its rollout fails (history.ts isRolloutFailure: a pod failure, the progress deadline, a ReplicaFailure, a probe
 *   keeping the pods unready) failureThreshold after failedAt (at once past the progress deadline). Until then the
 *   verdict is `waiting`, with how long.
 * - Decided from stored state only, so any leader decides the same: a leader that dies after running the rollback
 *   and before reporting it is followed by one that decides the same (its Deployment already says so: nothing to
 *   write) and reports it. Once reported (the record's rolledBackAt), it holds until the spec's revision changes: no
 *   further failure check.
 * - Never loops: one rollback per failed revision; the revision rolled back to is never rolled back in turn.
 * - Never crosses a change the user made outside the pod template: the Deployment is the spec's, with the pod-template
 *   fields of the last Ready revision (its record's podSpec: image, env, resources, probes...; the image alone for a
 *   record from before records kept it). That must give that revision's pod template again (podTemplateDigest); when
 *   it does not (an image-only record and more than the image changed since), nothing is rolled back and the status
 *   says why (`cannot`).
 * - Off unless spec.rollout.autoRollback or the operator's default (--auto-rollback) turns it on.
 */
import { findCondition } from "../api/conditions.ts";
import { type RolloutRecord, withRecordPodSpec } from "../api/rollout-history.ts";
import { failureThresholdMs } from "../api/rollout-policy.ts";
import type { Condition, WebApp } from "../api/webapp.ts";
import type { Progress } from "../readiness/kstatus.ts";
import { podTemplateDigest } from "./desired.ts";
import { isRecordOf, isRolloutFailure, revisionOf } from "./history.ts";

export type RollbackVerdict =
  /** Nothing to roll back (or rollback is off): the spec's revision runs. */
  | { kind: "none" }
  /** The spec's revision is failing, not for long enough yet: look again in `ms`. */
  | { kind: "waiting"; ms: number }
  /** Run `to` instead of the failed revision; `first` until a status has reported it. */
  | { kind: "rollBack"; failed: RolloutRecord; to: RolloutRecord; first: boolean }
  /** It failed for long enough, but `to` cannot be run again by the image alone: `why`. */
  | { kind: "cannot"; failed: RolloutRecord; to: RolloutRecord; why: string };

export function rollbackVerdict(webapp: WebApp, enabledByDefault: boolean, now: number): RollbackVerdict {
  if (!(webapp.spec.rollout?.autoRollback ?? enabledByDefault)) return { kind: "none" };
  const status = webapp.status;
  const records = status?.rollouts ?? [];
  const failed = records[records.length - 1];
  // Cheap checks first: the digest (revisionOf) is only worth computing for a record that never became Ready.
  if (!failed || failed.readyAt || !isRecordOf(failed, revisionOf(webapp))) return { kind: "none" };
  const to = records.find((r) => r.revision === status?.lastReadyRevision && r !== failed);
  if (!to || to.digest === failed.digest) return { kind: "none" }; // nothing else to go back to
  if (failed.rolledBackAt) return { kind: "rollBack", failed, to, first: false };
  const failing = storedProgress(status?.conditions);
  if (!failed.failedAt || !failing || !isRolloutFailure(failing)) return { kind: "none" };
  const wait = Date.parse(failed.failedAt) + failureThresholdMs(webapp.spec.rollout) - now;
  if (wait > 0 && failing.reason !== "ProgressDeadlineExceeded") return { kind: "waiting", ms: wait };
  if (podTemplateDigest(rolledBackTo(webapp, to)) !== to.digest)
    return {
      kind: "cannot",
      failed,
      to,
      why:
        `revision ${failed.revision} changed more than the image since revision ${to.revision}, the last Ready one, ` +
        "whose record keeps only its image, so it is not rolled back automatically; fix the spec, or undo it " +
        "(devctl webapp rollout undo --image-only sets the image alone)",
    };
  return { kind: "rollBack", failed, to, first: true };
}

/** Where the stored status says the rollout is: Stalled, else Reconciling, with the reason (none when neither). */
function storedProgress(conditions: readonly Condition[] | undefined): Pick<Progress, "kind" | "reason"> | undefined {
  const stalled = findCondition(conditions, "Stalled");
  if (stalled?.status === "True") return { kind: "stalled", reason: stalled.reason };
  const reconciling = findCondition(conditions, "Reconciling");
  if (reconciling?.status === "True") return { kind: "reconciling", reason: reconciling.reason };
  return undefined;
}

/**
 * The WebApp as a pass that rolls back converges it: its spec with the pod-template fields revision `to` ran with
 * (its podSpec; its image alone for a record written before records kept one).
 */
export function rolledBackTo(webapp: WebApp, to: RolloutRecord): WebApp {
  return { ...webapp, spec: withRecordPodSpec(webapp.spec, to) };
}

/** What the status says of a rollback, or of one that cannot be done: a Stalled reason and what to do. */
export function rollbackProblem(v: Extract<RollbackVerdict, { kind: "rollBack" | "cannot" }>): {
  reason: "RolledBack" | "RollbackNotPossible";
  message: string;
} {
  const { failed, to } = v;
  const why = `${failed.reason ?? "failed"}: ${failed.message ?? ""}`.trim();
  if (v.kind === "cannot") return { reason: "RollbackNotPossible", message: v.why };
  return {
    reason: "RolledBack",
    message:
      `revision ${failed.revision} (image ${failed.image}) failed (${why}) and was rolled back: revision ` +
      `${to.revision} (image ${to.image}) runs again; change the spec to roll forward, or set spec.rollout.retry ` +
      "to a new value to try this spec again",
  };
}
