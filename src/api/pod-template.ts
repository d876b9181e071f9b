/**
 * The optional WebApp fields that shape the Deployment's pod template (issue #31): env, envFrom, command, args,
 * resources, healthCheck and the three probes, podSecurity, imagePullSecrets, podLabels and podAnnotations.
 *
 * Properties:
 * - Optional, every one: a spec that sets none of them is the spec of before, and operator/desired.ts gives it the
 *   pod template of before, byte for byte.
 * - Enforced twice: each rule is also the CRD's (crd.ts), as a schema keyword or as CEL beside a check written in
 *   code (`cel(message, { rule })`). The few a CRD cannot hold are marked valibotOnly() with the reason; the API
 *   server still refuses those values when the operator writes the Deployment.
 * - No value the API server would rewrite: where it defaults a zero (a probe's period, timeout and thresholds) the
 *   schema starts at 1, and a path must start with "/"; what it drops (an empty env value, an empty list) the
 *   intent leaves out, and quantities are sent in the API server's own spelling (desired.ts, quantity.ts).
 * - Limits are named constants used by both the schema and its messages; list sizes also bound what the API server
 *   estimates the CEL rules on their items to cost.
 */
import * as v from "valibot";
import { atLeast, atMost, atMostItems, shown, wholeNumber } from "./_messages.ts";
import { cel, valibotOnly } from "./openapi.ts";
import { compareQuantities, isQuantity, QUANTITY } from "./quantity.ts";
import { DNS1123_SUBDOMAIN, isQualifiedName } from "./name-rules.ts";

export const ENV_MAX_ITEMS = 128;
export const ENV_FROM_MAX_ITEMS = 32;
export const ARGS_MAX_ITEMS = 256;
export const IMAGE_PULL_SECRETS_MAX_ITEMS = 16;
export const POD_LABELS_MAX = 64;
export const POD_ANNOTATIONS_MAX = 64;
/** The Kubernetes limit on the total size of an object's annotations (keys and values). */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;
/** Upper bound on a probe's seconds: an hour, far above any useful delay or period, low enough to catch typos. */
export const PROBE_SECONDS_MAX = 3600;
export const PROBE_THRESHOLD_MAX = 100;
/** healthCheck's liveness probe fails after this many times the readiness probe's failures. */
export const LIVENESS_FAILURE_FACTOR = 3;
/** Kubernetes' default failureThreshold, which healthCheck's readiness probe has when none is given. */
export const DEFAULT_FAILURE_THRESHOLD = 3;
export const QUANTITY_MAX_LENGTH = 32;
/** Upper bound on a cpu or memory quantity: past 8Ei the API server caps a binary amount. */
export const QUANTITY_MAX = "1Ei";
export const POD_SECURITY_LEVELS = ["restricted"] as const;
export type PodSecurityLevel = (typeof POD_SECURITY_LEVELS)[number];
/**
 * The pod labels the Deployment's selector and the Service select by, in this order: app, then managed-by
 * (operator/desired.ts webAppLabels takes its keys from here): spec.podLabels may not set them.
 */
export const SELECTOR_LABEL_KEYS = ["app", "managed-by"] as const;

/** An environment variable name (the C-identifier rule Kubernetes applied before relaxing it in 1.34). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const HTTP_PATH = /^\/\S*$/;
const HEADER_NAME = /^[-A-Za-z0-9!#$%&'*+.^_`|~]+$/;

export const named = (what: string, description: string) => {
  const article = /^[AEIOU]/.test(what) ? "an" : "a";
  const message =
    `must be the name of ${article} ${what}: lower-case letters, digits, '-' and '.', starting and ending with a ` +
    "letter or digit";
  return v.pipe(
    v.string(),
    v.description(description),
    v.maxLength(253, (i) => `must be at most 253 characters (got ${i.input.length})`),
    v.regex(DNS1123_SUBDOMAIN, (i) => `${message} (got ${shown(i.input)})`),
    cel(message),
  );
};

const envName = (description: string) => {
  const message = "must be an environment variable name: letters, digits, '_', '-' and '.', not starting with a digit";
  return v.pipe(
    v.string(),
    v.description(description),
    v.maxLength(256, (i) => `must be at most 256 characters (got ${i.input.length})`),
    v.regex(ENV_NAME, (i) => `${message} (got ${shown(i.input)})`),
    cel(message),
  );
};

const portNumber = (description: string) =>
  v.pipe(
    v.number(),
    v.description(description),
    v.integer(wholeNumber),
    v.minValue(1, atLeast(1)),
    v.maxValue(65535, atMost(65535)),
  );

/** An optional whole number in [min, max], with its description. */
export const whole = (description: string, min: number, max: number) =>
  v.optional(
    v.pipe(
      v.number(),
      v.description(description),
      v.integer(wholeNumber),
      v.minValue(min, atLeast(min)),
      v.maxValue(max, atMost(max)),
    ),
  );

