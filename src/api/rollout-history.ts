/**
 * A WebApp's rollout history (status.rollouts, status.lastReadyRevision): one record per pod template the operator
 * rolled out, oldest first, the last HISTORY_LIMIT of them. Pure schema and reading helpers; the operator writes
 * it (operator/history.ts), `devctl webapp rollout history` and `undo` read it.
 */
import * as v from "valibot";

/** Records kept in status.rollouts, as a Deployment's revisionHistoryLimit keeps 10 ReplicaSets. */
export const HISTORY_LIMIT = 10;

/** Longest failure message kept in a record (a pod's message; the full one is in the Stalled condition). */
export const RECORD_MESSAGE_MAX = 1024;

const time = (what: string) => v.pipe(v.string(), v.description(what), v.isoTimestamp());

export const RolloutRecord = v.object({
  revision: v.pipe(
    v.number(),
    v.description("1 for the first pod template the operator rolled out, one more for each new one."),
    v.integer(),
    v.minValue(1),
  ),
  image: v.pipe(v.string(), v.description("spec.image of this revision."), v.maxLength(1024)),
  digest: v.pipe(
    v.string(),
    v.description(
      "Short digest of the pod template the spec asks for (without a restart): two revisions with the same " +
        "digest ran the same spec (a restart, or a return to earlier values).",
    ),
    v.maxLength(64),
  ),
  restartedAt: v.optional(
    v.pipe(
      v.string(),
      v.description("The WebApp's apps.example.com/restartedAt annotation for this revision, if it had one."),
      v.maxLength(64),
    ),
  ),
  retry: v.optional(
    v.pipe(v.string(), v.description("spec.rollout.retry of this revision, if it had one."), v.maxLength(63)),
  ),
  startedAt: time("When the operator first rolled this pod template out."),
  readyAt: v.optional(time("When this revision first became Ready.")),
  failedAt: v.optional(time("When its rollout failed (while it was never Ready).")),
  reason: v.optional(
    v.pipe(
      v.string(),
      v.description("Why it failed: the Stalled reason, e.g. CrashLoopBackOff or ProgressDeadlineExceeded."),
      v.maxLength(128),
    ),
  ),
  message: v.optional(v.pipe(v.string(), v.description("What failed, in words."), v.maxLength(RECORD_MESSAGE_MAX))),
  rolledBackAt: v.optional(
    time("When the operator rolled this failed revision back (spec.rollout.autoRollback) to lastReadyRevision."),
  ),
});
export type RolloutRecord = v.InferOutput<typeof RolloutRecord>;

/**
 * What one revision came to, for a table: Ready, RolledBack or Failed with the reason, in progress (the newest), or
 * superseded before any of these.
 */
export function recordState(r: RolloutRecord, newest: boolean): string {
  if (r.readyAt) return "Ready";
  if (r.rolledBackAt) return `RolledBack (${r.reason ?? "unknown"})`;
  if (r.failedAt) return `Failed (${r.reason ?? "unknown"})`;
  return newest ? "Progressing" : "Superseded";
}
