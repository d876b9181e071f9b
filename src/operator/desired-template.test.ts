import { describe, expect, test } from "bun:test";
import { parseWebApp } from "../api/parse.ts";
import { SELECTOR_LABEL_KEYS } from "../api/pod-template.ts";
import { RESTARTED_AT_ANNOTATION, type WebApp } from "../api/webapp.ts";
import { desiredDeployment, webAppLabels } from "./desired.ts";
import { TEMPLATE_FIELDS_ANNOTATION } from "./desired-template.ts";

/** test-app with `over` in its spec, parsed as the operator parses it (so defaults and checks apply). */
function app(over: Record<string, unknown>): WebApp {
  const parsed = parseWebApp({
    metadata: { name: "test-app", namespace: "default", uid: "uid-1" },
    spec: { image: "nginx:1.25", replicas: 3, port: 8080, ...over },
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.webapp;
}
const template = (over: Record<string, unknown>) => desiredDeployment(app(over)).spec.template;
const container = (over: Record<string, unknown>) => template(over).spec.containers[0]!;

describe("the container's optional fields", () => {
  test("env keeps values and references, and leaves an empty value out as the API server does", () => {
    const env = [
      { name: "MODE", value: "production" },
      { name: "EMPTY", value: "" },
      { name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "url", optional: false } } },
    ];
    expect(container({ env }).env).toEqual([
      { name: "MODE", value: "production" },
      { name: "EMPTY" },
      { name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "url", optional: false } } },
    ]);
  });

  test("envFrom, command and args go in as given; empty lists are left out", () => {
    const c = container({
      envFrom: [{ configMapRef: { name: "settings" }, prefix: "CFG_" }],
      command: ["/app/server"],
      args: ["--verbose"],
    });
    expect([c.envFrom, c.command, c.args]).toEqual([
      [{ configMapRef: { name: "settings" }, prefix: "CFG_" }],
      ["/app/server"],
      ["--verbose"],
    ]);
    const empty = container({ env: [], envFrom: [], command: [], args: [], imagePullSecrets: [] });
    expect(Object.keys(empty)).toEqual(["name", "image", "imagePullPolicy", "ports"]);
  });

  test("resources are sent in the API server's spelling, empty lists left out", () => {
    const c = container({ resources: { requests: { cpu: "0.5", memory: "1.5Gi" }, limits: { cpu: "2000m" } } });
    expect(c.resources).toEqual({ requests: { cpu: "500m", memory: "1536Mi" }, limits: { cpu: "2" } });
    expect(container({ resources: { requests: {}, limits: {} } })).not.toHaveProperty("resources");
  });

  test("healthCheck becomes a readiness and a liveness HTTP probe on spec.port, liveness with 3x the failures", () => {
    const c = container({ healthCheck: { path: "/healthz", periodSeconds: 5, failureThreshold: 4 } });
    expect(c.readinessProbe).toEqual({
      httpGet: { path: "/healthz", port: 8080 },
      periodSeconds: 5,
      failureThreshold: 4,
    });
    expect(c.livenessProbe).toEqual({
      httpGet: { path: "/healthz", port: 8080 },
      periodSeconds: 5,
      failureThreshold: 12,
    });
    expect(c).not.toHaveProperty("startupProbe");
  });

  test("healthCheck with its own port and no threshold: liveness fails after 9 (3x Kubernetes' default 3)", () => {
    const c = container({ healthCheck: { path: "/", port: 9000, initialDelaySeconds: 0 } });
    expect(c.readinessProbe).toEqual({ httpGet: { path: "/", port: 9000 } });
    expect(c.livenessProbe).toEqual({ httpGet: { path: "/", port: 9000 }, failureThreshold: 9 });
  });

  test("full probes go in as given, less what the API server drops (a delay of 0, a gRPC service of '')", () => {
    const c = container({
      readinessProbe: {
        httpGet: { path: "/ready", port: 8080, scheme: "HTTPS" },
        initialDelaySeconds: 0,
        successThreshold: 2,
      },
      livenessProbe: { grpc: { port: 9090, service: "" }, initialDelaySeconds: 15 },
      startupProbe: { exec: { command: ["cat", "/tmp/ok"] }, failureThreshold: 30 },
    });
    expect(c.readinessProbe).toEqual({ httpGet: { path: "/ready", port: 8080, scheme: "HTTPS" }, successThreshold: 2 });
    expect(c.livenessProbe).toEqual({ grpc: { port: 9090 }, initialDelaySeconds: 15 });
    expect(c.startupProbe).toEqual({ exec: { command: ["cat", "/tmp/ok"] }, failureThreshold: 30 });
  });
});

