/**
 * The ordered, idempotent apply behind `devctl operator install`.
 *
 * Properties:
 * - Safe start: nothing is written until (1) the identity in use holds get/create/patch on every
 *   kind in the list (all missing permissions reported at once), and (2) any existing WebApp CRD is
 *   ours (labelled app.kubernetes.io/managed-by=devctl) and not of a newer schema version.
 * - Ordered: objects are server-side applied (field manager "devctl", force) in list order, and
 *   nothing after the CRD is applied before the CRD is Established.
 * - The Namespace keeps Pod Security labels someone else set, and one that existed before gets none it
 *   lacks (namespace-labels.ts); what is left out is said through onProgress, with the command that sets it.
 * - Objects in `absent` (an optional part the options leave out, such as the NetworkPolicy without
 *   --network-policy) are deleted after the apply when they exist and are labelled as devctl's.
 * - Reports what happened to each object as a value: created (it did not exist), configured (its
 *   resourceVersion moved), unchanged (same resourceVersion before and after: the apply was a no-op).
 * - Failures are InstallError (a message saying what to fix) or the KubeError of the failed call
 *   (Unreachable names the server and context, Forbidden the verb and resource).
 */
import { CRD_SCHEMA_VERSION, MANAGED_BY_DEVCTL, MANAGED_BY_LABEL, SCHEMA_VERSION_ANNOTATION } from "../api/crd.ts";
import { DEVCTL_FIELD_MANAGER } from "../api/names.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import { deniedChecks, describeChecks, type AccessCheck } from "./access.ts";
import { displayName, resourceOf } from "./manifests.ts";
import {
  describeLeft,
  labelCommand,
  type LabelPlan,
  podSecurityLabelPlan,
  withPlannedLabels,
} from "./namespace-labels.ts";

/** devctl's field manager (api/names.ts), under the name install's modules import. */
export { DEVCTL_FIELD_MANAGER as FIELD_MANAGER };

export const CRD_POLL_MS = 250;

export class InstallError extends Error {
  override readonly name = "InstallError";
}

/** What an apply did; "deleted" is an object of ApplyOptions.absent that was there. */
export type ApplyAction = "created" | "configured" | "unchanged" | "deleted";

export interface AppliedObject {
  /** kubectl-style: `deployment.apps/webapp-operator`. */
  name: string;
  action: ApplyAction;
  object: KubeObject;
}

export interface ApplyOptions {
  clock: Clock;
  /** How long the CRD may take to become Established. */
  timeoutMs: number;
  /** Called after each object is applied, in order. */
  onApplied?: (r: AppliedObject) => void;
  /** Progress while waiting, and notes (one line each). */
  onProgress?: (line: string) => void;
  /** Objects the options leave out: deleted if they exist and are devctl's (labelled managed-by=devctl). */
  absent?: readonly KubeObject[];
  signal?: AbortSignal;
}

