/**
 * Flags every cluster-facing command takes, spelled as kubectl spells them, and the one way a
 * command turns them into a client. The Kubernetes client is imported lazily so that commands
 * which never talk to a cluster (and `--version`) start fast.
 */
import type { KubeClient } from "../kube/types.ts";

export const clusterArgs = {
  kubeconfig: {
    type: "string",
    description: "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
  },
  context: { type: "string", description: "The kubeconfig context to use" },
  namespace: { type: "string", alias: "n", description: "The namespace (default: the context's namespace)" },
} as const;

export interface ClusterArgs {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

export async function clientFrom(args: ClusterArgs): Promise<KubeClient> {
  const { createKubeClient } = await import("../kube/client.ts");
  const { versionLine } = await import("../build/version.ts");
  return createKubeClient({
    ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
    ...(args.context ? { context: args.context } : {}),
    userAgent: versionLine()
      .replace(/ \(commit /, "/")
      .replace(/\)$/, ""),
  });
}

/** The namespace a command acts in: -n, else the context's. */
export const namespaceOf = (args: ClusterArgs, client: KubeClient): string => args.namespace || client.namespace;
