/**
 * `operator install --dry-run=server`: every object is sent to the API server as a server-side apply with
 * dryRun=All, so admission, the schema and RBAC check it and nothing is stored; each line says what the
 * apply would do (created, configured, unchanged). Objects in a namespace that does not exist yet cannot
 * be checked this way (the API server refuses them; kubectl has the same limit): they are reported as such.
 */
import { FIELD_MANAGER, fitNamespace } from "../../install/apply.ts";
import { displayName, resourceOf } from "../../install/manifests.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeClient, KubeObject } from "../../kube/types.ts";

export type DryRunLine = { name: string; action: "created" | "configured" | "unchanged" | "unchecked"; note?: string };

export async function serverDryRun(client: KubeClient, objects: readonly KubeObject[]): Promise<DryRunLine[]> {
  const missingNamespaces = new Set<string>();
  const lines: DryRunLine[] = [];
  // The Namespace as install would apply it: Pod Security labels someone else set are kept (install/namespace-labels.ts).
  for (const obj of (await fitNamespace(client, objects)).objects) {
    const rt = resourceOf(obj);
    const ns = rt.namespaced ? obj.metadata.namespace : undefined;
    if (ns && missingNamespaces.has(ns)) {
      lines.push({ name: displayName(obj), action: "unchecked", note: `namespace ${ns} does not exist yet` });
      continue;
    }
    const before = await client.get(rt, obj.metadata.name as string, ns).catch((e) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    const after = await client.apply<KubeObject>(rt, obj, { fieldManager: FIELD_MANAGER, force: true, dryRun: true });
    if (obj.kind === "Namespace" && !before) missingNamespaces.add(obj.metadata.name as string);
    const action = !before
      ? "created"
      : JSON.stringify(stripVolatile(before)) === JSON.stringify(stripVolatile(after))
        ? "unchanged"
        : "configured";
    lines.push({ name: displayName(obj), action });
  }
  return lines;
}

/** A dry-run apply returns the object as it would be stored; bookkeeping fields differ even when nothing changes. */
function stripVolatile(o: KubeObject): unknown {
  const { managedFields: _m, resourceVersion: _r, generation: _g, ...metadata } = o.metadata as Record<string, unknown>;
  const { status: _s, ...rest } = o as KubeObject & { status?: unknown };
  return { ...rest, metadata };
}
