/**
 * The lines `devctl webapp describe` shows for the spec's pod-template fields (issue #31), in kubectl describe's
 * words where it has them: probes as "http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1
 * #failure=3", env references as "<set to the key 'url' in secret 'db'>". Pure.
 *
 * Properties:
 * - Nothing for a spec without the fields: describe shows what it showed before.
 * - The spec as stored, not as parsed: a field of an unexpected shape is shown as "<invalid>", never an exception
 *   (the WebApp's status says what is wrong with it).
 * - healthCheck is shown as the two probes it becomes, with the defaults Kubernetes gives what it leaves out.
 */
import { DEFAULT_FAILURE_THRESHOLD, LIVENESS_FAILURE_FACTOR } from "../../api/pod-template.ts";
import { exposeUrl } from "../../api/expose.ts";
import { DEFAULT_MAX_UNAVAILABLE } from "../../api/webapp.ts";

type Loose = Record<string, unknown>;

const isObject = (x: unknown): x is Loose => typeof x === "object" && x !== null && !Array.isArray(x);
const list = (x: unknown): unknown[] | undefined => (Array.isArray(x) ? x : undefined);
const str = (x: unknown): string => (typeof x === "string" || typeof x === "number" ? String(x) : "<invalid>");

/** kubectl's one-line form of a Probe, defaults filled in as the API server fills them. */
export function probeLine(p: unknown): string {
  if (!isObject(p)) return "<invalid>";
  const timings =
    `delay=${str(p.initialDelaySeconds ?? 0)}s timeout=${str(p.timeoutSeconds ?? 1)}s ` +
    `period=${str(p.periodSeconds ?? 10)}s #success=${str(p.successThreshold ?? 1)} ` +
    `#failure=${str(p.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD)}`;
  return `${handler(p)} ${timings}`;
}

function handler(p: Loose): string {
  if (isObject(p.httpGet)) {
    const h = p.httpGet;
    return `http-get ${String(h.scheme ?? "HTTP").toLowerCase()}://:${str(h.port)}${str(h.path ?? "/")}`;
  }
  if (isObject(p.tcpSocket)) return `tcp-socket :${str(p.tcpSocket.port)}`;
  if (isObject(p.grpc)) return `grpc <pod>:${str(p.grpc.port)} ${p.grpc.service ? str(p.grpc.service) : "<service>"}`;
  if (isObject(p.exec)) return `exec [${(list(p.exec.command) ?? []).map(str).join(" ")}]`;
  return "<invalid>";
}

function envLine(e: unknown): [string, string] {
  if (!isObject(e)) return ["<invalid>", ""];
  const from = isObject(e.valueFrom) ? e.valueFrom : undefined;
  const ref =
    from && (isObject(from.secretKeyRef) ? ["secret", from.secretKeyRef] : ["config map", from.configMapKeyRef]);
  if (ref && isObject(ref[1])) {
    const r = ref[1] as Loose;
    const optional = `Optional: ${r.optional === true}`;
    return [str(e.name), `<set to the key '${str(r.key)}' in ${ref[0]} '${str(r.name)}'>  ${optional}`];
  }
  return [str(e.name), e.value === undefined ? "" : str(e.value)];
}

function envFromLine(e: unknown): string {
  if (!isObject(e)) return "<invalid>";
  const [kind, ref] = isObject(e.secretRef) ? ["Secret", e.secretRef] : ["ConfigMap", e.configMapRef];
  if (!isObject(ref)) return "<invalid>";
  const prefix = e.prefix ? `  Prefix: ${str(e.prefix)}` : "";
  return `${str(ref.name)}  ${kind}  Optional: ${ref.optional === true}${prefix}`;
}

function resourcesLines(r: unknown): [string, string][] {
  if (!isObject(r)) return [["Resources", "<invalid>"]];
  const pairs = (l: unknown) =>
    isObject(l)
      ? Object.entries(l)
          .map(([k, v]) => `${k}=${str(v)}`)
          .join(", ")
      : "<invalid>";
  return [
    ...(r.requests !== undefined ? ([["Requests", pairs(r.requests)]] as [string, string][]) : []),
    ...(r.limits !== undefined ? ([["Limits", pairs(r.limits)]] as [string, string][]) : []),
  ];
}

