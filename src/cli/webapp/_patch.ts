/**
 * A merge patch of one WebApp by `devctl` (its field manager), as `webapp scale` (through the scale subresource) and
 * `webapp rollout restart` send one. --dry-run=client only checks that the WebApp exists; server has the API server
 * check the patch and store nothing. A failure carries the CRD hint (_hint.ts).
 */
import { WEBAPP_RESOURCE } from "../../api/webapp.ts";
import type { KubeClient } from "../../kube/types.ts";
import type { DryRun } from "../_flags.ts";
import { withCrdHint } from "./_hint.ts";

export async function patchWebApp(
  client: KubeClient,
  where: { name: string; namespace: string },
  patch: Record<string, unknown>,
  dryRun: DryRun,
  subresource?: "scale",
): Promise<void> {
  try {
    if (dryRun === "client") await client.get(WEBAPP_RESOURCE, where.name, where.namespace);
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
