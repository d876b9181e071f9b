/**
 * The WebApp spec `devctl webapp create` sends, built from its flags and checked with the schema the operator and
 * the CRD use. Pure.
 *
 * Properties:
 * - Each flag sets one field: --image, --port, --replicas, --image-pull-policy as named; --env NAME=VALUE (each
 *   one an item of spec.env), --env-from-secret NAME (each one a spec.envFrom secretRef), --health-path
 *   (spec.healthCheck.path), --cpu and --memory (spec.resources.requests: what the scheduler reserves for each pod),
 *   --min and --max (spec.autoscaling's bounds: an autoscaler decides the count), --restricted (spec.podSecurity:
 *   restricted), --host (spec.expose.host: an Ingress for it). A flag left out leaves its field out, but for
 *   --replicas: 1 unless --min/--max autoscale, so that the WebApp reads as it always did.
 * - Refused before anything is sent: a --env without "=" by its flag's own check (parseEnvFlag), every other bad
 *   value by the schema, each issue with its field and the flag that set it: `spec.resources.requests.cpu (--cpu):
 *   must be a quantity ...`, all in one UsageError.
 */
import { parseWebApp } from "../../api/parse.ts";
import { API_VERSION, KIND, WEBAPP_DEFAULT_REPLICAS, type WebAppObject, type WebAppSpec } from "../../api/webapp.ts";
import { UsageError } from "../_errors.ts";

/** The flags' values as citty and allValues give them. */
export interface CreateFlags {
  name: string;
  image: string;
  port: string;
  replicas?: string;
  "image-pull-policy"?: string;
  env?: readonly string[];
  "env-from-secret"?: readonly string[];
  "health-path"?: string;
  cpu?: string;
  memory?: string;
  min?: string;
  max?: string;
  restricted?: boolean;
  host?: string;
}

/** The spec field each flag sets (a field and everything under it). */
const FLAG_OF: [path: string, flag: string][] = [
  ["metadata.name", "NAME"],
  ["spec.image", "--image"],
  ["spec.replicas", "--replicas"],
  ["spec.port", "--port"],
  ["spec.imagePullPolicy", "--image-pull-policy"],
  ["spec.env", "--env"],
  ["spec.envFrom", "--env-from-secret"],
  ["spec.healthCheck", "--health-path"],
  ["spec.resources.requests.cpu", "--cpu"],
  ["spec.resources.requests.memory", "--memory"],
  ["spec.autoscaling.minReplicas", "--min"],
  ["spec.autoscaling.maxReplicas", "--max"],
  ["spec.autoscaling", "--min/--max"],
  ["spec.podSecurity", "--restricted"],
  ["spec.expose", "--host"],
];

const flagOf = (path: string): string | undefined =>
  FLAG_OF.find(([p]) => path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`))?.[1];

/** A flag value as the schema should see it: numbers as numbers, anything else as given (so the message shows it). */
export const numberish = (v: string | undefined): unknown =>
  v !== undefined && /^-?\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : v;

/** `--env NAME=VALUE`: the name before the first "=", the value after it (which may hold "=" or be empty). */
export function parseEnvFlag(value: string, flag: string): { name: string; value: string } {
  const eq = value.indexOf("=");
  if (eq <= 0)
    throw new UsageError(`${flag} "${value}" must be NAME=VALUE, e.g. ${flag} MODE=production (VALUE may be empty)`);
  return { name: value.slice(0, eq), value: value.slice(eq + 1) };
}

/** The spec the flags describe, before any check. */
export function draftSpec(f: CreateFlags): Record<string, unknown> {
  const requests = {
    ...(f.cpu !== undefined ? { cpu: f.cpu } : {}),
    ...(f.memory !== undefined ? { memory: f.memory } : {}),
  };
  const autoscaling = {
    ...(f.min !== undefined ? { minReplicas: numberish(f.min) } : {}),
    ...(f.max !== undefined ? { maxReplicas: numberish(f.max) } : {}),
  };
  const spec: Record<string, unknown> = {
    image: f.image,
    // Written out as it always was (the CRD no longer defaults it): kubectl get shows DESIRED 1, not an empty cell.
    ...(f.replicas !== undefined
      ? { replicas: numberish(f.replicas) }
      : Object.keys(autoscaling).length === 0
        ? { replicas: WEBAPP_DEFAULT_REPLICAS }
        : {}),
    port: numberish(f.port),
    ...(f["image-pull-policy"] !== undefined ? { imagePullPolicy: f["image-pull-policy"] } : {}),
    ...(f.env?.length ? { env: f.env.map((e) => parseEnvFlag(e, "--env")) } : {}),
    ...(f["env-from-secret"]?.length ? { envFrom: f["env-from-secret"].map((name) => ({ secretRef: { name } })) } : {}),
    ...(f["health-path"] !== undefined ? { healthCheck: { path: f["health-path"] } } : {}),
    ...(Object.keys(requests).length > 0 ? { resources: { requests } } : {}),
    ...(Object.keys(autoscaling).length > 0 ? { autoscaling } : {}),
    ...(f.restricted ? { podSecurity: "restricted" } : {}),
    ...(f.host !== undefined ? { expose: { host: f.host } } : {}),
  };
  return spec;
}

/** The spec with defaults, or a UsageError listing every issue with its flag: `spec.port (--port): must be ...`. */
export function validSpec(f: CreateFlags): WebAppSpec {
  const draft: WebAppObject = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: f.name, namespace: "default" },
    spec: draftSpec(f),
  };
  const parsed = parseWebApp(draft);
  if (parsed.ok) return parsed.webapp.spec;
  const issues = parsed.issues.map((i) => {
    const flag = flagOf(i.path);
    return `${i.path}${flag ? ` (${flag})` : ""}: ${i.message}`;
  });
  throw new UsageError(`invalid WebApp "${f.name}": ${issues.join("; ")}`);
}
