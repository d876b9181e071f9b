/** `devctl webapp list`: `kubectl get webapps` in one namespace or all (-A), any -o format, -l, --watch. */
import { defineCommand } from "citty";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { info } from "../_output.ts";
import { outputArg, printAndWatch, readOutput, render, watchArg, type WebApp } from "./_print.ts";
import { WEBAPP_RESOURCE } from "../../api/webapp.ts";
import { withCrdHint } from "./_hint.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List WebApps with the columns of \`kubectl get webapps\`

Examples:
  devctl webapp list
  devctl webapp list -n team-a -o wide
  devctl webapp list -A -l team=payments
  devctl webapp list -o jsonpath='{range .items[*]}{.metadata.name}{"\\n"}{end}'
  devctl webapp list --watch`,
  },
  args: {
    ...clusterArgs,
    "all-namespaces": {
      type: "boolean",
      alias: "A",
      description: "List WebApps in every namespace (adds a NAMESPACE column)",
    },
    selector: {
      type: "string",
      alias: "l",
      valueHint: "selector",
      description: "Only WebApps whose labels match, e.g. -l team=payments,tier!=canary",
    },
    output: outputArg,
    watch: watchArg,
  },
  async run({ args }) {
    const output = readOutput(args.output, "--output");
    const client = await clientFrom(args);
    const all = args["all-namespaces"] === true;
    const namespace = namespaceOf(args, client);
    const target = { ...(all ? {} : { namespace }), ...(args.selector ? { labelSelector: args.selector } : {}) };
    const print = { output, withNamespace: all, single: false, now: Date.now() };
    if (args.watch) {
      const stop = new AbortController();
      process.once("SIGINT", () => stop.abort());
      await printAndWatch(client, target, print, stop.signal, (s) => process.stdout.write(s));
      return;
    }
    const list = await client.listAll<WebApp>(WEBAPP_RESOURCE, target).catch((e) => {
      throw withCrdHint(e);
    });
    if (list.items.length === 0 && (output.kind === "table" || output.kind === "wide")) {
      info(all ? "No resources found" : `No resources found in ${namespace} namespace.`);
      return;
    }
    process.stdout.write(render(list.items, print));
  },
});
