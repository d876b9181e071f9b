/**
 * `devctl operator uninstall`: removes what install applied, newest first, keeping user data.
 *
 * Properties:
 * - Deletes the Deployment, the PodDisruptionBudget, the NetworkPolicy (if installed with one), the RBAC, the
 *   ServiceAccount and the leader-election Lease of the install in `namespace`; an object already gone is
 *   reported, not an error (uninstall is idempotent), except an optional one (the NetworkPolicy) never installed.
 * - Keeps the CRD and therefore every WebApp (and their Deployments and Services) unless `deleteCrd`.
 * - Deletes the install namespace only if devctl created it and nobody else changed it: labelled
 *   app.kubernetes.io/managed-by=devctl and every managedFields entry is devctl's. A namespace that
 *   existed before (or that other tools wrote to) is kept and said so.
 * - webAppFootprint() counts what deleting the CRD would take with it, for the confirmation prompt.
 * - waitUntilGone() (`uninstall --wait`) returns only when every deleted object, the namespace and
 *   the operator's pods are gone, so an install right after it starts clean.
 */
import { CRD_NAME, DEPLOYMENT_RESOURCE, KIND, SERVICE_RESOURCE, WEBAPP_RESOURCE, API_VERSION } from "../api/webapp.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import { InstallError } from "./apply.ts";
import { namespaceIsOurs } from "./namespace-labels.ts";
import {
  APP_NAME,
  APP_NAME_LABEL,
  buildManifests,
  defaultImage,
  displayName,
  LEASE_NAME,
  leftOut,
  resourceOf,
} from "./manifests.ts";
import { CRDS, LEASES, NAMESPACES, PODS, qualifiedName } from "../kube/resources.ts";

export { namespaceIsOurs };

export type DeleteAction = "deleted" | "not found" | "kept" | "already being deleted";

export interface DeletedObject {
  name: string;
  action: DeleteAction;
  /** Why it was kept. */
  note?: string;
  /** What to wait for when the object was deleted (or was already being deleted). */
  ref?: { rt: ResourceType; name: string; namespace?: string };
}

export interface Footprint {
  webapps: number;
  namespaces: string[];
  /** Deployments and Services controlled by a WebApp (garbage-collected with it). */
  deployments: number;
  services: number;
}

/** What deleting the WebApp CRD would delete. Zero of everything when the CRD is not installed. */
export async function webAppFootprint(client: KubeClient, signal?: AbortSignal): Promise<Footprint> {
  const sig = signal ? { signal } : {};
  let webapps: KubeObject[];
  try {
    webapps = (await client.listAll(WEBAPP_RESOURCE, sig)).items;
  } catch (e) {
    if (isNotFound(e)) return { webapps: 0, namespaces: [], deployments: 0, services: 0 };
    throw e;
  }
  const owned = (o: KubeObject) =>
    o.metadata.ownerReferences?.some((r) => r.controller && r.kind === KIND && r.apiVersion === API_VERSION) ?? false;
  const [deps, svcs] = await Promise.all([
    client.listAll(DEPLOYMENT_RESOURCE, sig),
    client.listAll(SERVICE_RESOURCE, sig),
  ]);
  return {
    webapps: webapps.length,
    namespaces: [...new Set(webapps.map((w) => w.metadata.namespace as string))].sort(),
    deployments: deps.items.filter(owned).length,
    services: svcs.items.filter(owned).length,
  };
}

export interface UninstallOptions {
  deleteCrd: boolean;
  onDeleted?: (d: DeletedObject) => void;
  signal?: AbortSignal;
}