/** healthCheck's two probes, as the operator makes them (operator/desired-template.ts healthCheckProbes). */
function healthCheckLines(h: unknown, specPort: unknown): [string, string][] {
  if (!isObject(h)) return [["Health Check", "<invalid>"]];
  const httpGet = { path: h.path, port: h.port ?? specPort };
  const failures = typeof h.failureThreshold === "number" ? h.failureThreshold : DEFAULT_FAILURE_THRESHOLD;
  return [
    ["Readiness", `${probeLine({ ...h, httpGet })}  (healthCheck)`],
    [
      "Liveness",
      `${probeLine({ ...h, httpGet, failureThreshold: failures * LIVENESS_FAILURE_FACTOR })}  (healthCheck)`,
    ],
  ];
}

/** spec.disruptionBudget as its PodDisruptionBudget says it (from 2 replicas; see the Replicas row). */
function budgetLine(b: unknown): string {
  if (!isObject(b)) return "<invalid>";
  if (b.enabled === false) return "none (enabled: false)";
  if (b.minAvailable !== undefined) return `min available ${str(b.minAvailable)}`;
  return `max unavailable ${str(b.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE)}`;
}

/** spec.expose as the address it asks for: "https://shop.example.com/api (class nginx, TLS secret shop-tls)". */
function exposeLine(e: unknown): string {
  if (!isObject(e) || typeof e.host !== "string") return "<invalid>";
  const url = exposeUrl({
    host: e.host,
    ...(typeof e.path === "string" ? { path: e.path } : {}),
    ...(e.tlsSecretName !== undefined ? { tlsSecretName: str(e.tlsSecretName) } : {}),
  });
  const extra = [
    ...(e.ingressClassName !== undefined ? [`class ${str(e.ingressClassName)}`] : []),
    ...(e.tlsSecretName !== undefined ? [`TLS secret ${str(e.tlsSecretName)}`] : []),
  ];
  return extra.length ? `${url} (${extra.join(", ")})` : url;
}

/** Rows of "Key: value" for the spec's pod-template fields, and the nested Environment lines. */
export function templateRows(spec: Loose): {
  rows: [string, string][];
  environment: [string, string][];
  envFrom: string[];
} {
  const rows: [string, string][] = [];
  if (spec.command !== undefined) rows.push(["Command", (list(spec.command) ?? ["<invalid>"]).map(str).join(" ")]);
  if (spec.args !== undefined) rows.push(["Args", (list(spec.args) ?? ["<invalid>"]).map(str).join(" ")]);
  if (spec.resources !== undefined) rows.push(...resourcesLines(spec.resources));
  if (spec.healthCheck !== undefined) rows.push(...healthCheckLines(spec.healthCheck, spec.port));
  if (spec.readinessProbe !== undefined) rows.push(["Readiness", probeLine(spec.readinessProbe)]);
  if (spec.livenessProbe !== undefined) rows.push(["Liveness", probeLine(spec.livenessProbe)]);
  if (spec.startupProbe !== undefined) rows.push(["Startup", probeLine(spec.startupProbe)]);
  if (spec.podSecurity !== undefined) rows.push(["Pod Security", str(spec.podSecurity)]);
  if (spec.disruptionBudget !== undefined) rows.push(["Disruption Budget", budgetLine(spec.disruptionBudget)]);
  if (spec.expose !== undefined) rows.push(["Expose", exposeLine(spec.expose)]);
  if (spec.imagePullSecrets !== undefined)
    rows.push(["Image Pull Secrets", (list(spec.imagePullSecrets) ?? ["<invalid>"]).map(str).join(", ")]);
  for (const [key, field] of [
    ["Pod Labels", spec.podLabels],
    ["Pod Annotations", spec.podAnnotations],
  ] as const) {
    if (field === undefined) continue;
    const entries = isObject(field) ? Object.entries(field).map(([k, v]) => `${k}=${str(v)}`) : ["<invalid>"];
    rows.push([key, entries.join(", ")]);
  }
  const environment = (list(spec.env) ?? (spec.env === undefined ? [] : ["<invalid>"])).map(envLine);
  const envFrom = (list(spec.envFrom) ?? (spec.envFrom === undefined ? [] : ["<invalid>"])).map(envFromLine);
  return { rows, environment, envFrom };
}