/** Exactly one of `keys` is set on a T: a check and its CEL twin, to spread into the object's pipe. */
function exactlyOne<T extends object>(keys: readonly (keyof T & string)[]) {
  const message = `set exactly one of ${keys.join(", ")}`;
  const setOf = (o: T) => keys.filter((k) => o[k] !== undefined);
  return [
    v.check<T, (i: { input: T }) => string>(
      (o) => setOf(o).length === 1,
      (i) => `${message} (${setOf(i.input).length === 0 ? "none is set" : `got ${setOf(i.input).join(" and ")}`})`,
    ),
    cel<T>(message, { rule: `${keys.map((k) => `(has(self.${k}) ? 1 : 0)`).join(" + ")} == 1` }),
  ] as const;
}

/** No two items of a list of T share `key`: a check and its CEL twin (`keyCel` says the key of item x in CEL). */
function uniqueBy<T>(key: (item: T) => string, keyCel: (x: string) => string, message: string) {
  return [
    v.check<T[], (i: { input: T[] }) => string>(
      (items) => new Set(items.map(key)).size === items.length,
      (i) => `${message} (${shown(i.input.map(key).find((k, n, all) => all.indexOf(k) !== n))} is there twice)`,
    ),
    cel<T[]>(message, { rule: `self.all(x, self.exists_one(y, ${keyCel("y")} == ${keyCel("x")}))` }),
  ] as const;
}

const keySelector = (what: "Secret" | "ConfigMap") =>
  v.pipe(
    v.object({
      name: named(what, `Name of the ${what}, in the WebApp's namespace.`),
      key: v.pipe(
        v.string(),
        v.description(`Key of the ${what}'s data whose value the variable takes.`),
        v.maxLength(253, (i) => `must be at most 253 characters (got ${i.input.length})`),
        v.regex(CONFIG_KEY, (i) => `must be a data key: letters, digits, '-', '_' and '.' (got ${shown(i.input)})`),
        cel("must be a data key: letters, digits, '-', '_' and '.'"),
      ),
      optional: v.optional(
        v.pipe(
          v.boolean(),
          v.description(`Start the container even if the ${what} or its key is missing (the variable is then unset).`),
        ),
      ),
    }),
    v.description(`A key of a ${what} in the WebApp's namespace.`),
  );

const EnvVarSource = v.object({
  secretKeyRef: v.optional(keySelector("Secret")),
  configMapKeyRef: v.optional(keySelector("ConfigMap")),
});

const EnvVarFields = v.object({
  name: envName("Name of the variable."),
  value: v.optional(v.pipe(v.string(), v.description("The variable's value."))),
  valueFrom: v.optional(
    v.pipe(
      EnvVarSource,
      v.description(
        "Where the value comes from instead: a key of a Secret (secretKeyRef) or a ConfigMap (configMapKeyRef).",
      ),
      ...exactlyOne<v.InferOutput<typeof EnvVarSource>>(["secretKeyRef", "configMapKeyRef"]),
    ),
  ),
});

const EnvVar = v.pipe(
  EnvVarFields,
  v.description("An environment variable: a name and either a value or valueFrom."),
  ...exactlyOne<v.InferOutput<typeof EnvVarFields>>(["value", "valueFrom"]),
);
export type EnvVar = v.InferOutput<typeof EnvVar>;

const sourceRef = (what: "Secret" | "ConfigMap") =>
  v.pipe(
    v.object({
      name: named(what, `Name of the ${what}, in the WebApp's namespace.`),
      optional: v.optional(v.pipe(v.boolean(), v.description(`Start the container even if the ${what} is missing.`))),
    }),
    v.description(`Every key of this ${what} becomes a variable.`),
  );

const EnvFromFields = v.object({
  secretRef: v.optional(sourceRef("Secret")),
  configMapRef: v.optional(sourceRef("ConfigMap")),
  prefix: v.optional(envName("Put before the name of every variable this source gives, e.g. DB_.")),
});

