/**
 * The WebApp table, column for column what `kubectl get webapps` prints from the CRD's printer
 * columns: NAME IMAGE DESIRED AVAILABLE READY REASON AGE (NAMESPACE first with -A); `-o wide` adds PORT,
 * PROGRESSING, DEGRADED, MINPODS and MAXPODS (spec.autoscaling's range; DESIRED is empty then) and URL (status.url,
 * where spec.expose answers). A value the object does not have is an
 * empty cell, as kubectl leaves it.
 * Pure: `now` is given.
 */
import type { WebAppObject } from "../../api/webapp.ts";
import { formatTable, humanDuration } from "../../printers/format.ts";

export const HEADERS = ["NAME", "IMAGE", "DESIRED", "AVAILABLE", "READY", "REASON", "AGE"] as const;
export const WIDE_HEADERS = ["PORT", "PROGRESSING", "DEGRADED", "MINPODS", "MAXPODS", "URL"] as const;

const text = (v: unknown): string => (v === undefined || v === null ? "" : String(v));
const condition = (w: WebAppObject, type: string) => text(w.status?.conditions?.find((c) => c.type === type)?.status);

export function webAppRow(w: WebAppObject, now: number, wide = false): string[] {
  const spec = (typeof w.spec === "object" && w.spec !== null ? w.spec : {}) as {
    image?: unknown;
    replicas?: unknown;
    port?: unknown;
    autoscaling?: { minReplicas?: unknown; maxReplicas?: unknown };
  };
  const created = w.metadata.creationTimestamp ? Date.parse(w.metadata.creationTimestamp) : undefined;
  const row = [
    text(w.metadata.name),
    text(spec.image),
    text(spec.replicas),
    text(w.status?.availableReplicas),
    condition(w, "Ready"),
    text(w.status?.conditions?.find((c) => c.type === "Ready")?.reason),
    created === undefined ? "<unknown>" : humanDuration(now - created),
  ];
  if (!wide) return row;
  const { minReplicas, maxReplicas } = typeof spec.autoscaling === "object" ? (spec.autoscaling ?? {}) : {};
  const range = [text(minReplicas), text(maxReplicas)];
  return [
    ...row,
    text(spec.port),
    condition(w, "Progressing"),
    condition(w, "Degraded"),
    ...range,
    text(w.status?.url),
  ];
}

export function webAppHeader(withNamespace: boolean, wide = false): string[] {
  return [...(withNamespace ? ["NAMESPACE"] : []), ...HEADERS, ...(wide ? WIDE_HEADERS : [])];
}

export function webAppRows(items: readonly WebAppObject[], now: number, withNamespace: boolean, wide = false) {
  return items.map((w) => [...(withNamespace ? [text(w.metadata.namespace)] : []), ...webAppRow(w, now, wide)]);
}

export function webAppTable(items: readonly WebAppObject[], now: number, withNamespace: boolean, wide = false): string {
  return formatTable([webAppHeader(withNamespace, wide), ...webAppRows(items, now, withNamespace, wide)]);
}
