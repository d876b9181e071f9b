/**
 * `devctl operator run`: the operator daemon, and the container's entrypoint. Every flag, and how the
 * leader-election durations relate, is checked before the client, the servers or the caches start;
 * messages name the flags as typed (`--lease-duration (2s) must be greater than --renew-deadline (5s)`).
 */
import { defineCommand } from "citty";
import { LEASE_NAME } from "../../api/names.ts";
import { validateLeaderElectionConfig } from "../../runtime/leader-election.ts";
import { UsageError } from "../_errors.ts";
import { choiceFlag, durationFlag, intFlag, parseDuration, parseIntIn, typed } from "../_flags.ts";
import { clientFrom, clusterArgs } from "../_global.ts";

const NAMESPACE_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Comma-separated namespace names, each a DNS-1123 label. */
export function parseNamespaces(value: string, flag: string): string[] {
  const names = value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.find((n) => !NAMESPACE_RE.test(n) || n.length > 63);
  if (bad) throw new UsageError(`${flag} "${bad}" is not a namespace name (lower-case letters, digits and '-')`);
  return names;
}

/** "host:port", ":port" or "0" (disabled). */
export function parseBindAddress(value: string, flag: string): string | undefined {
  if (value === "0") return undefined;
  const m = /^(.*):(\d+)$/.exec(value);
  if (!m) throw new UsageError(`${flag} "${value}" must be host:port, :port or 0 (disabled), e.g. :8080`);
  parseIntIn(m[2], flag, 0, 65535);
  return value;
}

const LOG_FORMATS = ["text", "json"] as const;
const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;

export const runArgs = {
  kubeconfig: clusterArgs.kubeconfig,
  context: clusterArgs.context,
  namespaces: typed(
    {
      type: "string",
      alias: "n",
      valueHint: "names",
      description: "Comma-separated namespaces to watch (default: all; env WATCH_NAMESPACE)",
    },
    parseNamespaces,
  ),
  concurrency: intFlag({ default: "4", description: "Maximum concurrent reconciles" }, 1, 1000),
  "leader-elect": { type: "boolean", default: true, description: "Use a Lease so that only one replica reconciles" },
  "lease-name": { type: "string", default: LEASE_NAME, description: "Name of the leader-election Lease" },
  "lease-namespace": {
    type: "string",
    description:
      "Namespace of the Lease (default in a pod: its namespace; outside a cluster: the installed operator's, so this process joins its election)",
  },
  "lease-duration": durationFlag({ default: "15s", description: "How long a lease is valid without renewal" }),
  "renew-deadline": durationFlag({
    default: "10s",
    description: "How long the leader retries renewing before giving up",
  }),
  "retry-period": durationFlag({ default: "2s", description: "How often to try to acquire or renew" }),
  "metrics-bind-address": typed(
    {
      type: "string",
      valueHint: "address",
      default: ":8443",
      description: 'Address of /metrics ("0" disables); HTTPS unless --metrics-secure=false',
    },
    parseBindAddress,
  ),
  "metrics-secure": {
    type: "boolean",
    default: true,
    description:
      "Serve /metrics over HTTPS to bearer tokens allowed to get the non-resource URL /metrics (TokenReview and " +
      "SubjectAccessReview); --metrics-secure=false serves plain HTTP to anyone (local runs)",
  },
  "metrics-cert-dir": {
    type: "string",
    valueHint: "dir",
    description:
      "Directory with tls.crt and tls.key for the metrics server, re-read when they change (default: a self-signed certificate made at start)",
  },
  "enable-http2": {
    type: "boolean",
    default: false,
    description:
      "Also serve HTTP/2 (ALPN h2) on the secure metrics server; off by default (HTTP/2 rapid-reset CVEs), HTTP/1.1 only",
  },
  "health-probe-bind-address": typed(
    {
      type: "string",
      valueHint: "address",
      default: ":8081",
      description: 'Address of /healthz and /readyz ("0" disables)',
    },
    parseBindAddress,
  ),
  "resync-period": durationFlag({
    default: "10h",
    description: "How often every WebApp is reconciled even without changes",
  }),
  "reconcile-timeout": durationFlag({ default: "60s", description: "Abort a single reconcile after this long" }),
  "shutdown-timeout": durationFlag({
    default: "30s",
    description: "How long in-flight reconciles may finish on SIGTERM",
  }),
  "watch-inactivity-timeout": durationFlag({
    default: "90s",
    description:
      "Re-open a watch that sent no event or bookmark for this long (keep above the API server's ~60 s bookmark interval)",
  }),
  "log-format": choiceFlag(
    { default: "text", description: "text (for people) or json (for log pipelines)" },
    LOG_FORMATS,
  ),
  "log-level": choiceFlag({ default: "info", description: "Least severe level logged" }, LOG_LEVELS),
  "auto-rollback": {
    type: "boolean",
    default: false,
    description:
      "Roll back a WebApp's failed rollout to its last Ready revision unless its spec.rollout.autoRollback says otherwise",
  },
} as const;

