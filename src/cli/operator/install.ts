/** `devctl operator install`: applies the CRD, RBAC and the operator Deployment (src/install). */
import { defineCommand } from "citty";
import { VERSION } from "../../build/version.ts";
import { realClock } from "../../runtime/clock.ts";
import { metricsLabelArg } from "../../install/hardening.ts";
import {
  buildManifests,
  leftOut,
  DEFAULT_NAMESPACE,
  OPERATOR_DEFAULT_REPLICAS,
  defaultImage,
  OPERATOR_MAX_REPLICAS,
  OPERATOR_NAME,
  type InstallOptions,
} from "../../install/manifests.ts";
import { clientFrom, connectionArgs } from "../_global.ts";
import { info, out } from "../_output.ts";
import {
  choiceFlag,
  dryRunFlag,
  durationFlag,
  intFlag,
  parseDuration,
  parseNamespaceName,
  parsePositiveInt,
  typed,
} from "../_flags.ts";
import { UsageError } from "../_errors.ts";
import { runArgs } from "./run.ts";
import { IMAGE_PULL_POLICIES } from "../../api/webapp.ts";
import { containerResources, DEFAULT_MEMORY, MEASURED, memoryProblem } from "../../install/resources.ts";
import {
  parseMemoryQuantity,
  parseNodeSelector,
  parsePullPolicy,
  parsePullSecrets,
  parseTolerations,
} from "./_pod-flags.ts";

/** -n/--namespace of the operator commands: where the operator is installed, not the context's namespace. */
export const operatorNamespaceArg = typed(
  { type: "string", alias: "n", default: DEFAULT_NAMESPACE, description: "Namespace the operator is installed in" },
  parseNamespaceName,
);

/** The options shared by install and manifests. */
export const manifestArgs = {
  ...connectionArgs,
  namespace: operatorNamespaceArg,
  image: { type: "string", description: `Operator image (default: ${defaultImage()})` },
  replicas: intFlag(
    {
      default: String(OPERATOR_DEFAULT_REPLICAS),
      description: "Operator replicas; one leads, the others stand by with warm caches",
    },
    1,
    OPERATOR_MAX_REPLICAS,
  ),
  "node-selector": typed(
    {
      type: "string",
      description: "Schedule the operator only on nodes with these labels: key=value[,key=value...]",
    },
    (v) => parseNodeSelector(v),
  ),
  toleration: typed(
    {
      type: "string",
      description:
        "Let the operator run on tainted nodes: key=value:Effect, key:Effect, key=value or key, comma-separated",
    },
    (v) => parseTolerations(v),
  ),
  "image-pull-policy": choiceFlag(
    { description: "How the nodes pull the image (default: the cluster's)" },
    IMAGE_PULL_POLICIES,
  ),
  "image-pull-secret": typed(
    { type: "string", description: "Secrets in the install namespace for pulling the image, comma-separated" },
    (v) => parsePullSecrets(v),
  ),
  "memory-request": typed(
    {
      type: "string",
      valueHint: "quantity",
      description:
        `Memory request of each replica (default ${DEFAULT_MEMORY.request}: ` +
        `the steady footprint with ${MEASURED.webapps.toLocaleString("en")} WebApps)`,
    },
    parseMemoryQuantity,
  ),
  "memory-limit": typed(
    {
      type: "string",
      valueHint: "quantity",
      description:
        `Memory limit of each replica (default ${DEFAULT_MEMORY.limit}: ` +
        `the peak with ${MEASURED.webapps.toLocaleString("en")} WebApps plus headroom)`,
    },
    parseMemoryQuantity,
  ),
  /** Passed on to the operator's `run` (install/deployment.ts operatorArgs): the same flag. */
  "auto-rollback": runArgs["auto-rollback"],
  "network-policy": {
    type: "boolean",
    default: false,
    description:
      `Add a NetworkPolicy: the operator's pods admit only metrics scrapes, from namespaces labelled ${metricsLabelArg()} ` +
      "(install without it deletes one an earlier install added)",
  },
} as const;

export interface ManifestFlags {
  namespace?: string;
  image?: string;
  replicas?: string;
  "node-selector"?: string | string[];
  toleration?: string | string[];
  "image-pull-policy"?: string;
  "image-pull-secret"?: string | string[];
  "memory-request"?: string;
  "memory-limit"?: string;
  "auto-rollback"?: boolean;
  "network-policy"?: boolean;
}

