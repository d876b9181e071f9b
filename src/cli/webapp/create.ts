/**
 * `devctl webapp create NAME --image --port [--replicas] [--image-pull-policy]`: validated first with the same schema the
 * operator and the CRD use (a bad value is a usage error naming its field and flag, exit 2, before any
 * kubeconfig is read), then created; `--dry-run` (client) prints it as YAML, `--dry-run=server` has the
 * API server check it (admission, schema) and store nothing.
 */
import { defineCommand } from "citty";
import { parseWebApp } from "../../api/parse.ts";
import { API_VERSION, KIND, WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import type { KubeClient } from "../../kube/types.ts";
import { UsageError } from "../_errors.ts";
import { type DryRun, dryRunFlag } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { withCrdHint } from "./_hint.ts";

/** A flag value as the schema should see it: numbers as numbers, anything else as given (so the message shows it). */
export const numberish = (v: string | undefined): unknown =>
  v !== undefined && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;

const FLAG_OF: Record<string, string> = {
  "metadata.name": "NAME",
  "spec.image": "--image",
  "spec.replicas": "--replicas",
  "spec.port": "--port",
  "spec.imagePullPolicy": "--image-pull-policy",
};

export default defineCommand({
  meta: {
    name: "create",
    description: `Create a WebApp (the operator turns it into a Deployment and a Service)

Examples:
  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080
  devctl webapp create web -n team-a --image nginx:1.25 --port 80
  devctl webapp create web --image nginx:1.25 --port 80 --dry-run > web.yaml
  devctl webapp create web --image nginx:1.25 --port 80 --dry-run=server
  devctl webapp create web --image registry.local/web:dev --port 80 --image-pull-policy Never`,
  },
  args: {
    name: {
      type: "positional",
      description: "Name of the WebApp (a DNS-1035 label, at most 59 characters)",
      required: true,
    },
    image: { type: "string", required: true, description: "Container image, e.g. myregistry/myapp:v2.1.0" },
    port: { type: "string", valueHint: "int", required: true, description: "Port the container listens on (1-65535)" },
    replicas: { type: "string", valueHint: "int", description: "Number of pods (default 1)" },
    "image-pull-policy": {
      type: "string",
      description:
        "When the nodes pull the image: Always, IfNotPresent or Never (default: Kubernetes' rule for its tag)",
    },
    "dry-run": dryRunFlag("client: print the WebApp as YAML, create nothing; server: the API server checks it"),
    ...clusterArgs,
  },
  async run({ args }) {
    const dryRun = args["dry-run"] as DryRun;
    const spec = validSpec(args);
    const client = await clientOrNothing(args, dryRun);
    const namespace = args.namespace || (client ? namespaceOf(args, client) : "default");
    const webapp = { apiVersion: API_VERSION, kind: KIND, metadata: { name: args.name, namespace }, spec };
    if (dryRun === "client" || !client) {
      process.stdout.write(toYaml(webapp));
      return;
    }
    await client
      .create(WEBAPP_RESOURCE, webapp, { fieldManager: "devctl", ...(dryRun === "server" ? { dryRun: true } : {}) })
      .catch((e) => {
        throw withCrdHint(e);
      });
    out(`webapp.${WEBAPP_RESOURCE.group}/${args.name} created${dryRun === "server" ? " (server dry run)" : ""}`);
  },
});

/** The spec with defaults, or a UsageError listing every issue with its flag: `spec.port (--port): must be ...`. */
function validSpec(args: {
  name: string;
  image: string;
  port: string;
  replicas?: string;
  "image-pull-policy"?: string;
}): WebAppObject["spec"] {
  const draft: WebAppObject = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: args.name, namespace: "default" },
    spec: {
      image: args.image,
      ...(args.replicas !== undefined ? { replicas: numberish(args.replicas) } : {}),
      port: numberish(args.port),
      ...(args["image-pull-policy"] !== undefined ? { imagePullPolicy: args["image-pull-policy"] } : {}),
    },
  };
  const parsed = parseWebApp(draft);
  if (parsed.ok) return parsed.webapp.spec;
  const issues = parsed.issues.map((i) => `${i.path}${FLAG_OF[i.path] ? ` (${FLAG_OF[i.path]})` : ""}: ${i.message}`);
  throw new UsageError(`invalid WebApp "${args.name}": ${issues.join("; ")}`);
}

/** The client; on a client dry run, nothing when no kubeconfig is found (the namespace is then "default"). */
async function clientOrNothing(
  args: { kubeconfig?: string; context?: string; "request-timeout"?: string },
  dryRun: DryRun,
): Promise<KubeClient | undefined> {
  try {
    return await clientFrom(args);
  } catch (e) {
    if (dryRun === "client" && (e as Error).name === "ConfigError") return undefined;
    throw e;
  }
}