const EnvFromSource = v.pipe(
  EnvFromFields,
  v.description("A whole Secret (secretRef) or ConfigMap (configMapRef) as environment variables."),
  ...exactlyOne<v.InferOutput<typeof EnvFromFields>>(["secretRef", "configMapRef"]),
);
export type EnvFromSource = v.InferOutput<typeof EnvFromSource>;

const strings = (description: string) =>
  v.optional(
    v.pipe(
      v.array(v.string()),
      v.description(description),
      v.maxLength(ARGS_MAX_ITEMS, atMostItems(ARGS_MAX_ITEMS, "items")),
    ),
  );

const QUANTITY_SHAPE =
  'must be a quantity such as "500m", "1", "256Mi" or "1.5Gi": digits, an optional fraction and an optional suffix ' +
  "(m, k, M, G, Ki, Mi, Gi, ...), no sign and no exponent";
const QUANTITY_TOO_BIG = `must be at most ${QUANTITY_MAX}`;

const quantity = (description: string) =>
  v.pipe(
    v.string((i) => `${QUANTITY_SHAPE}, written as a string (got ${shown(i.input)}); quote numbers in YAML`),
    v.description(description),
    v.maxLength(
      QUANTITY_MAX_LENGTH,
      (i) => `must be at most ${QUANTITY_MAX_LENGTH} characters (got ${i.input.length})`,
    ),
    v.regex(QUANTITY, (i) => `${QUANTITY_SHAPE} (got ${shown(i.input)})`),
    cel(QUANTITY_SHAPE),
    v.check(
      (q: string) => !isQuantity(q) || compareQuantities(q, QUANTITY_MAX) <= 0,
      (i) => `${QUANTITY_TOO_BIG} (got ${shown(i.input)})`,
    ),
    cel(QUANTITY_TOO_BIG, { rule: `!isQuantity(self) || quantity(self).compareTo(quantity('${QUANTITY_MAX}')) <= 0` }),
  );

const resourceList = (which: "requests" | "limits", description: string) =>
  v.optional(
    v.pipe(
      v.object({
        cpu: v.optional(quantity(`CPU ${which}, in cores: "250m" is a quarter of a core, "2" two cores.`)),
        memory: v.optional(quantity(`Memory ${which}, in bytes: "256Mi", "1Gi", "1.5Gi".`)),
      }),
      v.description(description),
    ),
  );

type ResourceLists = { requests?: { cpu?: string; memory?: string }; limits?: { cpu?: string; memory?: string } };

/** limits.<r> >= requests.<r> when both are set (and valid: their own rules report them otherwise). */
function limitsAtLeastRequests(r: "cpu" | "memory") {
  const message = `limits.${r} must be at least requests.${r}: raise the limit or lower the request`;
  const [request, limit] = [`self.requests.${r}`, `self.limits.${r}`];
  const rule =
    `!has(self.requests) || !has(self.limits) || !has(${request}) || !has(${limit}) || ` +
    `!isQuantity(${request}) || !isQuantity(${limit}) || quantity(${limit}).compareTo(quantity(${request})) >= 0`;
  const both = (o: ResourceLists) => [o.requests?.[r], o.limits?.[r]] as const;
  return [
    v.forward<ResourceLists, v.CheckIssue<ResourceLists>, ["limits", typeof r]>(
      v.check(
        (o: ResourceLists) => {
          const [req, lim] = both(o);
          return (
            req === undefined ||
            lim === undefined ||
            !isQuantity(req) ||
            !isQuantity(lim) ||
            compareQuantities(lim, req) >= 0
          );
        },
        (i) =>
          `must be at least requests.${r} (got limit ${shown(both(i.input)[1])}, request ${shown(both(i.input)[0])})`,
      ),
      ["limits", r],
    ),
    cel<ResourceLists>(message, { rule, fieldPath: `.limits.${r}` }),
  ] as const;
}

const Resources = v.pipe(
  v.object({
    requests: resourceList(
      "requests",
      "What the scheduler reserves for each pod's container: it is placed only on a node with this much free.",
    ),
    limits: resourceList(
      "limits",
      "The most each pod's container may use: CPU above it is throttled, memory above it gets the container killed.",
    ),
  }),
  v.description(
    "CPU and memory for the container. Limits must be at least the requests. Left out, the pods run with none " +
      "(BestEffort: first to be evicted, and refused in namespaces with a ResourceQuota).",
  ),
  ...limitsAtLeastRequests("cpu"),
  ...limitsAtLeastRequests("memory"),
);
export type Resources = v.InferOutput<typeof Resources>;

