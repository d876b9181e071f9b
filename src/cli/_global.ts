/**
 * Flags every cluster-facing command takes, spelled as kubectl spells them, and the one way a
 * command turns them into a client. The Kubernetes client is imported lazily so that commands
 * which never talk to a cluster (and `--version`) start fast.
 */
import type { KubeClient } from "../kube/types.ts";
import { UsageError } from "./_errors.ts";
import { parseDuration, typed } from "./_flags.ts";

/** kubectl's --request-timeout: "0" (no limit), a whole number of seconds, or a duration ("30s", "1m"). */
export function parseRequestTimeout(value: string, flag: string): number {
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  try {
    return parseDuration(value, flag);
  } catch {
    throw new UsageError(`${flag} "${value}" must be 0 (no limit), seconds (30) or a duration (30s, 2m, 1h)`);
  }
}

export const clusterArgs = {
  kubeconfig: {
    type: "string",
    valueHint: "path",
    description: "Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
  },
  context: { type: "string", description: "The kubeconfig context to use" },
  namespace: { type: "string", alias: "n", description: "The namespace (default: the context's namespace)" },
  "request-timeout": typed(
    {
      type: "string",
      valueHint: "duration",
      default: "30s",
      description: "How long to wait for each API request before giving up (0: no limit)",
    },
    parseRequestTimeout,
  ),
} as const;

/** The connection flags alone, for commands whose -n means something else (the operator's namespace). */
export const connectionArgs = {
  kubeconfig: clusterArgs.kubeconfig,
  context: clusterArgs.context,
  "request-timeout": clusterArgs["request-timeout"],
} as const;

export interface ClusterArgs {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
  "request-timeout"?: string;
}

export async function clientFrom(args: ClusterArgs): Promise<KubeClient> {
  const { createKubeClient } = await import("../kube/client.ts");
  const { versionLine } = await import("../build/version.ts");
  const timeout = parseRequestTimeout(args["request-timeout"] ?? "30s", "--request-timeout");
  return createKubeClient({
    ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
    ...(args.context ? { context: args.context } : {}),
    timeoutMs: timeout,
    userAgent: versionLine()
      .replace(/ \(commit /, "/")
      .replace(/\)$/, ""),
  });
}

/** The namespace a command acts in: -n, else the context's. */
export const namespaceOf = (args: ClusterArgs, client: KubeClient): string => args.namespace || client.namespace;
