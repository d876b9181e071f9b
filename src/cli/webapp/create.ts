/**
 * `devctl webapp create NAME --image --port [--replicas]`: validated here with the same schema the
 * operator and the CRD use (a bad value names its field and flag, exit 1; a missing flag is a usage
 * error, exit 2), then created, or printed as YAML with --dry-run.
 */
import { defineCommand } from "citty";
import { formatIssues, parseWebApp } from "../../api/parse.ts";
import { API_VERSION, KIND, WEBAPP_RESOURCE, type WebAppObject } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import type { KubeClient } from "../../kube/types.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { withCrdHint } from "./_hint.ts";

/** A flag value as the schema should see it: numbers as numbers, anything else as given (so the message shows it). */
export const numberish = (v: string | undefined): unknown =>
  v !== undefined && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;

const FLAG_OF: Record<string, string> = {
  "metadata.name": "NAME",
  "spec.image": "--image",
  "spec.replicas": "--replicas",
  "spec.port": "--port",
};

export default defineCommand({
  meta: {
    name: "create",
    description: `Create a WebApp (the operator turns it into a Deployment and a Service)

Examples:
  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080
  devctl webapp create web -n team-a --image nginx:1.25 --port 80
  devctl webapp create web --image nginx:1.25 --port 80 --dry-run > web.yaml`,
  },
  args: {
    name: {
      type: "positional",
      description: "Name of the WebApp (a DNS-1035 label, at most 59 characters)",
      required: true,
    },
    image: { type: "string", required: true, description: "Container image, e.g. myregistry/myapp:v2.1.0" },
    port: { type: "string", required: true, description: "Port the container listens on (1-65535)" },
    replicas: { type: "string", description: "Number of pods (default 1)" },
    "dry-run": { type: "boolean", default: false, description: "Print the WebApp as YAML and create nothing" },
    ...clusterArgs,
  },
  async run({ args }) {
    const client = await clientOrNothing(args);
    const namespace = args.namespace || (client ? namespaceOf(args, client) : "default");
    const draft: WebAppObject = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: args.name, namespace },
      spec: {
        image: args.image,
        ...(args.replicas !== undefined ? { replicas: numberish(args.replicas) } : {}),
        port: numberish(args.port),
      },
    };
    const parsed = parseWebApp(draft);
    if (!parsed.ok) {
      const issues = parsed.issues.map((i) => ({
        ...i,
        path: FLAG_OF[i.path] ? `${i.path} (${FLAG_OF[i.path]})` : i.path,
      }));
      throw new Error(`invalid WebApp ${namespace}/${args.name}:\n${formatIssues(issues)}`);
    }
    const webapp = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: { name: args.name, namespace },
      spec: parsed.webapp.spec,
    };
    if (args["dry-run"]) {
      process.stdout.write(toYaml(webapp));
      return;
    }
    await (client ?? (await clientFrom(args)))
      .create(WEBAPP_RESOURCE, webapp, { fieldManager: "devctl" })
      .catch((e) => {
        throw withCrdHint(e);
      });
    console.log(`webapp.${WEBAPP_RESOURCE.group}/${args.name} created`);
  },
});

/** The client; on a dry run, nothing when no kubeconfig is found (the namespace is then "default"). */
async function clientOrNothing(args: {
  kubeconfig?: string;
  context?: string;
  "dry-run"?: boolean;
}): Promise<KubeClient | undefined> {
  try {
    return await clientFrom(args);
  } catch (e) {
    if (args["dry-run"] && (e as Error).name === "ConfigError") return undefined;
    throw e;
  }
}
