/** `devctl webapp get NAME`: one WebApp as a table row, or the whole object with -o yaml|json. */
import { defineCommand } from "citty";
import { WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import type { KubeObject } from "../../kube/types.ts";
import { parseChoice } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { withCrdHint } from "./_hint.ts";
import { webAppTable } from "./_table.ts";

export const OUTPUTS = ["table", "yaml", "json"] as const;

export default defineCommand({
  meta: {
    name: "get",
    description: `Show one WebApp

Examples:
  devctl webapp get my-service
  devctl webapp get my-service -o yaml
  devctl webapp get my-service -n team-a -o json | jq .status`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    output: { type: "string", alias: "o", default: "table", description: "Output format: table, yaml or json" },
  },
  async run({ args }) {
    const output = parseChoice(args.output, "output", OUTPUTS);
    const client = await clientFrom(args);
    const obj = await client
      .get<KubeObject & WebAppObject>(WEBAPP_RESOURCE, args.name, namespaceOf(args, client))
      .catch((e) => {
        throw withCrdHint(e);
      });
    // As kubectl: managed fields are bookkeeping, not part of what a user reads.
    const { managedFields: _, ...metadata } = obj.metadata;
    const shown = { ...obj, metadata };
    if (output === "yaml") process.stdout.write(toYaml(shown));
    else if (output === "json") console.log(JSON.stringify(shown, null, 4));
    else console.log(webAppTable([shown], Date.now(), false));
  },
});
