/**
 * metav1.Condition helpers, the way meta.SetStatusCondition treats them.
 *
 * Properties:
 * - lastTransitionTime changes only when status changes: a condition whose status is the same as
 *   before keeps the earlier time, so recomputing an unchanged state yields an equal condition list.
 * - Conditions are a map keyed by type (x-kubernetes-list-type: map): order never matters for equality.
 * - Times are RFC 3339 with second precision, as metav1.Time serialises them.
 */
import type { Condition, ConditionStatus } from "./webapp.ts";

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** A condition as computed now; lastTransitionTime is filled in by withTransitionTimes. */
export interface ConditionState {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/**
 * Stamps each condition with the previous lastTransitionTime when its status is unchanged, else with
 * `now`; adds observedGeneration when given.
 */
export function withTransitionTimes(
  next: readonly ConditionState[],
  previous: readonly Condition[] | undefined,
  now: number,
  observedGeneration?: number,
): Condition[] {
  const stamp = formatTime(now);
  return next.map((c) => {
    const before = findCondition(previous, c.type);
    const lastTransitionTime = before !== undefined && before.status === c.status ? before.lastTransitionTime : stamp;
    return { ...c, lastTransitionTime, ...(observedGeneration !== undefined ? { observedGeneration } : {}) };
  });
}

/** Same set of types, each with equal status, reason, message, lastTransitionTime and observedGeneration. */
export function conditionsEqual(a: readonly Condition[] | undefined, b: readonly Condition[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  if (left.length !== right.length) return false;
  return left.every((c) => {
    const other = findCondition(right, c.type);
    return (
      other !== undefined &&
      other.status === c.status &&
      other.reason === c.reason &&
      other.message === c.message &&
      other.lastTransitionTime === c.lastTransitionTime &&
      other.observedGeneration === c.observedGeneration
    );
  });
}

/** "2024-05-01T12:00:00Z" (milliseconds dropped, as the API server would). */
export function formatTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