/** The leader-election durations, checked by the runtime's own rule with its field names turned into flags. */
function leaseTimings(args: { "lease-duration": string; "renew-deadline": string; "retry-period": string }) {
  const flags = {
    leaseDurationMs: "lease-duration",
    renewDeadlineMs: "renew-deadline",
    retryPeriodMs: "retry-period",
  } as const;
  const t = {
    leaseDurationMs: parseDuration(args["lease-duration"], "lease-duration"),
    renewDeadlineMs: parseDuration(args["renew-deadline"], "renew-deadline"),
    retryPeriodMs: parseDuration(args["retry-period"], "retry-period"),
  };
  if (t.leaseDurationMs < 1000)
    throw new UsageError(
      `--lease-duration (${args["lease-duration"]}) must be at least 1s: the Lease holds whole seconds`,
    );
  if (t.retryPeriodMs <= 0) throw new UsageError(`--retry-period (${args["retry-period"]}) must be more than 0s`);
  try {
    validateLeaderElectionConfig({ ...t, leaseName: "check", namespace: "check", identity: "check" });
  } catch (e) {
    const message = (e as Error).message.replace(
      /\b(leaseDurationMs|renewDeadlineMs|retryPeriodMs)( \(\d+\))?/g,
      (_, key: keyof typeof flags) => `--${flags[key]} (${args[flags[key]]})`,
    );
    throw new UsageError(message.replace(/^leader election: /, ""));
  }
  return t;
}

/** --metrics-secure and the flags that only it uses, checked together. */
export function metricsSecurity(args: {
  "metrics-secure": boolean;
  "metrics-cert-dir"?: string | undefined;
  "enable-http2": boolean;
  "metrics-bind-address": string;
  "health-probe-bind-address": string;
}): { metricsSecurity?: { certDir?: string; http2: boolean } } {
  const certDir = args["metrics-cert-dir"];
  if (!args["metrics-secure"]) {
    if (certDir) throw new UsageError("--metrics-cert-dir needs --metrics-secure (HTTPS); drop one of them");
    if (args["enable-http2"])
      throw new UsageError("--enable-http2 needs --metrics-secure (HTTP/2 is served over TLS only)");
    return {};
  }
  if (certDir === "") throw new UsageError("--metrics-cert-dir is empty: name the directory with tls.crt and tls.key");
  const metrics = args["metrics-bind-address"];
  if (metrics !== "0" && metrics === args["health-probe-bind-address"] && !metrics.endsWith(":0"))
    throw new UsageError(
      `--metrics-bind-address and --health-probe-bind-address are both ${metrics}: secure metrics (HTTPS) and the ` +
        "plain-HTTP probes need their own ports (or --metrics-secure=false)",
    );
  return { metricsSecurity: { ...(certDir ? { certDir } : {}), http2: args["enable-http2"] } };
}

export default defineCommand({
  meta: {
    name: "run",
    description: `Run the WebApp operator in the foreground (this is the operator image's entrypoint)

Examples:
  devctl operator run                                   # all namespaces, leader election on
  devctl operator run --namespaces team-a,team-b --concurrency 8
  devctl operator run -n team-a --leader-elect=false --log-format json --log-level debug
  devctl operator run --metrics-secure=false --metrics-bind-address 127.0.0.1:8080   # plain /metrics, local only

/metrics is HTTPS on :8443 by default; scrape it with a token allowed to get /metrics
(the installed ClusterRole devctl-metrics-reader grants it):
  curl -k -H "Authorization: Bearer $(kubectl create token <sa> -n <ns>)" https://127.0.0.1:8443/metrics`,
  },
  args: runArgs,
  async run({ args }) {
    const logFormat = args["log-format"] as (typeof LOG_FORMATS)[number];
    const logLevel = args["log-level"] as (typeof LOG_LEVELS)[number];
    const fromEnv = args.namespaces === undefined && process.env.WATCH_NAMESPACE !== undefined;
    const namespaces = parseNamespaces(
      args.namespaces ?? process.env.WATCH_NAMESPACE ?? "",
      fromEnv ? "WATCH_NAMESPACE" : "--namespaces",
    );
    const opts = {
      namespaces,
      concurrency: parseIntIn(args.concurrency, "concurrency", 1, 1000),
      leaderElection: args["leader-elect"]
        ? {
            leaseName: args["lease-name"],
            ...(args["lease-namespace"] ? { namespace: args["lease-namespace"] } : {}),
            ...leaseTimings(args),
          }
        : (false as const),
      metricsAddress: parseBindAddress(args["metrics-bind-address"], "--metrics-bind-address"),
      ...metricsSecurity(args),
      healthAddress: parseBindAddress(args["health-probe-bind-address"], "--health-probe-bind-address"),
      resyncMs: parseDuration(args["resync-period"], "resync-period"),
      reconcileTimeoutMs: parseDuration(args["reconcile-timeout"], "reconcile-timeout"),
      shutdownTimeoutMs: parseDuration(args["shutdown-timeout"], "shutdown-timeout"),
      watchInactivityMs: parseDuration(args["watch-inactivity-timeout"], "watch-inactivity-timeout"),
      autoRollback: args["auto-rollback"],
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
          `outside a cluster: joining the leader election of the operator installed in namespace ${namespace} ` +
            `(Lease ${namespace}/${opts.leaderElection.leaseName}); ` +
            "this process reconciles only while it holds that Lease",
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
