/** `devctl version`: the client's version and commit, and the API server's version (like kubectl version). */
import { defineCommand } from "citty";
import { versionLine } from "../build/version.ts";
import { clientFrom, clusterArgs } from "./_global.ts";

export default defineCommand({
  meta: {
    name: "version",
    description:
      "Print the client and server versions\n\nExamples:\n  devctl version\n  devctl version --client\n  devctl version --context kind-dev",
  },
  args: { ...clusterArgs, client: { type: "boolean", description: "Print only the client version" } },
  async run({ args }) {
    console.log(`Client: ${versionLine()}`);
    if (args.client) return;
    const client = await clientFrom(args);
    const v = await client.raw<{ gitVersion: string; platform: string }>("GET", "/version");
    console.log(`Server: ${v.gitVersion} (${v.platform}) at ${client.server}`);
  },
});
