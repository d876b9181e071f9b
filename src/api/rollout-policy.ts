/**
 * spec.rollout: what the operator does when a rollout fails (issue #32). Optional; a WebApp without it keeps the
 * operator's default (`devctl operator run --auto-rollback`, off unless set). Nothing here shapes the pod template,
 * so setting it rolls no pod. Pure schema; the operator's side is operator/rollback.ts.
 */
import * as v from "valibot";
import { cel } from "./openapi.ts";

/** How long a rollout must keep failing before it is rolled back, unless spec.rollout.failureThreshold says. */
export const DEFAULT_FAILURE_THRESHOLD = "60s";

const THRESHOLD = /^(?:[0-9]{1,4}s|[0-9]{1,2}m)$/;
const THRESHOLD_SHAPE = "must be a duration in whole seconds (up to 9999s) or minutes (up to 99m), e.g. 60s or 5m";
const RETRY_SHAPE = "must be at most 63 characters";

export const RolloutPolicy = v.pipe(
  v.object({
    autoRollback: v.optional(
      v.pipe(
        v.boolean(),
        v.description(
          "true: when a new revision of the pod template fails (its pods crash, cannot pull their image or start, a " +
            "readiness probe never passes, or the Deployment passes its progress deadline) and keeps failing for failureThreshold, run the last " +
            "revision that was Ready again. The spec is left as written: the WebApp reports Stalled, reason " +
            "RolledBack, until the spec changes. Left out: the operator's default (--auto-rollback).",
        ),
      ),
    ),
    failureThreshold: v.optional(
      v.pipe(
        v.string(),
        v.description(
          `How long a failure must last, from when it is first reported, before it is rolled back. Default ` +
            `${DEFAULT_FAILURE_THRESHOLD}; a Deployment past its progress deadline is rolled back at once.`,
        ),
        v.regex(THRESHOLD, (i) => `${THRESHOLD_SHAPE} (got ${JSON.stringify(i.input)})`),
        cel(THRESHOLD_SHAPE),
      ),
    ),
    retry: v.optional(
      v.pipe(
        v.string(),
        v.description(
          "Any value; a new one tries the current spec again after a rollback, as a new revision (e.g. the same " +
            "image tag, pushed again).",
        ),
        v.maxLength(63, (i) => `${RETRY_SHAPE} (got ${i.input.length})`),
      ),
    ),
  }),
  v.description("What the operator does when a rollout fails: automatic rollback to the last Ready revision."),
);
export type RolloutPolicy = v.InferOutput<typeof RolloutPolicy>;

/** failureThreshold in milliseconds (its shape is checked by the schema). */
export function failureThresholdMs(policy: RolloutPolicy | undefined): number {
  const text = policy?.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD;
  const n = Number(text.slice(0, -1));
  return text.endsWith("m") ? n * 60_000 : n * 1000;
}
