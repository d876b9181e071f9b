/**
 * `devctl operator status`: installed version and image, replicas, leader, WebApps by condition, and
 * the problems it finds (install/problems.ts); exit 1 when not installed or any problem is found.
 */
import { defineCommand } from "citty";
import { clientFrom, connectionArgs } from "../_global.ts";
import { out } from "../_output.ts";
import { operatorNamespaceArg } from "./install.ts";

export default defineCommand({
  meta: {
    name: "status",
    description:
      "Show the installed operator: version, image, ready replicas, the current leader and its last renewal, " +
      "WebApps by condition, the hardened parts, and problems (a stuck rollout, ready pods with no leader, two operators, " +
      "an image of another version, a missing Pod Security label, PodDisruptionBudget or, installed with it, " +
      `NetworkPolicy; exit 1 if any)

Examples:
  devctl operator status
  devctl operator status -n platform --context prod`,
  },
  args: { ...connectionArgs, namespace: operatorNamespaceArg },
  async run({ args }) {
    const client = await clientFrom(args);
    const { formatStatus, readStatus } = await import("../../install/status.ts");
    const { statusProblems } = await import("../../install/problems.ts");
    const status = await readStatus(client, args.namespace);
    const now = Date.now();
    out(formatStatus(status, now));
    if (!status.deployment || statusProblems(status, now).length) process.exitCode = 1;
  },
});
