/**
 * The rollout history a status carries (status.rollouts, status.lastReadyRevision; api/rollout-history.ts). Pure.
 *
 * Properties:
 * - A revision is recorded when the operator reports on a pod template (podTemplateDigest, and the restart
 *   annotation) other than the newest recorded one, while a Deployment for it exists or is being written: one record
 *   per template rolled out, numbered one more than the newest, the last HISTORY_LIMIT kept. A WebApp taken over from
 *   an earlier devctl gets its first record with its next status write.
 * - The newest record follows the status computed in the same pass: Ready True marks it ready (once: readyAt, and
 *   lastReadyRevision); a failing rollout (isRolloutFailure: a pod failure, the progress deadline, a ReplicaFailure, a
 *   probe that keeps the pods unready) marks it failed (once, while it was never Ready, or Ready for less than
 *   READY_SETTLE_MS: then it loses its Ready mark, and lastReadyRevision goes back to the Ready one before it); a
 *   pass that runs the last Ready revision instead (rollback.ts) marks it rolled back (once; it is then neither
 *   marked Ready nor failed again). Older records never change. A record marked Ready keeps the pod-template
 *   fields of its spec (podSpec), what a rollback to it sets back.
 * - A revision is its template digest, restart annotation and spec.rollout.retry: a new retry token after a rollback
 *   is a new revision, tried afresh.
 * - Level-based and stable: an unchanged state gives the stored history back, so it costs no write by itself. Every
 *   change falls in a pass whose status changes anyway (a new generation or restart, Ready or Stalled turning True),
 *   so the history adds no request.
 */
import { HISTORY_LIMIT, podSpecOf, RECORD_MESSAGE_MAX, type RolloutRecord } from "../api/rollout-history.ts";
import { RESTARTED_AT_ANNOTATION, type WebApp, type WebAppSpec, type WebAppStatus } from "../api/webapp.ts";
import type { ObjectMeta } from "../kube/types.ts";
import type { Progress } from "../readiness/kstatus.ts";
import { POD_FAILURE_REASONS } from "../readiness/pods.ts";
import { podTemplateDigest } from "./desired.ts";

/** The pod template a pass reports on: spec.image, its podTemplateDigest, the restart and the retry token if set. */
export interface Revision {
  image: string;
  digest: string;
  restartedAt?: string;
  retry?: string;
  /** The spec it comes from: its pod-template fields are kept on the record once it is Ready (podSpecOf). */
  spec?: WebAppSpec;
}

/** The revision a WebApp's spec asks for. */
export function revisionOf(webapp: { metadata: ObjectMeta; spec: WebAppSpec }): Revision {
  const restartedAt = webapp.metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  const retry = webapp.spec.rollout?.retry;
  const named = { ...webapp, metadata: { ...webapp.metadata, name: webapp.metadata.name ?? "" } } as WebApp;
  return {
    image: webapp.spec.image,
    digest: podTemplateDigest(named),
    ...(restartedAt !== undefined ? { restartedAt } : {}),
    ...(retry !== undefined ? { retry } : {}),
    spec: webapp.spec,
  };
}

/** Stalled reasons that are a failed rollout of the newest revision (not a name conflict or an invalid spec). */
const ROLLOUT_FAILURES: ReadonlySet<string> = new Set([
  ...POD_FAILURE_REASONS,
  "ProgressDeadlineExceeded",
  "ReplicaFailure",
]);

/**
 * The progress is a failing rollout: Stalled on a pod failure, the progress deadline or a ReplicaFailure, or
 * Reconciling because a probe keeps the new pods unready (ProbeFailed, which alone does not stall: it may pass yet).
 */
export function isRolloutFailure(p: Pick<Progress, "kind" | "reason">): boolean {
  return (
    (p.kind === "stalled" && ROLLOUT_FAILURES.has(p.reason)) || (p.kind === "reconciling" && p.reason === "ProbeFailed")
  );
}

export type History = Pick<WebAppStatus, "rollouts" | "lastReadyRevision">;

/** The record is of this revision: same template, restart and retry token. */
export function isRecordOf(r: RolloutRecord | undefined, rev: Revision): boolean {
  return r !== undefined && r.digest === rev.digest && r.restartedAt === rev.restartedAt && r.retry === rev.retry;
}

