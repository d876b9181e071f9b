/**
 * Which of the install namespace's Pod Security labels (hardening.ts) install may write, decided from the
 * live namespace; pure.
 *
 * Properties:
 * - Never clobbers a label someone else set: a Pod Security label with another value that devctl's field
 *   manager does not own is left as it is (server-side apply with force would otherwise take it over).
 * - A namespace devctl manages gets every label it lacks: one that does not exist yet, one devctl created
 *   alone (namespaceIsOurs), or one whose Pod Security labels devctl already owns (an earlier install set them).
 * - A namespace devctl does not manage (it existed before the install) gets none it lacks: adding "enforce
 *   restricted" there would refuse its other pods. What is left out is a value (`left`), which install prints
 *   and `operator status` reports as a problem with the `kubectl label` command that adds it.
 */
import { MANAGED_BY_DEVCTL, MANAGED_BY_LABEL } from "../api/crd.ts";
import { DEVCTL_FIELD_MANAGER } from "../api/names.ts";
import type { KubeObject } from "../kube/types.ts";
import { POD_SECURITY_LABELS } from "./hardening.ts";

export interface LabelPlan {
  /** The Pod Security labels to apply (a subset of POD_SECURITY_LABELS). */
  apply: Record<string, string>;
  /** The wanted labels install leaves out, each with the namespace's own value (undefined: not set). */
  left: { key: string; want: string; have?: string }[];
}

interface ManagedField {
  manager?: string;
  operation?: string;
  fieldsV1?: { "f:metadata"?: { "f:labels"?: Record<string, unknown> } };
}

/**
 * An entry of install's server-side apply. Any client without a field manager of its own is named after its
 * User-Agent, and devctl's is "devctl" too: a create or update by it (operation Update) is not install's.
 */
const installApplied = (m: ManagedField) => m.manager === DEVCTL_FIELD_MANAGER && (m.operation ?? "Apply") === "Apply";

/** A namespace install created and nobody else touched. */
export function namespaceIsOurs(ns: KubeObject): boolean {
  if (ns.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_DEVCTL) return false;
  if (/^(default|kube-.*)$/.test(ns.metadata.name ?? "")) return false;
  return ((ns.metadata.managedFields ?? []) as ManagedField[]).every(installApplied);
}

/** The labels install's server-side apply owns on `obj`. */
function devctlOwnedLabels(obj: KubeObject): Set<string> {
  const owned = new Set<string>();
  for (const m of (obj.metadata.managedFields ?? []) as ManagedField[]) {
    if (!installApplied(m)) continue;
    for (const k of Object.keys(m.fieldsV1?.["f:metadata"]?.["f:labels"] ?? {})) owned.add(k.replace(/^f:/, ""));
  }
  return owned;
}

export function podSecurityLabelPlan(
  live: KubeObject | undefined,
  wanted: Readonly<Record<string, string>> = POD_SECURITY_LABELS,
): LabelPlan {
  if (!live) return { apply: { ...wanted }, left: [] };
  const have = live.metadata.labels ?? {};
  const owned = devctlOwnedLabels(live);
  const manages = namespaceIsOurs(live) || Object.keys(wanted).some((k) => owned.has(k));
  const plan: LabelPlan = { apply: {}, left: [] };
  for (const [key, want] of Object.entries(wanted)) {
    const theirs = have[key];
    if (theirs === want || owned.has(key) || (theirs === undefined && manages)) plan.apply[key] = want;
    else plan.left.push({ key, want, ...(theirs !== undefined ? { have: theirs } : {}) });
  }
  return plan;
}

/** The wanted labels `labels` lacks or has with another value (status: what is missing). */
export function missingLabels(
  labels: Readonly<Record<string, string>>,
  wanted: Readonly<Record<string, string>> = POD_SECURITY_LABELS,
): LabelPlan["left"] {
  return Object.entries(wanted)
    .filter(([key, want]) => labels[key] !== want)
    .map(([key, want]) => ({ key, want, ...(labels[key] !== undefined ? { have: labels[key] } : {}) }));
}

/** `pod-security.kubernetes.io/enforce is "privileged", pod-security.kubernetes.io/audit is not set`. */
export function describeLeft(left: LabelPlan["left"]): string {
  return left.map((l) => `${l.key} is ${l.have === undefined ? "not set" : `"${l.have}"`}`).join(", ");
}

/** The command that sets them. */
export function labelCommand(namespace: string, left: LabelPlan["left"]): string {
  return `kubectl label namespace ${namespace} ${left.map((l) => `${l.key}=${l.want}`).join(" ")} --overwrite`;
}

/** The Namespace object of `objects` with only the Pod Security labels the plan applies. */
export function withPlannedLabels(ns: KubeObject, plan: LabelPlan): KubeObject {
  const labels = Object.fromEntries(
    Object.entries(ns.metadata.labels ?? {}).filter(([k]) => !(k in POD_SECURITY_LABELS) || k in plan.apply),
  );
  return { ...ns, metadata: { ...ns.metadata, labels } };
}