export async function uninstall(client: KubeClient, namespace: string, o: UninstallOptions): Promise<DeletedObject[]> {
  // The names come from the same builders install uses; image and replicas do not matter here.
  const minimal = { namespace, image: defaultImage(), replicas: 1 };
  const objects = buildManifests({ ...minimal, networkPolicy: true });
  const optional = new Set(leftOut(minimal).map(displayName));
  const results: DeletedObject[] = [];
  const report = (d: DeletedObject) => {
    results.push(d);
    o.onDeleted?.(d);
  };
  const remove = async (rt: ResourceType, name: string, ns: string | undefined, display: string) => {
    try {
      await client.delete(rt, name, ns, { propagationPolicy: "Background", ...(o.signal ? { signal: o.signal } : {}) });
      report({ name: display, action: "deleted", ref: { rt, name, ...(ns ? { namespace: ns } : {}) } });
    } catch (e) {
      if (!isNotFound(e)) throw e;
      if (!optional.has(display)) report({ name: display, action: "not found" });
    }
  };
  for (const obj of [...objects].reverse()) {
    if (obj.kind === "CustomResourceDefinition" || obj.kind === "Namespace") continue;
    await remove(resourceOf(obj), obj.metadata.name as string, obj.metadata.namespace, displayName(obj));
  }
  await remove(LEASES, LEASE_NAME, namespace, qualifiedName(LEASES, LEASE_NAME));

  let ns: KubeObject | undefined;
  try {
    ns = await client.get<KubeObject>(NAMESPACES, namespace, undefined, o.signal);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (!ns) report({ name: `namespace/${namespace}`, action: "not found" });
  else if (ns.metadata.deletionTimestamp)
    report({
      name: `namespace/${namespace}`,
      action: "already being deleted",
      ref: { rt: NAMESPACES, name: namespace },
    });
  else if (namespaceIsOurs(ns)) await remove(NAMESPACES, namespace, undefined, `namespace/${namespace}`);
  else
    report({
      name: `namespace/${namespace}`,
      action: "kept",
      note: "it was not created by devctl alone (other tools wrote to it); delete it yourself if it is no longer needed",
    });

  const crd = qualifiedName(CRDS, CRD_NAME);
  if (o.deleteCrd) await remove(CRDS, CRD_NAME, undefined, crd);
  else
    report({ name: crd, action: "kept", note: "WebApps stay; pass --delete-crd to remove the CRD and every WebApp" });
  return results;
}

export const GONE_POLL_MS = 1000;

/**
 * Resolves once every object uninstall deleted is gone and no operator pod is left in `namespace`
 * (a Terminating namespace counts as there). Reports what it still waits for when that changes;
 * InstallError at the timeout naming what is left.
 */
export async function waitUntilGone(
  client: KubeClient,
  namespace: string,
  deleted: readonly DeletedObject[],
  o: { clock: Clock; timeoutMs: number; onProgress?: (line: string) => void; signal?: AbortSignal },
): Promise<void> {
  const started = o.clock.now();
  let last = "";
  for (;;) {
    const left: string[] = [];
    for (const d of deleted) {
      if (!d.ref) continue;
      try {
        await client.get(d.ref.rt, d.ref.name, d.ref.namespace, o.signal);
        left.push(d.name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
    const pods = await client
      .list(PODS, {
        namespace,
        labelSelector: `${APP_NAME_LABEL}=${APP_NAME}`,
        ...(o.signal ? { signal: o.signal } : {}),
      })
      .catch((e: unknown) => {
        if (isNotFound(e)) return { metadata: {}, items: [] };
        throw e;
      });
    left.push(...pods.items.map((p) => `pod/${p.metadata.name}`));
    if (!left.length) return;
    const elapsed = o.clock.now() - started;
    if (elapsed >= o.timeoutMs || o.signal?.aborted)
      throw new InstallError(
        `still there after ${Math.round(elapsed / 1000)} s: ${left.join(", ")}. ` +
          `Look at kubectl get namespace ${namespace} -o yaml (finalizers, conditions), or wait longer with --timeout`,
      );
    const line = `waiting for ${left.join(", ")} to be gone (${Math.round(elapsed / 1000)}s)`;
    if (line.replace(/ \(\d+s\)$/, "") !== last) o.onProgress?.(line);
    last = line.replace(/ \(\d+s\)$/, "");
    await o.clock.sleep(GONE_POLL_MS, o.signal);
  }
}
