/**
 * Metrics about the WebApps themselves (issue #33), in the style of kube-state-metrics: what the alerts
 * (`install/monitoring.ts`) and the dashboard read.
 *
 * Properties:
 * - The gauges mirror the WebApp cache at each scrape (Registry.collected), in the cache's order: one series per WebApp
 *   and family, labels `namespace` and `name` plus a bounded set (a condition type the operator writes, its status,
 *   its reason; the image of devctl_webapp_info). A deleted WebApp's series are gone at the next scrape; nothing is
 *   kept between scrapes, and the servers stream the text (Registry.exposeChunks).
 * - Only the replica that leads exposes them: two replicas would otherwise double every sum on a dashboard. A standby's
 *   cache holds the same WebApps, so a new leader exposes the same series at its first scrape.
 * - The counters and the histogram count what this process reported (a status it wrote): each rollout that became
 *   Ready (its duration, from startedAt to readyAt), failed (by reason) or was rolled back, and each time the pods
 *   start failing (Degraded turning to a pod failure reason, in a rollout or not), once, when the status that first
 *   says so is written. Labelled by namespace only, so they stay bounded as WebApps come and go.
 */
import type { RolloutRecord } from "../api/rollout-history.ts";
import { type Condition, WEBAPP_DEFAULT_REPLICAS, type WebAppObject, type WebAppStatus } from "../api/index.ts";
import { findCondition } from "../api/conditions.ts";
import { isPodFailureReason, type PodFailureReason } from "../readiness/pods.ts";
import type { Registry, Sample } from "../runtime/prometheus.ts";

/** The condition types the operator writes (status.ts); a series per WebApp for each one present. */
const CONDITION_TYPES: ReadonlySet<string> = new Set([
  "Ready",
  "Reconciling",
  "Stalled",
  "Available",
  "Progressing",
  "Degraded",
]);
/** A reason is a CamelCase word the operator wrote; anything else (a hand-edited status) is reported as Other. */
const REASON = /^[A-Za-z][A-Za-z0-9]{0,63}$/;
/** Seconds from a rollout's start to Ready: a quick image swap to a slow rollout of many pods. */
export const ROLLOUT_DURATION_BUCKETS: readonly number[] = [1, 2.5, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600];

export interface WebAppMetricsSource {
  /** Every WebApp in the cache now. */
  list(): readonly WebAppObject[];
  /** True while this replica leads. */
  leading(): boolean;
}

/** What a reconciler tells: a status it wrote over the one the WebApp had. */
export type StatusReported = (webapp: WebAppObject, written: WebAppStatus) => void;

export function registerWebAppMetrics(r: Registry, source: WebAppMetricsSource): StatusReported {
  const each = (fn: (w: WebAppObject, labels: { namespace: string; name: string }) => Iterable<Sample>) =>
    function* (): Generator<Sample> {
      if (!source.leading()) return;
      for (const w of source.list()) {
        const { namespace = "", name = "" } = w.metadata;
        yield* fn(w, { namespace, name });
      }
    };
  r.collected(
    { name: "devctl_webapp_info", help: "Information about a WebApp: its spec.image", labelNames: INFO_LABELS },
    each((w, id) => {
      const image = imageOf(w);
      return image === undefined ? [] : [[{ ...id, image }, 1]];
    }),
  );
  r.collected(
    {
      name: "devctl_webapp_status_condition",
      help: "The WebApp's status conditions: 1 for each condition's current status and reason",
      labelNames: CONDITION_LABELS,
    },
    each((w, id) =>
      (w.status?.conditions ?? [])
        .filter((c) => CONDITION_TYPES.has(c.type))
        .map((c): Sample => [{ ...id, ...conditionLabels(c) }, 1]),
    ),
  );
  r.collected(
    {
      name: "devctl_webapp_spec_replicas",
      help: "Pods the WebApp asks for: spec.replicas, or with spec.autoscaling what its autoscaler last decided",
      labelNames: ID_LABELS,
    },
    each((w, id) => {
      const desired = desiredReplicas(w);
      return desired === undefined ? [] : [[id, desired]];
    }),
  );
  for (const [field, what] of REPLICA_FIELDS) {
    r.collected(
      {
        name: `devctl_webapp_status_${snake(field)}`,
        help: `The WebApp's ${what} (status.${field})`,
        labelNames: ID_LABELS,
      },
      each((w, id) => [[id, w.status?.[field] ?? 0]]),
    );
  }
  return rolloutRecorders(r);
}

const ID_LABELS = ["namespace", "name"] as const;
const INFO_LABELS = [...ID_LABELS, "image"];
const CONDITION_LABELS = [...ID_LABELS, "type", "status", "reason"];
const REPLICA_FIELDS = [
  ["replicas", "pods"],
  ["readyReplicas", "ready pods"],
  ["availableReplicas", "available pods"],
] as const;

