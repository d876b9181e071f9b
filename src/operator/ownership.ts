/**
 * Hands the fields our create recorded to our server-side-apply entry, so a field dropped from the intent
 * later is pruned (kubectl's and client-go's csaupgrade do the same for client-side apply).
 *
 * Why: children are created with a plain create (POST), which the API server serves at about half the cost of
 * a server-side apply of a new object (measured: Deployment 3.2 vs 5.8 ms, Service 9.8 vs 13.8 ms of
 * kube-apiserver CPU). A create records its fields under an "Update" entry of our field manager, and server-side
 * apply prunes only fields its own "Apply" entry owns. Changing values in place (image, replicas, targetPort)
 * needs no handover: the apply takes them over and nothing is dropped. An apply that reshapes the object (a new
 * port replaces the old one, see diff.ts `reshaped`) drops fields, so the Update entry is handed over first.
 *
 * Properties:
 * - Nothing is lost: the field sets of our Update entries (there can be two, see ownershipHandover) are joined to
 *   our Apply entry's (a set union of the fieldsV1 tries) and the Update entries removed; with no Apply entry yet,
 *   the first Update entry becomes it, holding the union. Renaming beside an existing Apply entry is never done:
 *   the API server keys entries by manager and operation, and of two equal keys it keeps the later one only,
 *   silently dropping the other's fields (managedfields.go DecodeManagedFields), which then nobody owns and no
 *   apply ever prunes.
 * - Computed from the whole object as the API server holds it (fieldsV1 included: the cache drops those), and
 *   exact: the patch tests the object's resourceVersion before it replaces managedFields, so a write in between
 *   fails with a 422 instead of being undone.
 * - Pure; undefined when there is nothing to hand over. `mayHaveCreateEntry` and `showsCreateEntry` answer from
 *   a cached view (entries without fieldsV1), to decide whether the object needs reading at all.
 */
import type { KubeObject } from "../kube/types.ts";

type HandoverOp = { op: "test" | "replace"; path: string; value: unknown };

/** What ownership needs of a managedFields entry (the cache keeps only these keys). */
export interface ManagerEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: unknown;
}

export function managerEntries(obj: KubeObject): ManagerEntry[] {
  return (obj.metadata.managedFields ?? []) as ManagerEntry[];
}

const ours = (e: ManagerEntry, manager: string, operation: "Apply" | "Update") =>
  e.manager === manager && e.operation === operation && !e.subresource;

/** The view shows the Update entry our create (or an adoption) recorded on the main resource. */
export function showsCreateEntry(obj: KubeObject, manager: string): boolean {
  return managerEntries(obj).some((e) => ours(e, manager, "Update"));
}

/**
 * The view may hold that Update entry: it shows it, or it carries no managedFields at all (then nobody can tell
 * without reading the object).
 */
export function mayHaveCreateEntry(obj: KubeObject, manager: string): boolean {
  return obj.metadata.managedFields === undefined || showsCreateEntry(obj, manager);
}

/**
 * The JSON patch handing our Update entries (main resource) over to apply; undefined if there are none.
 *
 * Every one of them: a write through /scale that leaves the replica count as it was adds a second one beside the
 * create's. Measured on kube-apiserver v1.36: `kubectl scale --replicas=<same>` on a Deployment we created gives two
 * webapp-operator/Update entries; the added one holds only spec.replicas, has no time and sorts first. (Read in
 * managedfields/scalehandler.go: our entry goes to the scale object keyed with autoscaling/v1, and on the way back
 * that key is not the parent's, so the entry is added anew.) Handing over only the first left the create's own entry,
 * and with it a port no apply could prune (the chaos soak's app-036). The next write collapses the two (see above).
 */
export function ownershipHandover(obj: KubeObject, manager: string): HandoverOp[] | undefined {
  const entries = managerEntries(obj);
  const updates = entries.filter((e) => ours(e, manager, "Update"));
  const [first] = updates;
  if (!first) return undefined;
  const apply = entries.find((e) => ours(e, manager, "Apply"));
  const sets = [apply, ...updates].flatMap((e) => (e?.fieldsV1 === undefined ? [] : [e.fieldsV1]));
  const joined = sets.length > 0 ? { fieldsV1: sets.reduce<unknown>((a, b) => unionFields(a, b), undefined) } : {};
  const into = apply ?? first;
  const handedOver = entries
    .filter((e) => e === into || !updates.includes(e))
    .map((e) => (e === into ? { ...e, operation: "Apply", ...joined } : e));
  return [
    { op: "test", path: "/metadata/resourceVersion", value: obj.metadata.resourceVersion },
    { op: "replace", path: "/metadata/managedFields", value: handedOver },
  ];
}

/**
 * The union of two field sets in the fieldsV1 format: a trie of objects whose keys name fields ("f:x"), list
 * items ("k:{...}", "v:...", "i:n") or the node itself ("."), every leaf an empty object.
 */
export function unionFields(a: unknown, b: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...asTrie(a) };
  for (const [key, value] of Object.entries(asTrie(b))) out[key] = key in out ? unionFields(out[key], value) : value;
  return out;
}

const asTrie = (x: unknown): Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : {};
