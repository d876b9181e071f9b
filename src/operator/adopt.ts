/**
 * Taking over the children of an earlier WebApp of the same name (pure; the reconciler does the I/O).
 *
 * Why: when a WebApp is deleted and created again under the same name while the garbage collector's
 * watch is down (an API-server restart makes every watcher re-list), the collector sees only the new
 * object under that key, never the deletion of the old uid, and the old children stay forever
 * (measured by the chaos soak; kubernetes/kubernetes#109748 is the same blind spot at collector start).
 * Left alone, the new WebApp would be Degraded/ResourceExists for good.
 *
 * Properties:
 * - Only a child whose controller reference is a WebApp (our group) with the *same name* and another
 *   uid is a candidate: names are unique in a namespace, so that owner is gone. Anything else
 *   (someone else's object, another WebApp, no controller) is never taken over, nor is a child that is
 *   being deleted.
 * - The caller must first confirm with a GET that this WebApp is the live one (same uid, not being
 *   deleted): a stale cache must not take children away from a newer incarnation.
 * - The patch is a JSON patch whose `test` operations pin the child's uid and the old owner's uid at
 *   its index, so a child replaced or re-owned meanwhile makes it fail instead of landing elsewhere;
 *   it replaces just that owner reference and keeps any others.
 */
import { KIND, type WebApp } from "../api/webapp.ts";
import type { KubeObject, OwnerReference } from "../kube/types.ts";
import { controllerReference } from "./desired.ts";
import { webAppControllerOf } from "./diff.ts";

/** The controller reference of a previous incarnation of `webapp`, if `child` has one. */
export function previousIncarnation(child: KubeObject, webapp: WebApp): OwnerReference | undefined {
  const ref = webAppControllerOf(child);
  // A child being deleted is the collector's: its deletion event brings the WebApp back to create anew.
  if (!ref || !webapp.metadata.uid || child.metadata.deletionTimestamp) return undefined;
  return ref.name === webapp.metadata.name && ref.uid !== webapp.metadata.uid ? ref : undefined;
}

export type JsonPatchOp = { op: "test" | "replace"; path: string; value: unknown };

/** The JSON patch that moves `child` from its previous owner to `webapp`. */
export function adoptionPatch(child: KubeObject, webapp: WebApp): JsonPatchOp[] {
  const refs = child.metadata.ownerReferences ?? [];
  const previous = previousIncarnation(child, webapp);
  const index = previous ? refs.indexOf(previous) : -1;
  const ref = controllerReference(webapp);
  if (index < 0 || !ref)
    throw new Error(
      `${child.kind} ${child.metadata.name} is not a child of a previous ${KIND} ${webapp.metadata.name}`,
    );
  return [
    { op: "test", path: "/metadata/uid", value: child.metadata.uid },
    { op: "test", path: `/metadata/ownerReferences/${index}/uid`, value: refs[index]!.uid },
    { op: "replace", path: `/metadata/ownerReferences/${index}`, value: ref },
  ];
}
