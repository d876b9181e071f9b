/**
 * Pure builders of the optional parts of a WebApp's pod template (issue #31), which desired.ts adds to the
 * Deployment intent: the container's command, args, env, envFrom, resources, probes and securityContext, the pod's
 * securityContext and imagePullSecrets, and the template's extra labels and annotations (the WebApp's restart
 * request, api/webapp.ts RESTARTED_AT_ANNOTATION, among them).
 *
 * Properties:
 * - Nothing for a spec without the fields: every builder returns undefined (or an empty object) then, so the
 *   intent of such a WebApp is the one of before (desired-golden.test.ts).
 * - In the API server's own spelling, so a Deployment it stored for this intent never reads as drift (diff.ts
 *   compares owned fields exactly): quantities canonical ("0.5" -> "500m", "1.5Gi" -> "1536Mi", api/quantity.ts);
 *   what it would drop left out (an env value "", an empty list or map, a probe's initialDelaySeconds 0, a gRPC
 *   service ""); what it defaults (a probe's scheme, timeout, period and thresholds, an HTTP path "/") set only
 *   when the spec sets it, which diff.ts's subset rule makes equal to the default the server adds.
 * - healthCheck is two probes, HTTP GETs of its path on its port (spec.port by default): readiness with its
 *   timings, liveness with the same and LIVENESS_FAILURE_FACTOR times its failure threshold.
 * - podSecurity restricted sets what the Pod Security "restricted" profile checks (pod-security-admission
 *   v0.36 policy/check_*.go): runAsNonRoot and the RuntimeDefault seccomp profile on the pod, allowPrivilegeEscalation
 *   false and every capability dropped on the container.
 * - templateFieldsDigest names all of the above in one short value, carried by the Deployment in
 *   TEMPLATE_FIELDS_ANNOTATION, so that dropping a field, a variable or a label from the spec is a difference
 *   diff.ts sees (a live field the intent no longer has is otherwise none of its business).
 */
import { createHash } from "node:crypto";
import {
  DEFAULT_FAILURE_THRESHOLD,
  type EnvFromSource,
  type EnvVar,
  type HealthCheck,
  LIVENESS_FAILURE_FACTOR,
  type Probe,
  type Resources,
} from "../api/pod-template.ts";
import { canonicalQuantity } from "../api/quantity.ts";
import { GROUP, RESTARTED_AT_ANNOTATION, type WebAppSpec } from "../api/webapp.ts";

/**
 * On a Deployment whose pod template has fields of issue #31: the digest of those fields. Under our API group's
 * prefix, which diff.ts treats as ours alone.
 */
export const TEMPLATE_FIELDS_ANNOTATION = `${GROUP}/template-fields`;

/** A core/v1 Probe as the intent sends it. */
export interface ProbeIntent {
  httpGet?: {
    path?: string;
    port: number;
    scheme?: "HTTP" | "HTTPS";
    httpHeaders?: { name: string; value: string }[];
  };
  tcpSocket?: { port: number };
  grpc?: { port: number; service?: string };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
}

type ResourceList = { cpu?: string; memory?: string };

/** The container's fields beyond name, image, imagePullPolicy and ports, in the order the intent lists them. */
export interface ContainerOptions {
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: { requests?: ResourceList; limits?: ResourceList };
  readinessProbe?: ProbeIntent;
  livenessProbe?: ProbeIntent;
  startupProbe?: ProbeIntent;
  securityContext?: {
    allowPrivilegeEscalation: false;
    capabilities: { drop: ["ALL"] };
  };
}

/** The pod's fields beyond containers. */
export interface PodOptions {
  securityContext?: { runAsNonRoot: true; seccompProfile: { type: "RuntimeDefault" } };
  imagePullSecrets?: { name: string }[];
}

