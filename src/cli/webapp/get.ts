/** `devctl webapp get NAME`: one WebApp in any -o format of `kubectl get`, and --watch for its changes. */
import { defineCommand } from "citty";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { outputArg, printAndWatch, readOutput, render, watchArg } from "./_print.ts";
import { getWebApp } from "./_webapp-io.ts";

export default defineCommand({
  meta: {
    name: "get",
    description: `Show one WebApp

Examples:
  devctl webapp get my-service
  devctl webapp get my-service -o yaml
  devctl webapp get my-service -n team-a -o json | jq .status
  devctl webapp get my-service -o jsonpath='{.status.readyReplicas}'
  devctl webapp get my-service --watch`,
  },
  args: {
    name: { type: "positional", description: "Name of the WebApp", required: true },
    ...clusterArgs,
    output: outputArg,
    watch: watchArg,
  },
  async run({ args }) {
    const output = readOutput(args.output, "--output");
    const client = await clientFrom(args);
    const namespace = namespaceOf(args, client);
    const print = { output, withNamespace: false, single: true, now: Date.now() };
    const obj = await getWebApp(client, args.name, namespace);
    if (!args.watch) {
      process.stdout.write(render([obj], print));
      return;
    }
    const stop = new AbortController();
    process.once("SIGINT", () => stop.abort());
    const target = { namespace, fieldSelector: `metadata.name=${args.name}` };
    await printAndWatch(client, target, print, stop.signal, (s) => process.stdout.write(s));
  },
});
