/**
 * A WebApp's rollout history (status.rollouts, status.lastReadyRevision): one record per pod template the operator
 * rolled out, oldest first, the last HISTORY_LIMIT of them. Pure schema and reading helpers; the operator writes
 * it (operator/history.ts), `devctl webapp rollout history` and `undo` read it.
 */
import * as v from "valibot";
import { POD_TEMPLATE_FIELDS } from "./pod-template.ts";
import type { WebAppSpec } from "./webapp.ts";

/** Records kept in status.rollouts, as a Deployment's revisionHistoryLimit keeps 10 ReplicaSets. */
export const HISTORY_LIMIT = 10;

/** Longest failure message kept in a record (a pod's message; the full one is in the Stalled condition). */
export const RECORD_MESSAGE_MAX = 1024;

/** Longest podSpec kept in a record: beyond it (a huge environment) a rollback sets the image alone. */
export const RECORD_POD_SPEC_MAX = 32_768;

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
  podSpec: v.optional(
    v.pipe(
      v.string(),
      v.description(
        "On a revision that became Ready: the spec fields that made its pod template (image, port, imagePullPolicy, " +
          "env, command, resources, probes, security, pod labels...), as JSON, so that a rollback or an undo can " +
          "run it again whole.",
      ),
      v.maxLength(RECORD_POD_SPEC_MAX),
    ),
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

/** The spec fields that make the pod template: what a rollback to a Ready revision sets back. */
const POD_SPEC_KEYS: readonly (keyof WebAppSpec)[] = [
  "image",
  "port",
  "imagePullPolicy",
  ...keysOf(POD_TEMPLATE_FIELDS),
];

function keysOf<T extends object>(o: T): (keyof T)[] {
  return Object.keys(o) as (keyof T)[];
}

/** `spec`'s pod-template fields as a record's podSpec; undefined when longer than RECORD_POD_SPEC_MAX. */
export function podSpecOf(spec: WebAppSpec): string | undefined {
  const picked: Record<string, unknown> = {};
  for (const k of POD_SPEC_KEYS) if (spec[k] !== undefined) picked[k] = spec[k];
  const text = JSON.stringify(picked);
  return text.length <= RECORD_POD_SPEC_MAX ? text : undefined;
}

/**
 * `spec` with the pod-template fields of record `r` instead of its own (every other field, e.g. replicas,
 * autoscaling or expose, stays); with no readable podSpec on the record, `spec` with the record's image alone.
 */
export function withRecordPodSpec(spec: WebAppSpec, r: RolloutRecord): WebAppSpec {
  let stored: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = r.podSpec === undefined ? undefined : JSON.parse(r.podSpec);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) stored = parsed as Record<string, unknown>;
  } catch {
    stored = undefined; // a hand-edited status: the image alone
  }
  if (!stored || stored.image !== r.image) return { ...spec, image: r.image };
  const rest: Record<string, unknown> = { ...spec };
  for (const k of POD_SPEC_KEYS) delete rest[k];
  return { ...rest, ...stored } as WebAppSpec;
}

/**
 * A JSON merge patch of spec that turns `current`'s pod-template fields into `target`'s: each one that differs set
 * (arrays and objects whole), each one `target` lacks removed (null). Every other field is left out.
 */
export function podSpecPatch(current: WebAppSpec, target: WebAppSpec): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const k of POD_SPEC_KEYS) {
    const want = target[k];
    if (JSON.stringify(want) === JSON.stringify(current[k])) continue;
    patch[k] = want === undefined ? null : want;
  }
  return patch;
}
