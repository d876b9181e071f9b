/**
 * `devctl webapp rollout restart NAME`: restarts a WebApp's pods with a rolling update, as `kubectl rollout restart`
 * does for a Deployment. It sets the WebApp's RESTARTED_AT_ANNOTATION to the time now (a merge patch of that one
 * annotation, so it needs RBAC to patch webapps and changes nothing else); the operator carries it into the pod
 * template, which rolls the pods once. The spec is left alone (a GitOps tool syncing it sees no drift), and the
 * Deployment's own kubectl.kubernetes.io/restartedAt stays kubectl's. --dry-run=client|server.
 */
import { defineCommand } from "citty";
import { RESTARTED_AT_ANNOTATION, SINGULAR, WEBAPP_RESOURCE } from "../../api/webapp.ts";
import { type DryRun, dryRunFlag } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { patchWebApp } from "./_webapp-io.ts";
import { DRY_RUN_NOTE } from "./delete.ts";

export default defineCommand({
  meta: {
    name: "restart",
    description: `Restart the pods of a WebApp with a rolling update

The WebApp's ${RESTARTED_AT_ANNOTATION} annotation is set to the time now; the operator
carries it into the pod template, so the pods are replaced one rolling update at a time,
each new pod taking traffic once ready. The spec is not changed.

Examples:
  devctl webapp rollout restart my-service
  devctl webapp rollout restart my-service -n team-a --dry-run=server`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    "dry-run": dryRunFlag("client: only check it exists; server: the API server checks the change, stores nothing"),
  },
  async run({ args }) {
    const dryRun = args["dry-run"] as DryRun;
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const patch = { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: new Date().toISOString() } } };
    await patchWebApp(client, { name: args.name, namespace }, patch, dryRun);
    out(`${SINGULAR}.${WEBAPP_RESOURCE.group}/${args.name} restarted${DRY_RUN_NOTE[dryRun]}`);
  },
});