describe("podSecurity restricted", () => {
  test("sets every field the restricted profile checks, on the pod and on the container", () => {
    const t = template({ podSecurity: "restricted" });
    expect(t.spec.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(t.spec.containers[0]!.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
  });

  test("left out, the pod and the container have no securityContext at all", () => {
    const t = template({});
    expect(t.spec).not.toHaveProperty("securityContext");
    expect(t.spec.containers[0]).not.toHaveProperty("securityContext");
  });
});

describe("the pod's and the template's other fields", () => {
  test("imagePullSecrets name Secrets; podLabels join the selector labels, podAnnotations go on the template", () => {
    const t = template({
      imagePullSecrets: ["regcred"],
      podLabels: { team: "web" },
      podAnnotations: { "prometheus.io/scrape": "true" },
    });
    expect(t.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(t.metadata).toEqual({
      labels: { app: "test-app", "managed-by": "webapp-operator", team: "web" },
      annotations: { "prometheus.io/scrape": "true" },
    });
  });

  test("the selector is never changed by podLabels", () => {
    expect(desiredDeployment(app({ podLabels: { team: "web" } })).spec.selector).toEqual({
      matchLabels: { app: "test-app", "managed-by": "webapp-operator" },
    });
  });

  test("the labels podLabels may not set are exactly those the selector uses", () => {
    expect(Object.keys(webAppLabels("x"))).toEqual([...SELECTOR_LABEL_KEYS]);
  });
});

describe("a restart asked for on the WebApp (RESTARTED_AT_ANNOTATION)", () => {
  const restarted = (at: string | undefined, over: Record<string, unknown> = {}) => {
    const w = app(over);
    return desiredDeployment(
      at === undefined
        ? w
        : { ...w, metadata: { ...w.metadata, annotations: { [RESTARTED_AT_ANNOTATION]: at, other: "x" } } },
    );
  };

  test("goes onto the pod template under the same name, beside podAnnotations, and into the digest", () => {
    const at = "2026-12-05T10:00:00.000Z";
    const d = restarted(at, { podAnnotations: { "prometheus.io/scrape": "true", [RESTARTED_AT_ANNOTATION]: "mine" } });
    expect(d.spec.template.metadata.annotations).toEqual({
      "prometheus.io/scrape": "true",
      [RESTARTED_AT_ANNOTATION]: at,
    });
    expect(d.metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    const later = restarted("2026-12-05T11:00:00.000Z");
    expect(later.spec.template.metadata.annotations).toEqual({ [RESTARTED_AT_ANNOTATION]: "2026-12-05T11:00:00.000Z" });
    expect(later.metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION]).not.toBe(
      restarted(at).metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION],
    );
  });

  test("a WebApp without it, or with other annotations only, has the template of before", () => {
    const w = app({});
    const annotated = { ...w, metadata: { ...w.metadata, annotations: { other: "x" } } };
    expect(desiredDeployment(annotated)).toEqual(desiredDeployment(w));
    expect(restarted(undefined)).toEqual(desiredDeployment(w));
    expect(desiredDeployment(w).spec.template.metadata).not.toHaveProperty("annotations");
  });
});

describe("the template-fields annotation", () => {
  const digestOf = (over: Record<string, unknown>) =>
    desiredDeployment(app(over)).metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION];

  test("is absent without the optional fields, present with any of them", () => {
    expect(desiredDeployment(app({})).metadata).not.toHaveProperty("annotations");
    expect(digestOf({ env: [] })).toBeUndefined();
    for (const over of [
      { env: [{ name: "A", value: "1" }] },
      { podSecurity: "restricted" },
      { podLabels: { team: "web" } },
      { podAnnotations: { a: "b" } },
      { imagePullSecrets: ["r"] },
      { healthCheck: { path: "/" } },
    ])
      expect(digestOf(over)).toMatch(/^[0-9a-f]{16}$/);
  });

  test("changes when a variable, a label or a request is dropped, and stays for the same fields", () => {
    const two = {
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
      podLabels: { a: "1", b: "2" },
    };
    const base = digestOf(two);
    expect(digestOf(structuredClone(two))).toBe(base);
    expect(digestOf({ ...two, env: [{ name: "A", value: "1" }] })).not.toBe(base);
    expect(digestOf({ ...two, podLabels: { a: "1" } })).not.toBe(base);
    const resources = (requests: object) => digestOf({ resources: { requests } });
    expect(resources({ cpu: "1", memory: "1Gi" })).not.toBe(resources({ cpu: "1" }));
  });
});

test("an intent shares nothing with the parsed spec, which a cached WebApp's parse hands out frozen", () => {
  const frozen = Object.freeze({
    metadata: Object.freeze({ name: "test-app", namespace: "default", uid: "uid-1" }),
    spec: Object.freeze({
      image: "nginx:1.25",
      port: 8080,
      env: [{ name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "url" } } }],
      envFrom: [{ secretRef: { name: "keys" } }],
      readinessProbe: { httpGet: { port: 8080, httpHeaders: [{ name: "Host", value: "x" }] } },
    }),
  });
  const parsed = parseWebApp(frozen);
  if (!parsed.ok) throw new Error("invalid");
  const c = desiredDeployment(parsed.webapp).spec.template.spec.containers[0]!;
  c.env![0]!.valueFrom!.secretKeyRef!.key = "other";
  c.envFrom![0]!.secretRef!.name = "other";
  c.readinessProbe!.httpGet!.httpHeaders![0]!.value = "y";
  expect(parsed.webapp.spec.env?.[0]?.valueFrom?.secretKeyRef?.key).toBe("url");
});
