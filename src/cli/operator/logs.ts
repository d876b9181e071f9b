/**
 * `devctl operator logs [-f]`: the logs of the replica that leads, found as kubectl users would by hand:
 * the Lease's holderIdentity is "<pod name>_<suffix>" (manager.ts), so the pod is that name in the
 * operator's namespace. Without a leader, or with a leader outside the cluster (`devctl operator run` on a
 * laptop), it says so and exits 1. `-f` streams until interrupted.
 */
import { defineCommand } from "citty";
import { LEASE_RESOURCE } from "../../api/webapp.ts";
import { LEASE_NAME } from "../../install/manifests.ts";
import { isNotFound } from "../../kube/errors.ts";
import type { KubeClient, KubeObject } from "../../kube/types.ts";
import { intFlag } from "../_flags.ts";
import { clientFrom, connectionArgs } from "../_global.ts";
import { info } from "../_output.ts";
import { operatorNamespaceArg } from "./install.ts";
import { PODS } from "../../kube/resources.ts";

/** The pod name in a holderIdentity written by manager.ts: everything before the last "_". */
export const podOfHolder = (holder: string): string => holder.replace(/_[^_]*$/, "");

async function leaderPod(client: KubeClient, namespace: string): Promise<{ pod: string; container: string }> {
  const lease = await client
    .get<KubeObject & { spec?: { holderIdentity?: string } }>(LEASE_RESOURCE, LEASE_NAME, namespace)
    .catch((e) => {
      if (!isNotFound(e)) throw e;
      throw new Error(
        `no Lease ${namespace}/${LEASE_NAME}: the operator is not installed in namespace ${namespace} ` +
          `or has never run there (devctl operator status -n ${namespace})`,
      );
    });
  const holder = lease.spec?.holderIdentity;
  if (!holder) throw new Error(`no replica leads in namespace ${namespace} right now (the Lease has no holder)`);
  const pod = podOfHolder(holder);
  const found = await client
    .get<KubeObject & { spec?: { containers?: { name: string }[] } }>(PODS, pod, namespace)
    .catch((e) => {
      if (!isNotFound(e)) throw e;
      throw new Error(
        `the leader "${holder}" is not a pod in namespace ${namespace}: ` +
          "it runs outside the cluster (devctl operator run), so its logs are wherever it was started",
      );
    });
  return { pod, container: found.spec?.containers?.[0]?.name ?? "" };
}

export default defineCommand({
  meta: {
    name: "logs",
    description: `Print the logs of the operator replica that currently leads

Examples:
  devctl operator logs
  devctl operator logs -f
  devctl operator logs -n platform --tail 100`,
  },
  args: {
    ...connectionArgs,
    namespace: operatorNamespaceArg,
    follow: { type: "boolean", alias: "f", description: "Keep printing new lines until interrupted" },
    tail: intFlag({ description: "Only the last N lines (default: all)" }, 0, 1_000_000),
  },
  async run({ args }) {
    const client = await clientFrom(args);
    const { pod, container } = await leaderPod(client, args.namespace);
    const query = new URLSearchParams({
      ...(container ? { container } : {}),
      ...(args.follow ? { follow: "true" } : {}),
      ...(args.tail !== undefined ? { tailLines: args.tail } : {}),
    });
    const path = `/api/v1/namespaces/${args.namespace}/pods/${pod}/log?${query}`;
    info(`logs of pod ${args.namespace}/${pod}, the leader`);
    if (!args.follow) {
      process.stdout.write(String(await client.raw<string>("GET", path)));
      return;
    }
    const { loadConnection } = await import("../../kube/config.ts");
    const { createTransport } = await import("../../kube/transport.ts");
    const { fromResponse } = await import("../../kube/errors.ts");
    const t = createTransport(
      loadConnection({
        ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
        ...(args.context ? { context: args.context } : {}),
      }),
    );
    const stop = new AbortController();
    process.once("SIGINT", () => stop.abort());
    const res = await t.send({ method: "GET", path, accept: "*/*", timeoutMs: 0, signal: stop.signal });
    if (!res.ok)
      throw fromResponse(res.status, await res.json().catch(() => undefined), {
        method: "GET",
        path: path.split("?")[0] as string,
        server: t.server,
        context: t.context,
      });
    try {
      for await (const chunk of res.body as ReadableStream<Uint8Array>) process.stdout.write(chunk);
    } catch (e) {
      if (!stop.signal.aborted) throw e;
    }
  },
});
