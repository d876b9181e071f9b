/**
 * The WebApp table, column for column what `kubectl get webapps` prints from the CRD's printer
 * columns: NAME IMAGE DESIRED AVAILABLE READY REASON AGE (NAMESPACE first with -A). A value the object does
 * not have is an empty cell, as kubectl leaves it. Pure: `now` is given.
 */
import type { WebAppObject } from "../../api/webapp.ts";
import { formatTable, humanDuration } from "../../install/format.ts";

export const HEADERS = ["NAME", "IMAGE", "DESIRED", "AVAILABLE", "READY", "REASON", "AGE"] as const;

const text = (v: unknown): string => (v === undefined || v === null ? "" : String(v));

export function webAppRow(w: WebAppObject, now: number): string[] {
  const spec = (typeof w.spec === "object" && w.spec !== null ? w.spec : {}) as { image?: unknown; replicas?: unknown };
  const created = w.metadata.creationTimestamp ? Date.parse(w.metadata.creationTimestamp) : undefined;
  return [
    text(w.metadata.name),
    text(spec.image),
    text(spec.replicas),
    text(w.status?.availableReplicas),
    text(w.status?.conditions?.find((c) => c.type === "Ready")?.status),
    text(w.status?.conditions?.find((c) => c.type === "Ready")?.reason),
    created === undefined ? "<unknown>" : humanDuration(now - created),
  ];
}

export function webAppTable(items: readonly WebAppObject[], now: number, withNamespace: boolean): string {
  const header = withNamespace ? ["NAMESPACE", ...HEADERS] : [...HEADERS];
  const rows = items.map((w) =>
    withNamespace ? [text(w.metadata.namespace), ...webAppRow(w, now)] : webAppRow(w, now),
  );
  return formatTable([header, ...rows]);
}