const snake = (s: string): string => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function conditionLabels(c: Condition): { type: string; status: string; reason: string } {
  return { type: c.type, status: c.status.toLowerCase(), reason: REASON.test(c.reason) ? c.reason : "Other" };
}

function imageOf(w: WebAppObject): string | undefined {
  const image = (w.spec as { image?: unknown } | undefined)?.image;
  return typeof image === "string" ? image : undefined;
}

/**
 * spec.replicas (1 when left out), or with spec.autoscaling what the autoscaler decided. Read from the stored spec
 * without parsing it (a scrape reads every WebApp): the API server validated it against the CRD.
 */
function desiredReplicas(w: WebAppObject): number | undefined {
  const spec = (w.spec ?? {}) as { replicas?: unknown; autoscaling?: unknown };
  if (spec.autoscaling !== undefined) return w.status?.autoscaling?.desiredReplicas;
  return typeof spec.replicas === "number" ? spec.replicas : WEBAPP_DEFAULT_REPLICAS;
}

/** The counters and the histogram, fed by each status written. */
function rolloutRecorders(r: Registry): StatusReported {
  const durations = r.histogram({
    name: "devctl_webapp_rollout_duration_seconds",
    help: "Seconds from the start of a WebApp rollout (a new pod template) until the WebApp was Ready",
    labelNames: ["namespace"],
    buckets: ROLLOUT_DURATION_BUCKETS,
  });
  const failures = r.counter({
    name: "devctl_webapp_rollout_failures_total",
    help: "WebApp rollouts that failed, by the Stalled reason (a pod failure such as CrashLoopBackOff, or the deadline)",
    labelNames: ["namespace", "reason"],
  });
  const podFailures = r.counter({
    name: "devctl_webapp_pod_failures_total",
    help:
      "Times a WebApp's pods started failing, by reason (CrashLoopBackOff, ImagePullBackOff, ProbeFailed...): in a " +
      "rollout or long after one",
    labelNames: ["namespace", "reason"],
  });
  const rollbacks = r.counter({
    name: "devctl_webapp_rollbacks_total",
    help: "Failed WebApp rollouts the operator rolled back to the last Ready revision (spec.rollout.autoRollback)",
    labelNames: ["namespace"],
  });
  return (webapp, written) => {
    const namespace = webapp.metadata.namespace ?? "";
    const change = rolloutChanges(webapp.status, written);
    for (const rec of change.ready) durations.with({ namespace }).observe(secondsBetween(rec.startedAt, rec.readyAt));
    for (const rec of change.failed) failures.with({ namespace, reason: rec.reason ?? "Unknown" }).inc();
    if (change.rolledBack.length) rollbacks.with({ namespace }).inc(change.rolledBack.length);
    const failure = newPodFailure(webapp.status, written);
    if (failure) podFailures.with({ namespace, reason: failure }).inc();
  };
}

export interface RolloutChanges {
  /** Records that have readyAt now and had not before. */
  ready: RolloutRecord[];
  /** Records that have failedAt now and had not before. */
  failed: RolloutRecord[];
  /** Records that have rolledBackAt now and had not before. */
  rolledBack: RolloutRecord[];
}

/** What a status write says of the rollout history that the stored status did not: each transition once. */
export function rolloutChanges(before: WebAppStatus | undefined, after: WebAppStatus): RolloutChanges {
  const old = new Map((before?.rollouts ?? []).map((r) => [r.revision, r]));
  const out: RolloutChanges = { ready: [], failed: [], rolledBack: [] };
  for (const rec of after.rollouts ?? []) {
    const was = old.get(rec.revision);
    if (rec.readyAt && !was?.readyAt) out.ready.push(rec);
    if (rec.failedAt && !was?.failedAt) out.failed.push(rec);
    if (rec.rolledBackAt && !was?.rolledBackAt) out.rolledBack.push(rec);
  }
  return out;
}

/** The pod failure a written status reports that the stored one did not (Degraded True with a new such reason). */
export function newPodFailure(before: WebAppStatus | undefined, after: WebAppStatus): PodFailureReason | undefined {
  const now = findCondition(after.conditions, "Degraded");
  if (now?.status !== "True" || !isPodFailureReason(now.reason)) return undefined;
  const was = findCondition(before?.conditions, "Degraded");
  return was?.status === "True" && was.reason === now.reason ? undefined : now.reason;
}

function secondsBetween(from: string, to: string | undefined): number {
  const s = (Date.parse(to ?? "") - Date.parse(from)) / 1000;
  return Number.isFinite(s) && s >= 0 ? s : 0;
}
