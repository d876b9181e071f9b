/**
 * WebApps whose Deployments carry every optional pod-template field, in the spellings the API server rewrites.
 * tests/apicheck.ts records each one's intent and the Deployment the API server stores for it into
 * server-stored.json; desired-server.test.ts checks the stored one reads as no drift.
 */
export interface TemplateCase {
  what: string;
  name: string;
  spec: Record<string, unknown>;
}

export const TEMPLATE_CASES: TemplateCase[] = [
  {
    what: "the seed's example, no new field",
    name: "my-service",
    spec: { image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 },
  },
  {
    what: "a production WebApp: healthCheck, env, envFrom, resources, restricted, pull secrets, pod labels and annotations",
    name: "shop",
    spec: {
      image: "registry.example.com/shop:v3.2.1",
      replicas: 3,
      port: 8080,
      env: [
        { name: "MODE", value: "production" },
        { name: "EMPTY", value: "" },
        { name: "DATABASE_URL", valueFrom: { secretKeyRef: { name: "shop-db", key: "url" } } },
        {
          name: "FEATURE_FLAGS",
          valueFrom: { configMapKeyRef: { name: "shop-config", key: "flags", optional: true } },
        },
        { name: "OPTIONAL_OFF", valueFrom: { secretKeyRef: { name: "shop-db", key: "replica", optional: false } } },
      ],
      envFrom: [
        { secretRef: { name: "shop-keys" } },
        { configMapRef: { name: "shop-settings", optional: false }, prefix: "CFG_" },
      ],
      command: ["/app/shop"],
      args: ["serve", "--port=8080"],
      resources: { requests: { cpu: "0.5", memory: "1.5Gi" }, limits: { cpu: "2000m", memory: "3072Mi" } },
      healthCheck: { path: "/healthz", initialDelaySeconds: 0, periodSeconds: 10, failureThreshold: 3 },
      startupProbe: { httpGet: { path: "/healthz", port: 8080 }, failureThreshold: 30, periodSeconds: 2 },
      podSecurity: "restricted",
      imagePullSecrets: ["regcred", "mirror-cred"],
      podLabels: { team: "payments", "example.com/tier": "web", empty: "" },
      podAnnotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "8080" },
    },
  },
  {
    what: "full probes of every handler with the defaults left out, and quantities the API server rewrites",
    name: "probes",
    spec: {
      image: "nginx:1.25",
      port: 80,
      readinessProbe: {
        httpGet: { port: 80, httpHeaders: [{ name: "Host", value: "probes.local" }] },
        initialDelaySeconds: 0,
      },
      livenessProbe: { grpc: { port: 9090, service: "" }, timeoutSeconds: 5 },
      startupProbe: { exec: { command: ["cat", "/tmp/started"] } },
      resources: { requests: { cpu: "1.500", memory: "0.5Gi" }, limits: { cpu: "2", memory: "1000000000" } },
      command: [],
      env: [],
    },
  },
  {
    what: "healthCheck on another port with a tcp startup probe, and limits only",
    name: "sidecarless",
    spec: {
      image: "nginx:1.25",
      port: 80,
      healthCheck: { path: "/ready", port: 8081, timeoutSeconds: 2, failureThreshold: 5 },
      startupProbe: { tcpSocket: { port: 80 } },
      resources: { limits: { cpu: "0.25", memory: "1.1Mi" } },
      podAnnotations: {},
      podLabels: {},
    },
  },
];