const HTTP_PATH_MESSAGE = "must be a path starting with '/', without spaces, e.g. /healthz";
export const httpPath = (description: string) =>
  v.pipe(
    v.string(),
    v.description(description),
    v.maxLength(2048, (i) => `must be at most 2048 characters (got ${i.input.length})`),
    v.regex(HTTP_PATH, (i) => `${HTTP_PATH_MESSAGE} (got ${shown(i.input)})`),
    cel(HTTP_PATH_MESSAGE),
  );

const seconds = (description: string, min: number) => whole(description, min, PROBE_SECONDS_MAX);
const threshold = (description: string, max = PROBE_THRESHOLD_MAX) => whole(description, 1, max);

const HttpGet = v.pipe(
  v.object({
    path: v.optional(httpPath("Path to request. Defaults to /.")),
    port: portNumber("Port of the container to send the request to."),
    scheme: v.optional(
      v.pipe(
        v.picklist(["HTTP", "HTTPS"], (i) => `must be HTTP or HTTPS (got ${shown(i.input)})`),
        v.description("HTTP or HTTPS (the certificate is not verified). Defaults to HTTP."),
      ),
    ),
    httpHeaders: v.optional(
      v.pipe(
        v.array(
          v.object({
            name: v.pipe(
              v.string(),
              v.description("Header name."),
              v.maxLength(256, (i) => `must be at most 256 characters (got ${i.input.length})`),
              v.regex(HEADER_NAME, (i) => `must be an HTTP header name (got ${shown(i.input)})`),
              cel("must be an HTTP header name"),
            ),
            value: v.pipe(v.string(), v.description("Header value.")),
          }),
        ),
        v.description("Headers to send, e.g. Host."),
        v.maxLength(16, atMostItems(16, "headers")),
      ),
    ),
  }),
  v.description("An HTTP GET to the container: a status from 200 to 399 is a success."),
);

const TcpSocket = v.pipe(
  v.object({ port: portNumber("Port of the container to connect to.") }),
  v.description("A TCP connection to the container: success when it opens."),
);

const Grpc = v.pipe(
  v.object({
    port: portNumber("Port of the container's gRPC server."),
    service: v.optional(
      v.pipe(
        v.string(),
        v.description("Service name for the gRPC Health Checking Protocol; left out, the server's overall health."),
        v.maxLength(256, (i) => `must be at most 256 characters (got ${i.input.length})`),
      ),
    ),
  }),
  v.description("A gRPC health check (grpc.health.v1.Health/Check): success when it answers SERVING."),
);

const Exec = v.pipe(
  v.object({
    command: v.pipe(
      v.array(v.string()),
      v.description("Command and arguments, run without a shell; exit status 0 is a success."),
      v.minLength(1, "must name a command"),
      v.maxLength(ARGS_MAX_ITEMS, atMostItems(ARGS_MAX_ITEMS, "items")),
    ),
  }),
  v.description("A command run in the container."),
);

const PROBE_HANDLERS = ["httpGet", "tcpSocket", "grpc", "exec"] as const;

/** The Kubernetes Probe (core/v1) less terminationGracePeriodSeconds; liveness and startup succeed after 1 success. */
function probe(kind: "readiness" | "liveness" | "startup", description: string) {
  const oneSuccess = kind !== "readiness";
  const fields = v.object({
    httpGet: v.optional(HttpGet),
    tcpSocket: v.optional(TcpSocket),
    grpc: v.optional(Grpc),
    exec: v.optional(Exec),
    initialDelaySeconds: seconds("Seconds after the container starts before the first probe. Defaults to 0.", 0),
    periodSeconds: seconds("Seconds between probes. Defaults to 10.", 1),
    timeoutSeconds: seconds("Seconds before a probe times out. Defaults to 1.", 1),
    successThreshold: threshold(
      oneSuccess
        ? "Successes in a row after a failure to count as passing: must be 1 for this probe. Defaults to 1."
        : "Successes in a row after a failure to count as passing. Defaults to 1.",
      oneSuccess ? 1 : PROBE_THRESHOLD_MAX,
    ),
    failureThreshold: threshold("Failures in a row to count as failing. Defaults to 3."),
  });
  return v.optional(
    v.pipe(fields, v.description(description), ...exactlyOne<v.InferOutput<typeof fields>>(PROBE_HANDLERS)),
  );
}
export type Probe = NonNullable<v.InferOutput<ReturnType<typeof probe>>>;