interface Crd extends KubeObject {
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** Why an existing CRD of our name must not be overwritten; undefined when it may be. */
export function crdConflict(
  existing: KubeObject | undefined,
  ourSchemaVersion: string = CRD_SCHEMA_VERSION,
): string | undefined {
  if (!existing) return undefined;
  const name = existing.metadata.name;
  const managedBy = existing.metadata.labels?.[MANAGED_BY_LABEL];
  if (managedBy !== MANAGED_BY_DEVCTL) {
    return (
      `the CustomResourceDefinition ${name} already exists and was not installed by devctl ` +
      `(label ${MANAGED_BY_LABEL}=${managedBy ?? "<none>"}). devctl will not overwrite it: remove it first ` +
      `(kubectl delete crd ${name} — this deletes every WebApp) or keep using the operator that installed it`
    );
  }
  const theirs = existing.metadata.annotations?.[SCHEMA_VERSION_ANNOTATION];
  if (theirs !== undefined && !(Number(theirs) <= Number(ourSchemaVersion))) {
    return (
      `the CustomResourceDefinition ${name} has schema version ${theirs} (annotation ${SCHEMA_VERSION_ANNOTATION}), ` +
      `newer than this devctl's ${ourSchemaVersion}: installing would downgrade it. Use the devctl release that installed it, or a newer one`
    );
  }
  return undefined;
}

/** get + create + patch on each object's kind (server-side apply of a new object needs create too). */
export function accessChecksFor(objects: readonly KubeObject[]): AccessCheck[] {
  const checks: AccessCheck[] = [];
  const seen = new Set<string>();
  for (const obj of objects) {
    const rt = resourceOf(obj);
    const namespace = rt.namespaced ? obj.metadata.namespace : undefined;
    const key = `${rt.group}/${rt.plural}/${namespace ?? ""}`;
    if (seen.has(key)) continue;
    seen.add(key);
    for (const verb of ["get", "create", "patch"])
      checks.push({ verb, group: rt.group, resource: rt.plural, ...(namespace ? { namespace } : {}) });
  }
  return checks;
}

export async function getOrUndefined<T extends KubeObject>(
  client: KubeClient,
  obj: KubeObject,
  signal?: AbortSignal,
): Promise<T | undefined> {
  try {
    return await client.get<T>(resourceOf(obj), obj.metadata.name as string, obj.metadata.namespace, signal);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export async function applyAll(
  client: KubeClient,
  objects: readonly KubeObject[],
  o: ApplyOptions,
): Promise<AppliedObject[]> {
  const denied = await deniedChecks(client, accessChecksFor(objects), o.signal);
  if (denied.length > 0) {
    throw new InstallError(
      `missing permissions for the install (context "${client.context || "in-cluster"}"): ${describeChecks(denied)}. ` +
        "Ask a cluster admin to grant them, or use a context with cluster-admin rights",
    );
  }
  for (const crd of objects.filter((x) => x.kind === "CustomResourceDefinition")) {
    const conflict = crdConflict(await getOrUndefined(client, crd, o.signal));
    if (conflict) throw new InstallError(conflict);
  }
  const fitted = await fitNamespace(client, objects, o.signal);
  if (fitted.left.length) o.onProgress?.(fitted.note);
  const results: AppliedObject[] = [];
  for (const obj of fitted.objects) {
    const before = await getOrUndefined(client, obj, o.signal);
    const after = await client.apply<KubeObject>(resourceOf(obj), obj, {
      fieldManager: DEVCTL_FIELD_MANAGER,
      force: true,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const action: ApplyAction = !before
      ? "created"
      : before.metadata.resourceVersion === after.metadata.resourceVersion
        ? "unchanged"
        : "configured";
    const r = { name: displayName(obj), action, object: after };
    results.push(r);
    o.onApplied?.(r);
    if (obj.kind === "CustomResourceDefinition") await waitEstablished(client, obj, o);
  }
  for (const obj of o.absent ?? []) {
    const r = await removeAbsent(client, obj, o);
    if (!r) continue;
    results.push(r);
    o.onApplied?.(r);
  }
  return results;
}

/**
 * `objects` with the Namespace's Pod Security labels fitted to the live namespace (namespace-labels.ts), the
 * labels left out, and the note that says so.
 */
export async function fitNamespace(
  client: KubeClient,
  objects: readonly KubeObject[],
  signal?: AbortSignal,
): Promise<{ objects: KubeObject[]; left: LabelPlan["left"]; note: string }> {
  const ns = objects.find((x) => x.kind === "Namespace");
  if (!ns) return { objects: [...objects], left: [], note: "" };
  const plan = podSecurityLabelPlan(await getOrUndefined(client, ns, signal));
  const name = ns.metadata.name as string;
  const note = plan.left.length
    ? `the Pod Security labels of namespace ${name} are not devctl's to set, so they stay as they are ` +
      `(${describeLeft(plan.left)}). The operator's pods meet "restricted"; to enforce it there: ${labelCommand(name, plan.left)}`
    : "";
  return { objects: objects.map((x) => (x === ns ? withPlannedLabels(x, plan) : x)), left: plan.left, note };
}

async function removeAbsent(client: KubeClient, obj: KubeObject, o: ApplyOptions): Promise<AppliedObject | undefined> {
  let live: KubeObject | undefined;
  try {
    live = await getOrUndefined(client, obj, o.signal);
  } catch (e) {
    if (!isForbidden(e)) throw e;
    o.onProgress?.(
      `could not check for ${displayName(obj)} (${(e as Error).message}); delete it yourself if it is there`,
    );
    return undefined;
  }
  if (!live || live.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_DEVCTL) return undefined;
  try {
    await client.delete(resourceOf(obj), obj.metadata.name as string, obj.metadata.namespace, {
      ...(live.metadata.uid ? { preconditions: { uid: live.metadata.uid } } : {}),
      ...(o.signal ? { signal: o.signal } : {}),
    });
  } catch (e) {
    if (isNotFound(e)) return undefined;
    if (!isForbidden(e)) throw e;
    o.onProgress?.(`could not delete ${displayName(obj)}, which this install leaves out (${(e as Error).message})`);
    return undefined;
  }
  return { name: displayName(obj), action: "deleted", object: live };
}

const established = (crd: Crd | undefined) =>
  crd?.status?.conditions?.find((c) => c.type === "Established")?.status === "True";

async function waitEstablished(client: KubeClient, crd: KubeObject, o: ApplyOptions): Promise<void> {
  const deadline = o.clock.now() + o.timeoutMs;
  let said = false;
  for (;;) {
    const live = await getOrUndefined<Crd>(client, crd, o.signal);
    if (established(live)) return;
    if (o.clock.now() >= deadline || o.signal?.aborted) {
      const why = live?.status?.conditions
        ?.filter((c) => c.status !== "True")
        .map((c) => `${c.type}: ${c.message || c.reason}`)
        .join("; ");
      throw new InstallError(
        `the CustomResourceDefinition ${crd.metadata.name} was not Established within ${Math.round(o.timeoutMs / 1000)} s${why ? ` (${why})` : ""}`,
      );
    }
    if (!said) o.onProgress?.(`waiting for the CustomResourceDefinition ${crd.metadata.name} to be Established`);
    said = true;
    await o.clock.sleep(CRD_POLL_MS, o.signal);
  }
}
