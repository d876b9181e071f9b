/** `devctl webapp list`: the table of `kubectl get webapps`, in one namespace or all (-A). */
import { defineCommand } from "citty";
import { WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import type { KubeObject } from "../../kube/types.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { withCrdHint } from "./_hint.ts";
import { webAppTable } from "./_table.ts";

export default defineCommand({
  meta: {
    name: "list",
    description: `List WebApps with the columns of \`kubectl get webapps\`

Examples:
  devctl webapp list
  devctl webapp list -n team-a
  devctl webapp list -A`,
  },
  args: {
    ...clusterArgs,
    "all-namespaces": {
      type: "boolean",
      alias: "A",
      default: false,
      description: "List WebApps in every namespace (adds a NAMESPACE column)",
    },
  },
  async run({ args }) {
    const client = await clientFrom(args);
    const all = args["all-namespaces"];
    const namespace = namespaceOf(args, client);
    const list = await client
      .listAll<KubeObject & WebAppObject>(WEBAPP_RESOURCE, all ? {} : { namespace })
      .catch((e) => {
        throw withCrdHint(e);
      });
    if (list.items.length === 0) {
      console.error(all ? "No resources found" : `No resources found in ${namespace} namespace.`);
      return;
    }
    console.log(webAppTable(list.items, Date.now(), all));
  },
});
