/** `devctl operator run`: the operator daemon, and the container's entrypoint. */
import { defineCommand } from "citty";
import { clientFrom, clusterArgs } from "../_global.ts";
import { parseChoice, parseDuration, parsePositiveInt } from "../_flags.ts";
import { UsageError } from "../_run.ts";

export default defineCommand({
  meta: {
    name: "run",
    description: `Run the WebApp operator in the foreground (this is the operator image's entrypoint)

Examples:
  devctl operator run                                   # all namespaces, leader election on
  devctl operator run --namespaces team-a,team-b --concurrency 8
  devctl operator run --leader-elect=false --log-format text --log-level debug`,
  },
  args: {
    kubeconfig: clusterArgs.kubeconfig,
    context: clusterArgs.context,
    namespaces: {
      type: "string",
      description: "Comma-separated namespaces to watch (default: all; env WATCH_NAMESPACE)",
    },
    concurrency: { type: "string", default: "4", description: "Maximum concurrent reconciles" },
    "leader-elect": { type: "boolean", default: true, description: "Use a Lease so that only one replica reconciles" },
    "lease-name": { type: "string", default: "webapp-operator-lock", description: "Name of the leader-election Lease" },
    "lease-namespace": {
      type: "string",
      description:
        "Namespace of the Lease (default in a pod: its namespace; outside a cluster: the installed operator's, so this process joins its election)",
    },
    "lease-duration": { type: "string", default: "15s", description: "How long a lease is valid without renewal" },
    "renew-deadline": {
      type: "string",
      default: "10s",
      description: "How long the leader retries renewing before giving up",
    },
    "retry-period": { type: "string", default: "2s", description: "How often to try to acquire or renew" },
    "metrics-bind-address": { type: "string", default: ":8080", description: 'Address of /metrics ("0" disables)' },
    "health-probe-bind-address": {
      type: "string",
      default: ":8081",
      description: 'Address of /healthz and /readyz ("0" disables)',
    },
    "resync-period": {
      type: "string",
      default: "10h",
      description: "How often every WebApp is reconciled even without changes",
    },
    "reconcile-timeout": { type: "string", default: "60s", description: "Abort a single reconcile after this long" },
    "shutdown-timeout": {
      type: "string",
      default: "30s",
      description: "How long in-flight reconciles may finish on SIGTERM",
    },
    "watch-inactivity-timeout": {
      type: "string",
      default: "90s",
      description:
        "Re-open a watch that sent no event or bookmark for this long (keep above the API server's ~60 s bookmark interval)",
    },
    "log-format": { type: "string", default: "text", description: "text (for people) or json (for log pipelines)" },
    "log-level": { type: "string", default: "info", description: "error, warn, info or debug" },
  },
  async run({ args }) {
    const logFormat = parseChoice(args["log-format"], "log-format", ["text", "json"] as const);
    const logLevel = parseChoice(args["log-level"], "log-level", ["error", "warn", "info", "debug"] as const);
    const namespaces = (args.namespaces ?? process.env.WATCH_NAMESPACE ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    const address = (v: string | undefined) => (v && v !== "0" ? v : undefined);
    const opts = {
      namespaces,
      concurrency: parsePositiveInt(args.concurrency, "concurrency", 1000),
      leaderElection: args["leader-elect"]
        ? {
            leaseName: args["lease-name"],
            ...(args["lease-namespace"] ? { namespace: args["lease-namespace"] } : {}),
            leaseDurationMs: parseDuration(args["lease-duration"], "lease-duration"),
            renewDeadlineMs: parseDuration(args["renew-deadline"], "renew-deadline"),
            retryPeriodMs: parseDuration(args["retry-period"], "retry-period"),
          }
        : (false as const),
      metricsAddress: address(args["metrics-bind-address"]),
      healthAddress: address(args["health-probe-bind-address"]),
      resyncMs: parseDuration(args["resync-period"], "resync-period"),
      reconcileTimeoutMs: parseDuration(args["reconcile-timeout"], "reconcile-timeout"),
      shutdownTimeoutMs: parseDuration(args["shutdown-timeout"], "shutdown-timeout"),
      watchInactivityMs: parseDuration(args["watch-inactivity-timeout"], "watch-inactivity-timeout"),
      ...(args.kubeconfig ? { kubeconfig: args.kubeconfig } : {}),
      ...(args.context ? { context: args.context } : {}),
    };
    const { createLogger } = await import("../_logger.ts");
    const { runOperator } = await import("../../operator/manager.ts");
    const logger = createLogger(logFormat, logLevel);
    if (opts.leaderElection && !opts.leaderElection.namespace) {
      const namespace = await outOfClusterLeaseNamespace(args);
      if (namespace) {
        opts.leaderElection = { ...opts.leaderElection, namespace };
        logger.info(
          `outside a cluster: joining the leader election of the operator installed in namespace ${namespace} (Lease ${namespace}/${opts.leaderElection.leaseName}); this process reconciles only while it holds that Lease`,
        );
      }
    }
    const { leaderIdentity } = await import("../../operator/identity.ts");
    const { hostname } = await import("node:os");
    const identity = leaderIdentity(
      { POD_NAME: process.env.POD_NAME },
      hostname(),
      process.pid,
      crypto.randomUUID().slice(0, 8),
    );
    const stop = new AbortController();
    let signals = 0;
    const onSignal = (name: string) => {
      signals += 1;
      if (signals > 1) {
        logger.warn(`${name} again: exiting now`);
        process.exit(1);
      }
      logger.info(`${name}: shutting down (finishing in-flight work, releasing the lease)`);
      stop.abort();
    };
    process.on("SIGTERM", () => onSignal("SIGTERM"));
    process.on("SIGINT", () => onSignal("SIGINT"));
    const code = await runOperator({ ...opts, identity, logger }, stop.signal);
    process.exit(code);
  },
});

/**
 * Outside a cluster (a kubeconfig context, not a service account) with leader election and no
 * --lease-namespace: the installed operator's namespace, so this process joins its fleet; an error
 * when there is none, several, or they cannot be listed. Undefined in a cluster (the pod's namespace).
 */
async function outOfClusterLeaseNamespace(args: {
  kubeconfig?: string;
  context?: string;
}): Promise<string | undefined> {
  const client = await clientFrom(args);
  if (client.context === "") return undefined;
  const { findInstallations, leaseNamespaceFor } = await import("../../install/installations.ts");
  const { isForbidden } = await import("../../kube/errors.ts");
  const installed = await findInstallations(client).catch((e: unknown) => {
    if (isForbidden(e)) return { forbidden: (e as Error).message };
    throw e;
  });
  const choice = leaseNamespaceFor(installed);
  if (choice.kind === "refuse") throw new UsageError(choice.message);
  return choice.namespace;
}
