/**
 * Decides whether an apply intent (desired.ts) would change the live object, comparing owned fields only.
 *
 * Properties:
 * - Owned fields only: metadata.labels, metadata.annotations, metadata.ownerReferences, and every other
 *   top-level field of the intent except apiVersion, kind and status. Fields the intent leaves out
 *   (server defaults such as strategy, clusterIP, terminationMessagePath) are never compared.
 * - Maps are subsets: every desired key must be present in live with an equal value; extra live
 *   keys (labels others added, defaulted fields) are fine.
 * - Lists of objects are matched by key (uid, then name, then containerPort, then port), as server-side
 *   apply merges them; extra live items are fine, a desired item missing from live is a difference. Lists whose
 *   items have none of those keys are atomic in the Kubernetes API (an HPA's metrics, an Ingress's rules): matched
 *   by index, and a live list of another length is a difference (a metric the spec dropped).
 *   Lists of scalars must be equal.
 * - Scalars are compared exactly (8080 differs from "8080").
 * - `diffs` names every difference at its leaf, e.g. "spec.replicas",
 *   "spec.template.spec.containers[app].image", "spec.ports[http].targetPort", with what the intent wants there
 *   and what live has (null: absent), which tells a value admission gave our own write from someone's later edit
 *   (admission.ts); applying the intent changes live iff there is any.
 * - Our own annotations (OWN_ANNOTATIONS) are ours alone: one on live that the intent lacks is a difference too
 *   (want null). desired.ts sets TEMPLATE_FIELDS_ANNOTATION to stand for the optional pod-template fields it sets
 *   (their digest, desired-template.ts), so dropping a field, a variable or a label from the spec, which the rules
 *   above cannot see (a live field the intent has not is no difference), changes or drops it. Should someone else
 *   hold that annotation too, the apply cannot drop it; that one write's answer is then recorded as admitted
 *   (admission.ts) and not repeated.
 * - reshapes(diffs) is true when a difference is a field or list item the live object does not have at all (a new
 *   port, a new container), or one the intent dropped (want null), or one of our own annotations: applying such an
 *   intent changes which fields are ours, and may drop some (ownership.ts hands creation-time ownership to apply
 *   first, without which an apply prunes nothing the create set).
 * - `extra` counts the items of keyed lists in live that the intent has none for (another port, another
 *   container). Not a difference (someone else's item is theirs to keep), but one the create recorded under our
 *   Update entry is a leftover no apply prunes until that entry is handed over (converge.ts `update`).
 */
import { GROUP, KIND } from "../api/webapp.ts";
import { TEMPLATE_FIELDS_ANNOTATION } from "./desired-template.ts";
import type { KubeObject, OwnerReference } from "../kube/types.ts";

export interface ApplyCheck {
  /** The differing owned fields, in the intent's field order, with both values; applying changes live iff any. */
  diffs: Diff[];
  /** How many items of keyed lists in live the intent has none for (not a difference by itself). */
  extra: number;
}

/** One owned field whose live value is not the intent's. */
export interface Diff {
  path: string;
  want: unknown;
  /** What live has there; null when it has nothing. */
  have: unknown;
}

const UNCOMPARED = new Set(["apiVersion", "kind", "metadata", "status"]);
/** Annotations only devctl writes (see the module doc). */
export const OWN_ANNOTATIONS: ReadonlySet<string> = new Set([TEMPLATE_FIELDS_ANNOTATION]);
const OWNED_METADATA = ["labels", "annotations", "ownerReferences"] as const;
/** How list items are matched, first key present on the desired item wins. */
const LIST_KEYS = ["uid", "name", "containerPort", "port"] as const;