export function installOptionsFrom(args: ManifestFlags): InstallOptions {
  const namespace = args.namespace || DEFAULT_NAMESPACE;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) {
    throw new UsageError(
      `--namespace "${namespace}" is not a valid namespace name (lower-case letters, digits and '-', at most 63 characters)`,
    );
  }
  const image = args.image || defaultImage();
  if (/\s/.test(image)) throw new UsageError(`--image "${image}" must not contain whitespace`);
  const nodeSelector = parseNodeSelector(args["node-selector"]);
  const tolerations = parseTolerations(args.toleration);
  const imagePullPolicy = parsePullPolicy(args["image-pull-policy"]);
  const imagePullSecrets = parsePullSecrets(args["image-pull-secret"]);
  const memoryRequest = args["memory-request"]?.trim() || undefined;
  const memoryLimit = args["memory-limit"]?.trim() || undefined;
  const memory = containerResources({
    ...(memoryRequest ? { request: memoryRequest } : {}),
    ...(memoryLimit ? { limit: memoryLimit } : {}),
  });
  const problem = memoryProblem(memory);
  if (problem) throw new UsageError(`--memory-request/--memory-limit: ${problem}`);
  return {
    namespace,
    image,
    replicas: parsePositiveInt(args.replicas, "replicas", OPERATOR_MAX_REPLICAS),
    version: VERSION,
    ...(nodeSelector ? { nodeSelector } : {}),
    ...(tolerations ? { tolerations } : {}),
    ...(imagePullPolicy ? { imagePullPolicy } : {}),
    ...(imagePullSecrets ? { imagePullSecrets } : {}),
    ...(memoryRequest ? { memoryRequest } : {}),
    ...(memoryLimit ? { memoryLimit } : {}),
    ...(args["auto-rollback"] ? { autoRollback: true } : {}),
    ...(args["network-policy"] ? { networkPolicy: true } : {}),
  };
}

export default defineCommand({
  meta: {
    name: "install",
    description:
      "Install the WebApp operator: the CRD, a namespace enforcing the restricted Pod Security Standard, a ServiceAccount, " +
      "least-privilege RBAC, a PodDisruptionBudget and the operator Deployment " +
      `(server-side apply; running it again changes nothing)

Examples:
  devctl operator install --wait
  devctl operator install --image registry.example.com/devctl:0.1.0 --replicas 1 -n platform
  devctl operator install --image devctl:local --image-pull-policy Never --wait     # an image loaded onto the nodes
  devctl operator install --node-selector pool=ops --toleration dedicated=ops:NoSchedule --memory-limit 1Gi
  devctl operator install --network-policy      # metrics only from namespaces labelled metrics=enabled
  devctl operator install --dry-run > devctl-operator.yaml     # print, apply nothing
  devctl operator install --dry-run=server                     # the API server checks it, stores nothing`,
  },
  args: {
    ...manifestArgs,
    "dry-run": dryRunFlag("client: print the objects as YAML, apply nothing; server: the API server checks each apply"),
    wait: {
      type: "boolean",
      default: false,
      description:
        "Wait until the Deployment is rolled out and one of its pods holds the leader Lease, showing each pod's state; " +
        "fails at once on image pull errors and crash loops",
    },
    timeout: durationFlag({
      default: "2m",
      description: "How long to wait for the CRD to be Established and, with --wait, for the operator",
    }),
    force: {
      type: "boolean",
      default: false,
      description: "Install even though a devctl operator is installed in another namespace (two operators)",
    },
  },
  async run({ args }) {
    const opts = installOptionsFrom(args);
    const timeoutMs = parseDuration(args.timeout, "timeout");
    const objects = buildManifests(opts);
    if (args["dry-run"] === "client") {
      const { toYamlDocuments } = await import("../../api/yaml.ts");
      process.stdout.write(toYamlDocuments(objects));
      info(`# dry run: ${objects.length} objects printed, nothing applied`);
      return;
    }
    const client = await clientFrom(args);
    if (args["dry-run"] === "server") {
      const { serverDryRun } = await import("./_server-dry-run.ts");
      for (const l of await serverDryRun(client, objects))
        out(`${l.name} ${l.action} (server dry run${l.note ? `: ${l.note}` : ""})`);
      return;
    }
    const { applyAll } = await import("../../install/apply.ts");
    const { installPreflight } = await import("../../install/installations.ts");
    await installPreflight(client, opts.namespace, { force: args.force, onNote: (l) => info(l) });
    info(
      `installing the devctl operator (${opts.image}, ${opts.replicas} replicas) into namespace ${opts.namespace} at ${client.server}`,
    );
    const results = await applyAll(client, objects, {
      clock: realClock,
      timeoutMs,
      onApplied: (r) => out(`${r.name} ${r.action}`),
      onProgress: (line) => info(line),
      absent: leftOut(opts),
    });
    const changed = results.filter((r) => r.action !== "unchanged").length;
    info(
      changed === 0
        ? "installed: everything was already up to date"
        : `installed: ${changed} of ${results.length} objects created or changed`,
    );
    if (!args.wait) {
      info(
        `the operator starts in the background; follow it with: devctl operator status -n ${opts.namespace} (or install with --wait)`,
      );
      return;
    }
    const { waitForOperator } = await import("../../install/wait.ts");
    const message = await waitForOperator(client, OPERATOR_NAME, opts.namespace, {
      clock: realClock,
      timeoutMs,
      onProgress: (line) => info(line),
    });
    info(`the operator is ready and leading: ${message}`);
  },
});