const HealthCheck = v.pipe(
  v.object({
    path: httpPath("Path that answers with a status from 200 to 399 while the app is healthy, e.g. /healthz."),
    port: v.optional(portNumber("Port to send the request to. Defaults to spec.port.")),
    initialDelaySeconds: seconds("Seconds after the container starts before the first check. Defaults to 0.", 0),
    periodSeconds: seconds("Seconds between checks. Defaults to 10.", 1),
    timeoutSeconds: seconds("Seconds before a check times out. Defaults to 1.", 1),
    failureThreshold: threshold(
      `Failed checks in a row before a pod counts as not ready. Defaults to ${DEFAULT_FAILURE_THRESHOLD}; the ` +
        `liveness probe restarts the container after ${LIVENESS_FAILURE_FACTOR} times as many.`,
    ),
  }),
  v.description(
    "A health check for an HTTP app: becomes a readiness probe (no traffic while the path fails) and a liveness " +
      `probe (the container is restarted after ${LIVENESS_FAILURE_FACTOR} times as many failures, so a slow start ` +
      "is not killed), both an HTTP GET of path. For anything else, use readinessProbe and livenessProbe instead.",
  ),
);
export type HealthCheck = v.InferOutput<typeof HealthCheck>;

const LABEL_KEY_MESSAGE =
  "must be a label or annotation key: an optional DNS subdomain prefix and '/', then 1-63 letters, digits, '-', " +
  "'_' and '.', starting and ending with a letter or digit";
const MAP_KEYS_WHY =
  "a CRD has no keyword for a map's keys, and a CEL rule over them would exceed the API server's cost limit " +
  "(keys have no length bound); the API server refuses such a key when the operator writes the Deployment";

const mapKey = () =>
  v.pipe(
    v.string(),
    v.check(isQualifiedName, (i) => `${LABEL_KEY_MESSAGE} (got ${shown(i.input)})`),
    valibotOnly(MAP_KEYS_WHY),
  );

const RESERVED_LABELS_MESSAGE =
  `must not set ${SELECTOR_LABEL_KEYS.join(" or ")}: the Deployment's selector and the Service find the pods by ` +
  "these labels, which the operator sets; choose another key";

const PodLabels = v.pipe(
  v.record(
    mapKey(),
    v.pipe(
      v.string(),
      v.maxLength(63, (i) => `must be a label value of at most 63 characters (got ${i.input.length})`),
      v.regex(
        LABEL_VALUE,
        (i) =>
          "must be a label value: letters, digits, '-', '_' and '.', starting and ending with a letter or digit " +
          `(got ${shown(i.input)})`,
      ),
    ),
  ),
  v.description(
    `Labels for the pods, beside the ${SELECTOR_LABEL_KEYS.join(" and ")} labels the operator sets (which cannot ` +
      "be changed here).",
  ),
  v.maxEntries(POD_LABELS_MAX, atMostItems(POD_LABELS_MAX, "labels")),
  v.check(
    (m: Record<string, string>) => !SELECTOR_LABEL_KEYS.some((k) => k in m),
    (i) => `${RESERVED_LABELS_MESSAGE} (got ${SELECTOR_LABEL_KEYS.filter((k) => k in i.input).join(", ")})`,
  ),
  cel(RESERVED_LABELS_MESSAGE, { rule: SELECTOR_LABEL_KEYS.map((k) => `!('${k}' in self)`).join(" && ") }),
);

const utf8 = new TextEncoder();
const annotationBytes = (m: Record<string, string>): number =>
  Object.entries(m).reduce((n, [k, val]) => n + utf8.encode(k).length + utf8.encode(val).length, 0);

const PodAnnotations = v.pipe(
  v.record(mapKey(), v.string()),
  v.description('Annotations for the pods, e.g. prometheus.io/scrape: "true".'),
  v.maxEntries(POD_ANNOTATIONS_MAX, atMostItems(POD_ANNOTATIONS_MAX, "annotations")),
  v.check(
    (m: Record<string, string>) => annotationBytes(m) <= ANNOTATIONS_MAX_BYTES,
    (i) => `must be at most ${ANNOTATIONS_MAX_BYTES} bytes in all, keys and values (got ${annotationBytes(i.input)})`,
  ),
  valibotOnly(
    "a CEL rule summing every key and value would exceed the API server's cost limit; the API server refuses " +
      "annotations over this size when the operator writes the Deployment",
  ),
);