/** The template metadata beyond the selector labels. */
export interface TemplateMetadataOptions {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const nonEmpty = <T>(list: readonly T[] | undefined): T[] | undefined =>
  list && list.length > 0 ? [...list] : undefined;

/** A copy sharing nothing with the spec (which the parse memo hands out frozen, api/parse.ts): intents are mutable. */
const unshared = <T extends object>(o: T): T => (Object.keys(o).length > 0 ? structuredClone(o) : o);

/** The object without its undefined entries (so JSON text and key order are the same as without them). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, value]) => value !== undefined)) as T;
}

export function containerOptions(spec: WebAppSpec): ContainerOptions {
  const [readinessProbe, livenessProbe] = spec.healthCheck
    ? healthCheckProbes(spec.healthCheck, spec.port)
    : [probeIntent(spec.readinessProbe), probeIntent(spec.livenessProbe)];
  const options = defined({
    command: nonEmpty(spec.command),
    args: nonEmpty(spec.args),
    env: nonEmpty(spec.env?.map(envVar)),
    envFrom: nonEmpty(spec.envFrom?.map((e) => defined({ ...e }))),
    resources: resourcesIntent(spec.resources),
    readinessProbe,
    livenessProbe,
    startupProbe: probeIntent(spec.startupProbe),
    securityContext:
      spec.podSecurity === "restricted"
        ? { allowPrivilegeEscalation: false as const, capabilities: { drop: ["ALL"] as ["ALL"] } }
        : undefined,
  });
  return unshared(options);
}

export function podOptions(spec: WebAppSpec): PodOptions {
  return defined({
    securityContext:
      spec.podSecurity === "restricted"
        ? { runAsNonRoot: true as const, seccompProfile: { type: "RuntimeDefault" as const } }
        : undefined,
    imagePullSecrets: nonEmpty(spec.imagePullSecrets?.map((name) => ({ name }))),
  });
}

/** spec.podLabels and spec.podAnnotations, and the WebApp's restart request (RESTARTED_AT_ANNOTATION) if any. */
export function templateMetadataOptions(spec: WebAppSpec, restartedAt?: string): TemplateMetadataOptions {
  const nonEmptyMap = (m: Record<string, string> | undefined) =>
    m && Object.keys(m).length > 0 ? { ...m } : undefined;
  const annotations =
    restartedAt === undefined
      ? spec.podAnnotations
      : { ...spec.podAnnotations, [RESTARTED_AT_ANNOTATION]: restartedAt };
  return unshared(defined({ labels: nonEmptyMap(spec.podLabels), annotations: nonEmptyMap(annotations) }));
}

/** An env var as the API server keeps it: an empty value is no value. */
function envVar(e: EnvVar): EnvVar {
  if (e.valueFrom) return { name: e.name, valueFrom: e.valueFrom };
  return e.value ? { name: e.name, value: e.value } : { name: e.name };
}

function resourcesIntent(r: Resources | undefined): ContainerOptions["resources"] {
  const list = (l: ResourceList | undefined): ResourceList | undefined => {
    const out = defined({
      cpu: l?.cpu === undefined ? undefined : canonicalQuantity(l.cpu),
      memory: l?.memory === undefined ? undefined : canonicalQuantity(l.memory),
    });
    return Object.keys(out).length > 0 ? out : undefined;
  };
  const out = defined({ requests: list(r?.requests), limits: list(r?.limits) });
  return Object.keys(out).length > 0 ? out : undefined;
}

export function probeIntent(p: Probe | undefined): ProbeIntent | undefined {
  if (!p) return undefined;
  const http = p.httpGet;
  return defined({
    httpGet: http && defined({ ...http, httpHeaders: nonEmpty(http.httpHeaders) }),
    tcpSocket: p.tcpSocket && { port: p.tcpSocket.port },
    grpc: p.grpc && defined({ port: p.grpc.port, service: p.grpc.service || undefined }),
    exec: p.exec && { command: [...p.exec.command] },
    ...timings(p),
    successThreshold: p.successThreshold,
  });
}

/** A probe's timings; initialDelaySeconds 0 is left out, as the API server leaves it out. */
function timings(t: Omit<HealthCheck, "path" | "port">): Omit<ProbeIntent, "httpGet" | "tcpSocket" | "grpc" | "exec"> {
  return defined({
    initialDelaySeconds: t.initialDelaySeconds || undefined,
    periodSeconds: t.periodSeconds,
    timeoutSeconds: t.timeoutSeconds,
    failureThreshold: t.failureThreshold,
  });
}

/** healthCheck's readiness and liveness probes (see the module doc). */
export function healthCheckProbes(h: HealthCheck, specPort: number): [ProbeIntent, ProbeIntent] {
  const httpGet = { path: h.path, port: h.port ?? specPort };
  const readiness = { httpGet, ...timings(h) };
  const failures = (h.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD) * LIVENESS_FAILURE_FACTOR;
  const liveness = { httpGet: { ...httpGet }, ...timings(h), failureThreshold: failures };
  return [readiness, liveness];
}

/** A short digest of the optional parts of a template; undefined when it has none. */
export function templateFieldsDigest(parts: {
  container: ContainerOptions;
  pod: PodOptions;
  metadata: TemplateMetadataOptions;
}): string | undefined {
  const { container, pod, metadata } = parts;
  if (Object.keys(container).length + Object.keys(pod).length + Object.keys(metadata).length === 0) return undefined;
  return shortDigest(parts);
}

/** The first 16 hex digits of the sha256 of a value's JSON: an identity for a template or its parts. */
export function shortDigest(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}