/**
 * The history after a pass that reports `progress` on `current` (undefined: no template rolled out this pass, e.g.
 * an invalid spec) and, with `rolledBack`, runs the last Ready revision instead (rollback.ts); `now` is formatted as
 * conditions' times are.
 */
export function nextHistory(
  stored: WebAppStatus | undefined,
  current: Revision | undefined,
  progress: Progress,
  now: string,
  rolledBack = false,
): History {
  const kept: History = {
    ...(stored?.rollouts ? { rollouts: stored.rollouts } : {}),
    ...(stored?.lastReadyRevision !== undefined ? { lastReadyRevision: stored.lastReadyRevision } : {}),
  };
  if (!current) return kept;
  const records = stored?.rollouts ?? [];
  const last = records[records.length - 1];
  const same = isRecordOf(last, current);
  const newest: RolloutRecord =
    same && last
      ? last
      : {
          revision: (last?.revision ?? 0) + 1,
          image: current.image,
          digest: current.digest,
          ...(current.restartedAt !== undefined ? { restartedAt: current.restartedAt } : {}),
          ...(current.retry !== undefined ? { retry: current.retry } : {}),
          startedAt: now,
        };
  const marked = rolledBack ? markRolledBack(newest, now) : mark(newest, progress, now, current.spec);
  if (same && marked === last) return kept;
  const rollouts = [...records.slice(0, same ? -1 : undefined), marked].slice(-HISTORY_LIMIT);
  return { rollouts, ...lastReady(stored?.lastReadyRevision, newest, marked, records) };
}

/** lastReadyRevision after `newest` became `marked`: it, once Ready; the Ready one before it, when it lost Ready. */
function lastReady(
  stored: number | undefined,
  newest: RolloutRecord,
  marked: RolloutRecord,
  records: readonly RolloutRecord[],
): History {
  let revision = stored;
  if (marked.readyAt !== undefined && newest.readyAt === undefined) revision = marked.revision;
  if (marked.readyAt === undefined && newest.readyAt !== undefined)
    revision = records.filter((r) => r.revision < marked.revision && r.readyAt !== undefined).at(-1)?.revision;
  return revision !== undefined ? { lastReadyRevision: revision } : {};
}

/**
 * How long a revision must stay Ready before a failure no longer unmakes it. A container that crashes after starting
 * makes its pods ready for an instant (without a readiness probe, at once), so a Deployment can report the new
 * revision available before its first crash: on the real node a crash-looping image was Ready for a moment and
 * reported CrashLoopBackOff ~30 s later (10 s of not Ready before the pods are read, then the kubelet's back-off).
 * A failure within this long of readyAt is the rollout's: the record loses readyAt and becomes failed.
 */
export const READY_SETTLE_MS = 120_000;

/**
 * The record with what this pass found of it: Ready (with the pod-template fields of `spec`, for a rollback to it),
 * or a failed rollout; the same object when nothing is new.
 */
function mark(r: RolloutRecord, progress: Progress, now: string, spec: WebAppSpec | undefined): RolloutRecord {
  if (r.rolledBackAt) return r;
  if (r.readyAt) {
    const brief = Date.parse(now) - Date.parse(r.readyAt) < READY_SETTLE_MS;
    if (!brief || !isRolloutFailure(progress)) return r;
    const { readyAt: _, podSpec: _spec, ...unready } = r;
    return failed(unready, progress, now);
  }
  if (progress.kind === "ready") {
    const podSpec = spec ? podSpecOf(spec) : undefined;
    return { ...r, readyAt: now, ...(podSpec !== undefined ? { podSpec } : {}) };
  }
  if (!r.failedAt && isRolloutFailure(progress)) return failed(r, progress, now);
  return r;
}

/** Failed since its first failure (a record Ready for an instant between two keeps the first). */
function failed(r: RolloutRecord, progress: Progress, now: string): RolloutRecord {
  const since = r.failedAt ?? now;
  return { ...r, failedAt: since, reason: progress.reason, message: progress.message.slice(0, RECORD_MESSAGE_MAX) };
}

/** A failed record the operator rolled back: once. */
function markRolledBack(r: RolloutRecord, now: string): RolloutRecord {
  return r.rolledBackAt ? r : { ...r, rolledBackAt: now };
}
