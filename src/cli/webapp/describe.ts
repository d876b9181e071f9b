/** `devctl webapp describe NAME`: what `kubectl describe webapp` shows: spec, status, conditions and events. */
import { defineCommand } from "citty";
import { EVENT_RESOURCE, KIND } from "../../api/webapp.ts";
import type { KubeObject } from "../../kube/types.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { describeWebApp, type EventLike } from "./_describe.ts";
import { getWebApp } from "./_webapp-io.ts";

export default defineCommand({
  meta: {
    name: "describe",
    description: `Show a WebApp in detail: spec, status, conditions and the events about it

Examples:
  devctl webapp describe my-service
  devctl webapp describe my-service -n team-a`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
  },
  async run({ args }) {
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const obj = await getWebApp(client, args.name, namespace);
    const events = await client.listAll<KubeObject & EventLike>(EVENT_RESOURCE, {
      namespace,
      fieldSelector: `involvedObject.kind=${KIND},involvedObject.name=${args.name},involvedObject.uid=${obj.metadata.uid}`,
    });
    process.stdout.write(describeWebApp(obj, events.items, Date.now()));
  },
});
