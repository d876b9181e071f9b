/**
 * `devctl webapp scale NAME --replicas N`: sets spec.replicas through the WebApp's scale subresource,
 * as `kubectl scale` does (so RBAC on webapps/scale is what it needs); --dry-run=client|server.
 */
import { defineCommand } from "citty";
import { WEBAPP_MAX_REPLICAS, SINGULAR, WEBAPP_RESOURCE } from "../../api/webapp.ts";
import { type DryRun, dryRunFlag, intFlag, parseIntIn } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { patchWebApp } from "./_webapp-io.ts";
import { DRY_RUN_NOTE } from "./delete.ts";

export default defineCommand({
  meta: {
    name: "scale",
    description: `Set the number of replicas of a WebApp

Examples:
  devctl webapp scale my-service --replicas 3
  devctl webapp scale my-service -n team-a --replicas 10 --dry-run=server`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    replicas: intFlag(
      { required: true, description: `The new number of pods (1-${WEBAPP_MAX_REPLICAS})` },
      1,
      WEBAPP_MAX_REPLICAS,
    ),
    ...clusterArgs,
    "dry-run": dryRunFlag("client: only check it exists; server: the API server checks the change, stores nothing"),
  },
  async run({ args }) {
    const replicas = parseIntIn(args.replicas, "--replicas", 1, WEBAPP_MAX_REPLICAS);
    const dryRun = args["dry-run"] as DryRun;
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    await patchWebApp(client, { name: args.name, namespace }, { spec: { replicas } }, dryRun, "scale");
    out(`${SINGULAR}.${WEBAPP_RESOURCE.group}/${args.name} scaled${DRY_RUN_NOTE[dryRun]}`);
  },
});
