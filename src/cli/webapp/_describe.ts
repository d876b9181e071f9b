/**
 * `kubectl describe` for a WebApp: the object's identity, spec and status as "Key:  value" lines, its
 * conditions as a table, and the Events about it (oldest first, with count and age as kubectl shows
 * them: "3m (x4 over 10m)"). Pure: `now` is given; absent values read "<none>". The spec's pod-template
 * fields (env, resources, probes, ...) follow its image, replicas and port when set (_describe-template.ts).
 */
import { recordState } from "../../api/rollout-history.ts";
import { DEFAULT_FAILURE_THRESHOLD } from "../../api/rollout-policy.ts";
import { DEFAULT_CPU_UTILIZATION, DEFAULT_MIN_REPLICAS, type WebAppObject } from "../../api/webapp.ts";
import { formatTable, humanDuration } from "../../printers/format.ts";
import { templateRows } from "./_describe-template.ts";

export interface EventLike {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  source?: { component?: string };
  reportingComponent?: string;
  metadata: { creationTimestamp?: string };
}

const none = (v: unknown) => (v === undefined || v === null || v === "" ? "<none>" : String(v));
const age = (now: number, t?: string) => (t ? humanDuration(now - Date.parse(t)) : "<unknown>");
const pairs = (m?: Record<string, string>) =>
  m && Object.keys(m).length
    ? Object.entries(m)
        .map(([k, v]) => `${k}=${v}`)
        .join("\n              ")
    : "<none>";

function keyValues(rows: [string, string][], indent = ""): string[] {
  const width = Math.max(...rows.map(([k]) => k.length + 1)) + 2;
  return rows.map(([k, v]) => `${indent}${`${k}:`.padEnd(width)}${v}`.trimEnd());
}

const indentTable = (rows: string[][]) =>
  formatTable(rows)
    .split("\n")
    .map((l) => `  ${l}`.trimEnd());

function eventAge(e: EventLike, now: number): string {
  const last = e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
  const first = e.firstTimestamp ?? last;
  const count = e.count ?? 1;
  return count > 1 ? `${age(now, last)} (x${count} over ${age(now, first)})` : age(now, last);
}

/** The counts of the status: the Deployment's, the autoscaler's with spec.autoscaling, the generation observed. */
function statusRows(s: WebAppObject["status"]): [string, string][] {
  const hpa = s?.autoscaling;
  return [
    ["Replicas", none(s?.replicas)],
    ["Ready Replicas", none(s?.readyReplicas)],
    ...(hpa
      ? [
          ["Autoscaler", `${none(hpa.currentReplicas)} current, ${none(hpa.desiredReplicas)} desired`] as [
            string,
            string,
          ],
        ]
      : []),
    ...revisionRows(s),
    ["Observed Generation", none(s?.observedGeneration)],
  ];
}

/** "Revision: 3 (Ready), last Ready 3" once the operator has recorded one (devctl webapp rollout history). */
function revisionRows(s: WebAppObject["status"]): [string, string][] {
  const newest = s?.rollouts?.at(-1);
  if (!newest) return [];
  const lastReady = s?.lastReadyRevision === undefined ? "none" : String(s.lastReadyRevision);
  return [["Revision", `${newest.revision} (${recordState(newest, true)}), last Ready ${lastReady}`]];
}

/** "Rollout: automatic rollback after 60s" (or "no automatic rollback", or the operator's default) with spec.rollout. */
function rolloutRows(r: unknown): [string, string][] {
  if (typeof r !== "object" || r === null) return [];
  const { autoRollback, failureThreshold } = r as Record<string, unknown>;
  const after = `after ${failureThreshold ?? DEFAULT_FAILURE_THRESHOLD} of failure`;
  if (autoRollback === false) return [["Rollout", "no automatic rollback"]];
  if (autoRollback === true) return [["Rollout", `automatic rollback ${after}`]];
  return [["Rollout", `automatic rollback as the operator's default (--auto-rollback), ${after}`]];
}

/** "Autoscaling: 2-10 pods, at 80% CPU (and 70% memory)" when spec.autoscaling is set. */
function autoscalingRows(a: unknown): [string, string][] {
  if (typeof a !== "object" || a === null) return [];
  const {
    minReplicas,
    maxReplicas,
    targetCPUUtilizationPercentage: cpu,
    targetMemoryUtilizationPercentage: memory,
  } = a as Record<string, unknown>;
  const target = `${cpu ?? DEFAULT_CPU_UTILIZATION}% CPU${memory !== undefined ? ` and ${memory}% memory` : ""}`;
  return [["Autoscaling", `${minReplicas ?? DEFAULT_MIN_REPLICAS}-${none(maxReplicas)} pods, at ${target}`]];
}

export function describeWebApp(w: WebAppObject, events: readonly EventLike[], now: number): string {
  const spec = (typeof w.spec === "object" && w.spec !== null ? w.spec : {}) as Record<string, unknown>;
  const lines = keyValues([
    ["Name", none(w.metadata.name)],
    ["Namespace", none(w.metadata.namespace)],
    ["Labels", pairs(w.metadata.labels)],
    ["Annotations", pairs(w.metadata.annotations)],
    ["API Version", none(w.apiVersion)],
    ["Kind", none(w.kind)],
    [
      "Created",
      w.metadata.creationTimestamp
        ? `${w.metadata.creationTimestamp} (${age(now, w.metadata.creationTimestamp)} ago)`
        : "<unknown>",
    ],
  ]);
  const template = templateRows(spec);
  lines.push(
    "Spec:",
    ...keyValues(
      [
        ["Image", none(spec.image)],
        ["Replicas", none(spec.replicas)],
        ...autoscalingRows(spec.autoscaling),
        ["Port", none(spec.port)],
        ...template.rows,
        ...rolloutRows(spec.rollout),
      ],
      "  ",
    ),
  );
  if (template.environment.length > 0) lines.push("  Environment:", ...keyValues(template.environment, "    "));
  if (template.envFrom.length > 0)
    lines.push("  Environment Variables from:", ...template.envFrom.map((l) => `    ${l}`));
  const s = w.status;
  lines.push("Status:", ...keyValues(statusRows(s), "  "));
  const conditions = s?.conditions ?? [];
  lines.push("Conditions:");
  if (conditions.length === 0) lines.push("  <none>");
  else
    lines.push(
      ...indentTable([
        ["Type", "Status", "Reason", "Age", "Message"],
        ["----", "------", "------", "---", "-------"],
        ...conditions.map((c) => [c.type, c.status, c.reason ?? "", age(now, c.lastTransitionTime), c.message ?? ""]),
      ]),
    );
  if (events.length === 0) lines.push("Events:  <none>");
  else {
    const sorted = [...events].sort((a, b) =>
      (a.lastTimestamp ?? a.eventTime ?? "").localeCompare(b.lastTimestamp ?? b.eventTime ?? ""),
    );
    lines.push(
      "Events:",
      ...indentTable([
        ["Type", "Reason", "Age", "From", "Message"],
        ["----", "------", "----", "----", "-------"],
        ...sorted.map((e) => [
          e.type ?? "",
          e.reason ?? "",
          eventAge(e, now),
          e.source?.component ?? e.reportingComponent ?? "",
          (e.message ?? "").replace(/\s*\n\s*/g, " "),
        ]),
      ]),
    );
  }
  return `${lines.join("\n")}\n`;
}