export function needsApply(desired: KubeObject, live: KubeObject): ApplyCheck {
  const out: ApplyCheck = { diffs: [], extra: 0 };
  for (const key of OWNED_METADATA) {
    const want = desired.metadata[key];
    if (want !== undefined) compare(want, live.metadata?.[key], `metadata${segment(key)}`, out);
  }
  for (const [key, have] of Object.entries(live.metadata?.annotations ?? {})) {
    if (OWN_ANNOTATIONS.has(key) && desired.metadata.annotations?.[key] === undefined)
      out.diffs.push({ path: `metadata.annotations${segment(key)}`, want: null, have });
  }
  for (const [key, want] of Object.entries(desired)) {
    if (!UNCOMPARED.has(key) && want !== undefined) compare(want, live[key], segment(key).slice(1), out);
  }
  return out;
}

/** Some difference adds or drops a field or list item, or is one of our annotations (see the module doc). */
export const reshapes = (diffs: readonly Diff[]): boolean =>
  diffs.some((d) => d.have === null || d.want === null || OWN_ANNOTATION_PATHS.has(d.path));

const OWN_ANNOTATION_PATHS = new Set([...OWN_ANNOTATIONS].map((key) => `metadata.annotations${segment(key)}`));

function differs(out: ApplyCheck, path: string, want: unknown, have: unknown): void {
  out.diffs.push({ path, want, have: have ?? null });
}

/** The owner reference with controller=true, if any. */
export function controllerOf(obj: Pick<KubeObject, "metadata">): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** The controller reference when it names a WebApp of our group (any uid: a previous incarnation's too). */
export function webAppControllerOf(obj: Pick<KubeObject, "metadata">): OwnerReference | undefined {
  const ref = controllerOf(obj);
  return ref && ref.kind === KIND && ref.apiVersion.split("/")[0] === GROUP ? ref : undefined;
}

/** True iff the object's controller reference points at this WebApp (same uid). */
export function isControlledBy(obj: KubeObject, webapp: { metadata: { uid?: string } }): boolean {
  const uid = webapp.metadata.uid;
  return uid !== undefined && controllerOf(obj)?.uid === uid;
}

function compare(want: unknown, have: unknown, path: string, out: ApplyCheck): void {
  if (have === undefined) {
    differs(out, path, want, have);
    return;
  }
  if (Array.isArray(want)) {
    if (!Array.isArray(have)) differs(out, path, want, have);
    else if (want.every(isRecord)) compareKeyedList(want, have, path, out);
    else if (want.length !== have.length || want.some((w, i) => !scalarEqual(w, have[i])))
      differs(out, path, want, have);
    return;
  }
  if (isRecord(want)) {
    if (!isRecord(have)) {
      differs(out, path, want, have);
      return;
    }
    for (const [key, value] of Object.entries(want)) {
      if (value !== undefined) compare(value, have[key], path + segment(key), out);
    }
    return;
  }
  if (!scalarEqual(want, have)) differs(out, path, want, have);
}

function compareKeyedList(want: Record<string, unknown>[], have: unknown[], path: string, out: ApplyCheck): void {
  if (want.every((item) => LIST_KEYS.every((k) => item[k] === undefined)) && want.length !== have.length) {
    differs(out, path, want, have); // items without a key: an atomic list (an HPA's metrics), whole or not at all
    return;
  }
  const matched = new Set<unknown>();
  want.forEach((item, index) => {
    const key = LIST_KEYS.find((k) => item[k] !== undefined);
    const match = key === undefined ? have[index] : have.find((h) => isRecord(h) && h[key] === item[key]);
    if (match !== undefined) matched.add(match);
    const label = String(item.name ?? (key === undefined ? index : item[key]));
    compare(item, match, `${path}[${label}]`, out);
  });
  out.extra += have.filter((h) => !matched.has(h)).length;
}

const scalarEqual = (a: unknown, b: unknown): boolean => a === b;

/** A JSON object (not null, not an array). */
export const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** ".replicas", or "[app.kubernetes.io/name]" for keys that are not plain identifiers. */
function segment(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? `.${key}` : `[${key}]`;
}
