/**
 * `devctl webapp delete NAME`: deletes a WebApp (its Deployment and Service go with it, by owner reference),
 * as `kubectl delete webapp` does; `--dry-run=client` only checks it exists, `--dry-run=server` has the API
 * server run the deletion without doing it; `--ignore-not-found` makes a missing one a success.
 */
import { defineCommand } from "citty";
import { SINGULAR, WEBAPP_RESOURCE } from "../../api/webapp.ts";
import { isNotFound } from "../../kube/errors.ts";
import { type DryRun, dryRunFlag } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { withCrdHint } from "./_hint.ts";

export const DRY_RUN_NOTE: Record<DryRun, string> = { none: "", client: " (dry run)", server: " (server dry run)" };

export default defineCommand({
  meta: {
    name: "delete",
    description: `Delete a WebApp, and with it the Deployment and Service the operator made for it

Examples:
  devctl webapp delete my-service
  devctl webapp delete my-service -n team-a --dry-run=server
  devctl webapp delete my-service --ignore-not-found`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    "dry-run": dryRunFlag("client: only check it exists; server: the API server checks the deletion, deletes nothing"),
    "ignore-not-found": { type: "boolean", description: "A WebApp that does not exist is not an error" },
  },
  async run({ args }) {
    const dryRun = args["dry-run"] as DryRun;
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const label = `${SINGULAR}.${WEBAPP_RESOURCE.group} "${args.name}"`;
    try {
      if (dryRun === "client") await client.get(WEBAPP_RESOURCE, args.name, namespace);
      // No propagationPolicy: the API server reads a DeleteOptions body instead of the dryRun query
      // parameter; a custom resource's default (background) already deletes what it owns.
      else await client.delete(WEBAPP_RESOURCE, args.name, namespace, dryRun === "server" ? { dryRun: true } : {});
    } catch (e) {
      if (
        args["ignore-not-found"] &&
        isNotFound(e) &&
        (e as { status?: { details?: { name?: string } } }).status?.details?.name
      )
        return;
      throw withCrdHint(e);
    }
    out(`${label} deleted${DRY_RUN_NOTE[dryRun]}`);
  },
});
