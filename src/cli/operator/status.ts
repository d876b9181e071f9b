/** `devctl operator status`: installed version and image, replicas, leader, WebApps by condition. */
import { defineCommand } from "citty";
import { clientFrom, connectionArgs } from "../_global.ts";
import { out } from "../_output.ts";
import { operatorNamespaceArg } from "./install.ts";

export default defineCommand({
  meta: {
    name: "status",
    description: `Show the installed operator: version, image, ready replicas, the current leader and its last renewal, and WebApps by condition

Examples:
  devctl operator status
  devctl operator status -n platform --context prod`,
  },
  args: { ...connectionArgs, namespace: operatorNamespaceArg },
  async run({ args }) {
    const client = await clientFrom(args);
    const { formatStatus, readStatus } = await import("../../install/status.ts");
    const status = await readStatus(client, args.namespace);
    out(formatStatus(status, Date.now()));
    if (!status.deployment) process.exitCode = 1;
  },
});
