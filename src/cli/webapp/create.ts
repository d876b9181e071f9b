/**
 * `devctl webapp create NAME --image --port [--replicas] [--image-pull-policy] [--env NAME=VALUE]...
 * [--env-from-secret NAME]... [--health-path /PATH] [--cpu Q] [--memory Q] [--min N --max N] [--restricted]
 * [--host HOST]`: validated
 * first with the same schema the operator and the CRD use (_create-spec.ts: a bad value is a usage error naming its
 * field and flag, exit 2, before any kubeconfig is read), then created; `--dry-run` (client) prints it as YAML, `--dry-run=server`
 * has the API server check it (admission, schema) and store nothing.
 */
import { defineCommand } from "citty";
import { API_VERSION, KIND, WEBAPP_RESOURCE } from "../../api/webapp.ts";
import { toYaml } from "../../api/yaml.ts";
import type { KubeClient } from "../../kube/types.ts";
import { allValues, type DryRun, dryRunFlag, repeatable, typed } from "../_flags.ts";
import { clientFrom, clusterArgs, namespaceOf } from "../_global.ts";
import { out } from "../_output.ts";
import { parseEnvFlag, validSpec } from "./_create-spec.ts";
import { withCrdHint } from "./_hint.ts";

export default defineCommand({
  meta: {
    name: "create",
    description: `Create a WebApp (the operator turns it into a Deployment and a Service)

Examples:
  devctl webapp create my-service --image myregistry/myapp:v2.1.0 --replicas 5 --port 8080
  devctl webapp create web -n team-a --image nginx:1.25 --port 80
  devctl webapp create web --image nginx:1.25 --port 80 --dry-run > web.yaml
  devctl webapp create web --image nginx:1.25 --port 80 --dry-run=server
  devctl webapp create web --image registry.local/web:dev --port 80 --image-pull-policy Never
  devctl webapp create shop --image registry.example.com/shop:v3 --port 8080 --replicas 3 \\
    --env MODE=production --env-from-secret shop-db --health-path /healthz \\
    --cpu 250m --memory 256Mi --restricted --host shop.example.com
  devctl webapp create api --image registry.example.com/api:v1 --port 8080 --cpu 100m --min 2 --max 10`,
  },
  args: {
    name: {
      type: "positional",
      description: "Name of the WebApp (a DNS-1035 label, at most 59 characters)",
      required: true,
    },
    image: { type: "string", required: true, description: "Container image, e.g. myregistry/myapp:v2.1.0" },
    port: { type: "string", valueHint: "int", required: true, description: "Port the container listens on (1-65535)" },
    replicas: { type: "string", valueHint: "int", description: "Number of pods (default 1; or --min/--max)" },
    "image-pull-policy": {
      type: "string",
      description:
        "When the nodes pull the image: Always, IfNotPresent or Never (default: Kubernetes' rule for its tag)",
    },
    env: repeatable(
      typed(
        {
          type: "string",
          valueHint: "NAME=VALUE",
          description: "Environment variable of the container (repeatable): sets an item of spec.env",
        },
        parseEnvFlag,
      ),
    ),
    "env-from-secret": repeatable({
      type: "string",
      valueHint: "NAME",
      description: "Secret whose every key becomes an environment variable (repeatable): spec.envFrom",
    }),
    "health-path": {
      type: "string",
      valueHint: "/PATH",
      description:
        "HTTP path that answers 200-399 while the app is healthy: a readiness and a liveness probe on --port (spec.healthCheck)",
    },
    cpu: {
      type: "string",
      valueHint: "quantity",
      description: "CPU request per pod, e.g. 250m or 1: what the scheduler reserves (spec.resources.requests.cpu)",
    },
    memory: {
      type: "string",
      valueHint: "quantity",
      description:
        "Memory request per pod, e.g. 256Mi or 1Gi: what the scheduler reserves (spec.resources.requests.memory)",
    },
    min: {
      type: "string",
      valueHint: "int",
      description:
        "Fewest pods, with --max: an autoscaler decides between them from CPU use (spec.autoscaling; needs --cpu)",
    },
    max: {
      type: "string",
      valueHint: "int",
      description:
        "Most pods the autoscaler may run (spec.autoscaling.maxReplicas; instead of --replicas; needs --cpu)",
    },
    restricted: {
      type: "boolean",
      description:
        'Meet the Pod Security "restricted" profile (non-root, no privilege escalation, no capabilities): spec.podSecurity',
    },
    host: {
      type: "string",
      valueHint: "HOST",
      description:
        "Host name to answer on outside the cluster, e.g. shop.example.com: an Ingress to the Service (spec.expose)",
    },
    "dry-run": dryRunFlag("client: print the WebApp as YAML, create nothing; server: the API server checks it"),
    ...clusterArgs,
  },
  async run({ args, rawArgs }) {
    const dryRun = args["dry-run"] as DryRun;
    const spec = validSpec({
      ...args,
      env: allValues(rawArgs, "env"),
      "env-from-secret": allValues(rawArgs, "env-from-secret"),
    });
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
