/**
 * `devctl operator uninstall`: removes the operator and its RBAC; the CRD and every WebApp stay unless
 * --delete-crd, which first says what it will take with it and asks (y/N on a terminal; --yes for
 * scripts; without a terminal and without --yes it refuses and deletes nothing).
 */
import { defineCommand } from "citty";
import { CRD_NAME } from "../../api/webapp.ts";
import { durationFlag, parseDuration } from "../_flags.ts";
import { clientFrom, connectionArgs } from "../_global.ts";
import { info, out } from "../_output.ts";
import { operatorNamespaceArg } from "./install.ts";

export default defineCommand({
  meta: {
    name: "uninstall",
    description: `Remove the WebApp operator and its RBAC (the CRD and every WebApp are kept unless --delete-crd)

Examples:
  devctl operator uninstall
  devctl operator uninstall -n platform --wait      # returns once the namespace is gone
  devctl operator uninstall --delete-crd          # asks first: deletes every WebApp, Deployment and Service it owns
  devctl operator uninstall --delete-crd --yes    # for scripts`,
  },
  args: {
    ...connectionArgs,
    namespace: operatorNamespaceArg,
    "delete-crd": {
      type: "boolean",
      default: false,
      description: `Also delete the CRD ${CRD_NAME}, and with it every WebApp and what they own`,
    },
    yes: { type: "boolean", alias: "y", default: false, description: "Do not ask for confirmation" },
    wait: {
      type: "boolean",
      default: false,
      description: "Wait until every deleted object, the operator's pods and the namespace are gone",
    },
    timeout: durationFlag({ default: "2m", description: "How long --wait waits" }),
  },
  async run({ args }) {
    const timeoutMs = parseDuration(args.timeout, "timeout");
    const client = await clientFrom(args);
    const { uninstall, webAppFootprint } = await import("../../install/uninstall.ts");
    if (args["delete-crd"]) {
      const f = await webAppFootprint(client);
      const where = f.namespaces.length
        ? ` in ${f.namespaces.length} namespace${f.namespaces.length === 1 ? "" : "s"} (${f.namespaces.join(", ")})`
        : "";
      info(
        `--delete-crd deletes the CustomResourceDefinition ${CRD_NAME} at ${client.server} ` +
          `and with it ${f.webapps} WebApp${f.webapps === 1 ? "" : "s"}${where}, ` +
          `and so ${f.deployments} Deployment${f.deployments === 1 ? "" : "s"} ` +
          `and ${f.services} Service${f.services === 1 ? "" : "s"} they own.`,
      );
      if (!args.yes) {
        if (!process.stdin.isTTY) {
          throw new Error(
            "refusing to delete the CRD without confirmation: stdin is not a terminal, so nothing was deleted. Pass --yes to confirm",
          );
        }
        if (!(await confirm("Delete them? [y/N] "))) {
          info("nothing deleted");
          process.exitCode = 1;
          return;
        }
      }
    }
    info(`uninstalling the devctl operator from namespace ${args.namespace} at ${client.server}`);
    const results = await uninstall(client, args.namespace, {
      deleteCrd: args["delete-crd"],
      onDeleted: (d) => out(`${d.name} ${d.action}${d.note ? `: ${d.note}` : ""}`),
    });
    const deleted = results.filter((r) => r.action === "deleted").length;
    if (args.wait) {
      const { waitUntilGone } = await import("../../install/uninstall.ts");
      const { realClock } = await import("../../runtime/clock.ts");
      await waitUntilGone(client, args.namespace, results, {
        clock: realClock,
        timeoutMs,
        onProgress: (l) => info(l),
      });
    }
    info(
      deleted
        ? `uninstalled: ${deleted} object${deleted === 1 ? "" : "s"} deleted${args.wait ? ", and all of them are gone" : ""}`
        : "nothing to uninstall: the operator was not installed there",
    );
  },
});

async function confirm(question: string): Promise<boolean> {
  process.stderr.write(question);
  for await (const line of console) return /^y(es)?$/i.test(line.trim());
  return false;
}