const secretName = named(
  "Secret",
  "Name of a Secret of type kubernetes.io/dockerconfigjson in the WebApp's namespace.",
);

/** The entries WebAppSpec gains (webapp.ts spreads them into its object). */
export const POD_TEMPLATE_FIELDS = {
  env: v.optional(
    v.pipe(
      v.array(EnvVar),
      v.description(
        "Environment variables of the container: each a name and a value, or a value from a key of a Secret or ConfigMap.",
      ),
      v.maxLength(ENV_MAX_ITEMS, atMostItems(ENV_MAX_ITEMS, "variables")),
      ...uniqueBy<EnvVar>(
        (e) => e.name,
        (x) => `${x}.name`,
        "each name may be set once",
      ),
    ),
  ),
  envFrom: v.optional(
    v.pipe(
      v.array(EnvFromSource),
      v.description(
        "Whole Secrets or ConfigMaps whose every key becomes an environment variable; env wins over these for a name both set.",
      ),
      v.maxLength(ENV_FROM_MAX_ITEMS, atMostItems(ENV_FROM_MAX_ITEMS, "sources")),
    ),
  ),
  command: strings("The container's command (its entrypoint), replacing the image's ENTRYPOINT; no shell runs it."),
  args: strings("Arguments to the command, replacing the image's CMD."),
  resources: v.optional(Resources),
  healthCheck: v.optional(HealthCheck),
  readinessProbe: probe(
    "readiness",
    "When a pod may take traffic (the Kubernetes Probe): set exactly one of httpGet, tcpSocket, grpc, exec. Not " +
      "with healthCheck, which makes this probe.",
  ),
  livenessProbe: probe(
    "liveness",
    "When a container is restarted (the Kubernetes Probe): set exactly one of httpGet, tcpSocket, grpc, exec. Not " +
      "with healthCheck, which makes this probe.",
  ),
  startupProbe: probe(
    "startup",
    "Holds the other probes back until the app has started (the Kubernetes Probe): set exactly one of httpGet, " +
      "tcpSocket, grpc, exec.",
  ),
  podSecurity: v.optional(
    v.pipe(
      v.picklist(POD_SECURITY_LEVELS, (i) => `must be ${POD_SECURITY_LEVELS.join(" or ")} (got ${shown(i.input)})`),
      v.description(
        'restricted: the pods meet the Pod Security "restricted" profile (run as non-root, no privilege ' +
          "escalation, all capabilities dropped, the runtime's default seccomp profile), so a namespace that " +
          "enforces it admits them. The image must run as a non-root user. Left out, no security settings are made.",
      ),
    ),
  ),
  imagePullSecrets: v.optional(
    v.pipe(
      v.array(secretName),
      v.description("Secrets with the credentials to pull spec.image from a private registry."),
      v.maxLength(IMAGE_PULL_SECRETS_MAX_ITEMS, atMostItems(IMAGE_PULL_SECRETS_MAX_ITEMS, "Secrets")),
      ...uniqueBy<string>(
        (s) => s,
        (x) => x,
        "each Secret may be named once",
      ),
    ),
  ),
  podLabels: v.optional(PodLabels),
  podAnnotations: v.optional(PodAnnotations),
};

type ProbeFields = { healthCheck?: unknown; readinessProbe?: unknown; livenessProbe?: unknown };

/** healthCheck is the readiness and liveness probes: a spec (a T) may not give either of them beside it. */
export function healthCheckAlone<T extends ProbeFields>(probe: "readinessProbe" | "livenessProbe") {
  const message =
    `healthCheck and ${probe} cannot both be set: healthCheck makes the ${probe.replace("Probe", "")} probe; ` +
    `remove spec.${probe}, or remove spec.healthCheck and write the probes in full`;
  return [
    v.forward<T, v.CheckIssue<T>, [typeof probe]>(
      v.check((s: T) => s.healthCheck === undefined || s[probe] === undefined, message),
      [probe] as never,
    ),
    cel<T>(message, { rule: `!has(self.healthCheck) || !has(self.${probe})`, fieldPath: `.${probe}` }),
  ] as const;
}
