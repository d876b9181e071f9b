/** `devctl operator install`: applies the CRD, RBAC and the operator Deployment (src/install). */
import { defineCommand } from "citty";
import { VERSION } from "../../build/version.ts";
import { realClock } from "../../runtime/clock.ts";
import {
  buildManifests,
  DEFAULT_NAMESPACE,
  DEFAULT_REPLICAS,
  defaultImage,
  MAX_REPLICAS,
  OPERATOR_NAME,
  type InstallOptions,
} from "../../install/manifests.ts";
import { clientFrom, connectionArgs } from "../_global.ts";
import { info, out } from "../_output.ts";
import {
  dryRunFlag,
  durationFlag,
  intFlag,
  parseDuration,
  parseNamespaceName,
  parsePositiveInt,
  typed,
} from "../_flags.ts";
import { UsageError } from "../_errors.ts";

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
      default: String(DEFAULT_REPLICAS),
      description: "Operator replicas; one leads, the others stand by with warm caches",
    },
    1,
    MAX_REPLICAS,
  ),
} as const;

export function installOptionsFrom(args: { namespace?: string; image?: string; replicas?: string }): InstallOptions {
  const namespace = args.namespace || DEFAULT_NAMESPACE;
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace) || namespace.length > 63) {
    throw new UsageError(
      `--namespace "${namespace}" is not a valid namespace name (lower-case letters, digits and '-', at most 63 characters)`,
    );
  }
  const image = args.image || defaultImage();
  if (/\s/.test(image)) throw new UsageError(`--image "${image}" must not contain whitespace`);
  return { namespace, image, replicas: parsePositiveInt(args.replicas, "replicas", MAX_REPLICAS), version: VERSION };
}

export default defineCommand({
  meta: {
    name: "install",
    description: `Install the WebApp operator: the CRD, a namespace, a ServiceAccount, least-privilege RBAC and the operator Deployment (server-side apply; running it again changes nothing)

Examples:
  devctl operator install --wait
  devctl operator install --image registry.example.com/devctl:0.1.0 --replicas 1 -n platform
  devctl operator install --dry-run > devctl-operator.yaml     # print, apply nothing
  devctl operator install --dry-run=server                     # the API server checks it, stores nothing`,
  },
  args: {
    ...manifestArgs,
    "dry-run": dryRunFlag("client: print the objects as YAML, apply nothing; server: the API server checks each apply"),
    wait: {
      type: "boolean",
      default: false,
      description: "Wait until the operator Deployment is ready, showing progress",
    },
    timeout: durationFlag({
      default: "2m",
      description: "How long to wait for the CRD to be Established and, with --wait, for the operator",
    }),
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
    info(
      `installing the devctl operator (${opts.image}, ${opts.replicas} replicas) into namespace ${opts.namespace} at ${client.server}`,
    );
    const results = await applyAll(client, objects, {
      clock: realClock,
      timeoutMs,
      onApplied: (r) => out(`${r.name} ${r.action}`),
      onProgress: (line) => info(line),
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
    const { waitForRollout } = await import("../../install/rollout.ts");
    const message = await waitForRollout(client, OPERATOR_NAME, opts.namespace, {
      clock: realClock,
      timeoutMs,
      onProgress: (line) => info(line),
    });
    info(`the operator is ready: ${message}`);
  },
});
