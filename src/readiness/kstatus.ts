/**
 * The kstatus conventions (sigs.k8s.io/cli-utils/pkg/kstatus, the rules Flux, Helm 4 `--wait`, kpt and
 * cli-utils appliers decide "is it ready?" with), both sides of them. Pure.
 *
 * Properties:
 * - kstatusConditions() publishes one of three states: ready (Ready=True), reconciling (Ready=False and
 *   Reconciling=True), stalled (Ready=False and Stalled=True). Reconciling and Stalled are abnormal-true, as
 *   kstatus and Flux use them: present only while True, so they are never both there (kstatus reads whichever
 *   it meets first) and a Ready WebApp carries Ready alone. Ready's reason is the cause when False, so a
 *   REASON printer column says why.
 * - kstatusOf() is kstatus's generic rules for a custom resource (cli-utils v0.37.2 status.Compute without the
 *   built-in kinds' rules): deletionTimestamp → Terminating; status.observedGeneration ≠ metadata.generation →
 *   InProgress; the first of Reconciling=True (InProgress) / Stalled=True (Failed) in list order; else Ready
 *   (True: Current, False/Unknown: InProgress); else Current. tests/kstatus.test.ts checks it against kstatus.
 */
import type { KubeObject } from "../kube/types.ts";
import { record } from "./_json.ts";

export type Progress =
  | { kind: "ready"; reason: string; message: string }
  | { kind: "reconciling"; reason: string; message: string }
  | { kind: "stalled"; reason: string; message: string };

/** A metav1.Condition before lastTransitionTime/observedGeneration are stamped (api/conditions.ts ConditionState). */
export interface KstatusCondition {
  type: "Ready" | "Reconciling" | "Stalled";
  status: "True" | "False";
  reason: string;
  message: string;
}

/** Ready, then Reconciling or Stalled while it is True (absent otherwise). */
export function kstatusConditions(p: Progress): KstatusCondition[] {
  const ready: KstatusCondition = { type: "Ready", status: p.kind === "ready" ? "True" : "False", ...cause(p) };
  switch (p.kind) {
    case "ready":
      return [ready];
    case "reconciling":
      return [ready, { type: "Reconciling", status: "True", ...cause(p) }];
    case "stalled":
      return [ready, { type: "Stalled", status: "True", ...cause(p) }];
  }
}

/** The abnormal-true kstatus types: a stored one that is False says what its absence says. */
export const ABNORMAL_TRUE: readonly string[] = ["Reconciling", "Stalled"];

const cause = (p: Progress) => ({ reason: p.reason, message: p.message });

export type KstatusStatus = "InProgress" | "Failed" | "Current" | "Terminating";

/** kstatus's verdict on a custom resource, with its message. */
export function kstatusOf(obj: KubeObject): { status: KstatusStatus; message: string } {
  if (obj.metadata.deletionTimestamp) return { status: "Terminating", message: "Resource scheduled for deletion" };
  const status = record(obj.status);
  const generation = obj.metadata.generation;
  const observed = status.observedGeneration;
  if (typeof generation === "number" && typeof observed === "number" && observed !== generation) {
    const message = `${obj.kind} generation is ${generation}, but latest observed generation is ${observed}`;
    return { status: "InProgress", message };
  }
  const conditions = (Array.isArray(status.conditions) ? status.conditions : []).map(record);
  for (const c of conditions) {
    if (c.type === "Reconciling" && c.status === "True") return { status: "InProgress", message: text(c) };
    if (c.type === "Stalled" && c.status === "True") return { status: "Failed", message: text(c) };
  }
  const ready = conditions.find((c) => c.type === "Ready");
  if (ready?.status === "True") return { status: "Current", message: "Resource is Ready" };
  if (ready?.status === "False" || ready?.status === "Unknown") return { status: "InProgress", message: text(ready) };
  return { status: "Current", message: "Resource is current" };
}

const text = (c: Record<string, unknown>) => (typeof c.message === "string" ? c.message : "");
