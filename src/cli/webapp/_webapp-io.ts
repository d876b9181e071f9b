/**
 * One WebApp read or written by a `devctl webapp` command; a failure carries the CRD hint (_hint.ts).
 * - getWebApp: a GET, as get, describe and the rollout commands read the WebApp they are named.
 * - patchWebApp: a merge patch by `devctl` (its field manager), as `webapp scale` (through the scale subresource),
 *   `rollout restart` and `rollout undo` send one. --dry-run=client only checks that the WebApp exists; server has
 *   the API server check the patch and store nothing.
 */
import { WEBAPP_RESOURCE } from "../../api/webapp.ts";
import type { KubeClient } from "../../kube/types.ts";
import type { DryRun } from "../_flags.ts";
import { withCrdHint } from "./_hint.ts";
import type { WebApp } from "./_print.ts";

export async function getWebApp(client: KubeClient, name: string, namespace: string): Promise<WebApp> {
  try {
    return await client.get<WebApp>(WEBAPP_RESOURCE, name, namespace);
  } catch (e) {
    throw withCrdHint(e);
  }
}

export async function patchWebApp(
  client: KubeClient,
  where: { name: string; namespace: string },
  patch: Record<string, unknown>,
  dryRun: DryRun,
  subresource?: "scale",
): Promise<void> {
  try {
    if (dryRun === "client") await getWebApp(client, where.name, where.namespace);
    else
      await client.patch(WEBAPP_RESOURCE, where.name, where.namespace, patch, "merge", {
        ...(subresource ? { subresource } : {}),
        fieldManager: "devctl",
        ...(dryRun === "server" ? { dryRun: true } : {}),
      });
  } catch (e) {
    throw withCrdHint(e);
  }
}
