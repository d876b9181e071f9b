/**
 * WebApp specs that exercise every rule of the schema, valid and not. tests/apicheck.ts has the API server's own
 * code (the CRD's schema and CEL rules, as kube-apiserver v1.36 runs them) judge each one into
 * spec-verdicts.json; crd-verdicts.test.ts checks that parseWebAppSpec agrees on every one.
 */

const base = { image: "nginx:1.25", port: 8080 };
const app = (over: Record<string, unknown>) => ({ ...base, ...over });
const secretKey = { secretKeyRef: { name: "db", key: "url" } };
const http = { httpGet: { path: "/healthz", port: 8080 } };
const cpu100m = { requests: { cpu: "100m" } };

export interface SpecCase {
  what: string;
  spec: Record<string, unknown>;
}

export const SPEC_CASES: SpecCase[] = [
  { what: "the seed's example", spec: { image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 } },
  { what: "the seed's test-app", spec: { image: "nginx:1.25", replicas: 3, port: 80 } },
  { what: "port 1, replicas left out", spec: { image: "nginx", port: 1 } },
  { what: "port 65535, replicas 1000", spec: { image: "nginx", port: 65535, replicas: 1000 } },
  { what: "port 0", spec: app({ port: 0 }) },
  { what: "port 65536", spec: app({ port: 65536 }) },
  { what: "port 80.5", spec: app({ port: 80.5 }) },
  { what: "replicas 0", spec: app({ replicas: 0 }) },
  { what: "replicas 1001", spec: app({ replicas: 1001 }) },
  { what: "an empty image", spec: app({ image: "" }) },
  { what: "an image with a space", spec: app({ image: "a b" }) },
  { what: "an image with a tab", spec: app({ image: "a\tb" }) },
  { what: "an image of 1025 characters", spec: app({ image: "x".repeat(1025) }) },
  { what: "no port", spec: { image: "nginx" } },
  { what: "no image", spec: { port: 80 } },
  { what: "imagePullPolicy never (lower case)", spec: app({ imagePullPolicy: "never" }) },
  {
    what: "every new field, valid",
    spec: app({
      env: [
        { name: "MODE", value: "production" },
        { name: "EMPTY", value: "" },
        { name: "DATABASE_URL", valueFrom: secretKey },
        { name: "LOG_LEVEL", valueFrom: { configMapKeyRef: { name: "app-config", key: "log.level", optional: true } } },
      ],
      envFrom: [
        { secretRef: { name: "api-keys" } },
        { configMapRef: { name: "settings", optional: false }, prefix: "CFG_" },
      ],
      command: ["/app/server"],
      args: ["--listen", ":8080"],
      resources: { requests: { cpu: "250m", memory: "256Mi" }, limits: { cpu: "1", memory: "1Gi" } },
      healthCheck: {
        path: "/healthz",
        initialDelaySeconds: 5,
        periodSeconds: 10,
        timeoutSeconds: 2,
        failureThreshold: 3,
      },
      startupProbe: { tcpSocket: { port: 8080 }, failureThreshold: 30, periodSeconds: 2 },
      podSecurity: "restricted",
      imagePullSecrets: ["regcred"],
      podLabels: { team: "payments", "example.com/tier": "web" },
      podAnnotations: { "prometheus.io/scrape": "true", "prometheus.io/port": "8080" },
    }),
  },
  {
    what: "full probes of each handler",
    spec: app({
      readinessProbe: {
        httpGet: { path: "/ready", port: 8080, scheme: "HTTPS", httpHeaders: [{ name: "Host", value: "x" }] },
      },
      livenessProbe: { grpc: { port: 9090, service: "health" }, periodSeconds: 5 },
      startupProbe: { exec: { command: ["cat", "/tmp/started"] } },
    }),
  },
  {
    what: "an env var with both value and valueFrom",
    spec: app({ env: [{ name: "A", value: "x", valueFrom: secretKey }] }),
  },
  { what: "an env var with neither value nor valueFrom", spec: app({ env: [{ name: "A" }] }) },
  {
    what: "valueFrom with both a Secret and a ConfigMap key",
    spec: app({
      env: [{ name: "A", valueFrom: { ...secretKey, configMapKeyRef: { name: "c", key: "k" } } }],
    }),
  },
  { what: "valueFrom with neither", spec: app({ env: [{ name: "A", valueFrom: {} }] }) },
  { what: "an env name starting with a digit", spec: app({ env: [{ name: "1A", value: "x" }] }) },
  {
    what: "an env name used twice",
    spec: app({
      env: [
        { name: "A", value: "x" },
        { name: "A", value: "y" },
      ],
    }),
  },
  {
    what: "a Secret name with capitals",
    spec: app({ env: [{ name: "A", valueFrom: { secretKeyRef: { name: "DB", key: "url" } } }] }),
  },
  {
    what: "a Secret key with a slash",
    spec: app({ env: [{ name: "A", valueFrom: { secretKeyRef: { name: "db", key: "a/b" } } }] }),
  },
  { what: "129 env vars", spec: app({ env: Array.from({ length: 129 }, (_, i) => ({ name: `V${i}`, value: "x" })) }) },
  {
    what: "envFrom with both a Secret and a ConfigMap",
    spec: app({
      envFrom: [{ secretRef: { name: "s" }, configMapRef: { name: "c" } }],
    }),
  },
  { what: "envFrom with neither", spec: app({ envFrom: [{ prefix: "X_" }] }) },
  { what: "envFrom with a bad prefix", spec: app({ envFrom: [{ secretRef: { name: "s" }, prefix: "9" }] }) },
  { what: "command not a list", spec: app({ command: "/app/server" }) },
  {
    what: "quantities in every spelling",
    spec: app({
      resources: { requests: { cpu: "0.5", memory: "1.5Gi" }, limits: { cpu: "1000m", memory: "2G" } },
    }),
  },
  { what: "limits only", spec: app({ resources: { limits: { cpu: "2", memory: "512Mi" } } }) },
  { what: "requests equal to limits", spec: app({ resources: { requests: { cpu: "500m" }, limits: { cpu: "0.5" } } }) },
  {
    what: "a cpu limit below its request",
    spec: app({ resources: { requests: { cpu: "2" }, limits: { cpu: "1500m" } } }),
  },
  {
    what: "a memory limit below its request",
    spec: app({ resources: { requests: { memory: "1Gi" }, limits: { memory: "1000Mi" } } }),
  },
  { what: "a negative cpu", spec: app({ resources: { requests: { cpu: "-1" } } }) },
  { what: "a cpu with an exponent", spec: app({ resources: { requests: { cpu: "1e3" } } }) },
  { what: "a cpu given as a number", spec: app({ resources: { requests: { cpu: 1 } } }) },
  { what: "a memory of 2Ei", spec: app({ resources: { limits: { memory: "2Ei" } } }) },
  { what: "a memory with a unit typo", spec: app({ resources: { limits: { memory: "512MB" } } }) },
  { what: "autoscaling with a cpu request", spec: app({ autoscaling: { maxReplicas: 10 }, resources: cpu100m }) },
  {
    what: "autoscaling with every field",
    spec: app({
      autoscaling: {
        minReplicas: 2,
        maxReplicas: 1000,
        targetCPUUtilizationPercentage: 1000,
        targetMemoryUtilizationPercentage: 1,
      },
      resources: { requests: { cpu: "100m", memory: "64Mi" } },
    }),
  },
  {
    what: "autoscaling min equal to max",
    spec: app({ autoscaling: { minReplicas: 3, maxReplicas: 3 }, resources: cpu100m }),
  },
  {
    what: "autoscaling beside replicas",
    spec: app({ replicas: 2, autoscaling: { maxReplicas: 5 }, resources: cpu100m }),
  },
  { what: "autoscaling without a cpu request", spec: app({ autoscaling: { maxReplicas: 5 } }) },
  {
    what: "autoscaling without a cpu request, a memory request only",
    spec: app({ autoscaling: { maxReplicas: 5 }, resources: { requests: { memory: "64Mi" } } }),
  },
  {
    what: "autoscaling on memory without a memory request",
    spec: app({ autoscaling: { maxReplicas: 5, targetMemoryUtilizationPercentage: 70 }, resources: cpu100m }),
  },
  {
    what: "autoscaling min above max",
    spec: app({ autoscaling: { minReplicas: 6, maxReplicas: 5 }, resources: cpu100m }),
  },
  { what: "autoscaling without max", spec: app({ autoscaling: { minReplicas: 2 }, resources: cpu100m }) },
  {
    what: "autoscaling bounds out of range",
    spec: app({ autoscaling: { minReplicas: 0, maxReplicas: 1001 }, resources: cpu100m }),
  },
  {
    what: "autoscaling targets out of range",
    spec: app({
      autoscaling: { maxReplicas: 5, targetCPUUtilizationPercentage: 0, targetMemoryUtilizationPercentage: 1001 },
      resources: { requests: { cpu: "100m", memory: "64Mi" } },
    }),
  },
  { what: "disruptionBudget maxUnavailable 2", spec: app({ replicas: 5, disruptionBudget: { maxUnavailable: 2 } }) },
  { what: "disruptionBudget maxUnavailable 0", spec: app({ replicas: 5, disruptionBudget: { maxUnavailable: 0 } }) },
  { what: "disruptionBudget minAvailable 3", spec: app({ replicas: 5, disruptionBudget: { minAvailable: 3 } }) },
  { what: "disruptionBudget enabled false", spec: app({ replicas: 5, disruptionBudget: { enabled: false } }) },
  { what: "disruptionBudget empty", spec: app({ disruptionBudget: {} }) },
  {
    what: "disruptionBudget with both bounds",
    spec: app({ disruptionBudget: { maxUnavailable: 1, minAvailable: 1 } }),
  },
  {
    what: "disruptionBudget disabled with a bound",
    spec: app({ disruptionBudget: { enabled: false, maxUnavailable: 1 } }),
  },
  {
    what: "disruptionBudget enabled true with a bound",
    spec: app({ disruptionBudget: { enabled: true, minAvailable: 2 } }),
  },
  { what: "disruptionBudget minAvailable 0", spec: app({ disruptionBudget: { minAvailable: 0 } }) },
  { what: "disruptionBudget maxUnavailable -1", spec: app({ disruptionBudget: { maxUnavailable: -1 } }) },
  { what: "disruptionBudget maxUnavailable 1.5", spec: app({ disruptionBudget: { maxUnavailable: 1.5 } }) },
  {
    what: "disruptionBudget maxUnavailable as a percentage",
    spec: app({ disruptionBudget: { maxUnavailable: "25%" } }),
  },
  { what: "disruptionBudget enabled as a string", spec: app({ disruptionBudget: { enabled: "false" } }) },
  { what: "disruptionBudget with an unknown field", spec: app({ disruptionBudget: { maxSurge: 1 } }) },
  { what: "expose with a host", spec: app({ expose: { host: "shop.example.com" } }) },
  {
    what: "expose with every field",
    spec: app({
      expose: { host: "shop.example.com", path: "/api", ingressClassName: "nginx", tlsSecretName: "shop-tls" },
    }),
  },
  { what: "expose on a wildcard host", spec: app({ expose: { host: "*.example.com" } }) },
  { what: "expose without a host", spec: app({ expose: { path: "/" } }) },
  { what: "expose on an upper-case host", spec: app({ expose: { host: "Shop.example.com" } }) },
  { what: "expose on a host with a port", spec: app({ expose: { host: "shop.example.com:8080" } }) },
  { what: "expose on a wildcard in the middle", spec: app({ expose: { host: "shop.*.example.com" } }) },
  { what: "expose on a path without /", spec: app({ expose: { host: "a.example.com", path: "api" } }) },
  {
    what: "expose with an invalid class name",
    spec: app({ expose: { host: "a.example.com", ingressClassName: "Nginx_Class" } }),
  },
  {
    what: "expose with an invalid TLS Secret name",
    spec: app({ expose: { host: "a.example.com", tlsSecretName: "tls/x" } }),
  },
  { what: "expose on a host of 254 characters", spec: app({ expose: { host: `${"a".repeat(250)}.com` } }) },
  { what: "healthCheck with only a path", spec: app({ healthCheck: { path: "/" } }) },
  { what: "healthCheck without a path", spec: app({ healthCheck: { port: 8080 } }) },
  { what: "healthCheck with a path without /", spec: app({ healthCheck: { path: "healthz" } }) },
  { what: "healthCheck on port 70000", spec: app({ healthCheck: { path: "/h", port: 70000 } }) },
  { what: "healthCheck with a period of 0", spec: app({ healthCheck: { path: "/h", periodSeconds: 0 } }) },
  {
    what: "healthCheck with a failureThreshold of 101",
    spec: app({ healthCheck: { path: "/h", failureThreshold: 101 } }),
  },
  { what: "healthCheck and readinessProbe", spec: app({ healthCheck: { path: "/h" }, readinessProbe: http }) },
  { what: "healthCheck and livenessProbe", spec: app({ healthCheck: { path: "/h" }, livenessProbe: http }) },
  { what: "healthCheck and startupProbe", spec: app({ healthCheck: { path: "/h" }, startupProbe: http }) },
  { what: "a probe with two handlers", spec: app({ readinessProbe: { ...http, tcpSocket: { port: 8080 } } }) },
  { what: "a probe with no handler", spec: app({ readinessProbe: { periodSeconds: 5 } }) },
  { what: "a liveness probe needing 2 successes", spec: app({ livenessProbe: { ...http, successThreshold: 2 } }) },
  { what: "a readiness probe needing 2 successes", spec: app({ readinessProbe: { ...http, successThreshold: 2 } }) },
  { what: "a probe timeout of 0", spec: app({ readinessProbe: { ...http, timeoutSeconds: 0 } }) },
  { what: "an initial delay of 0", spec: app({ readinessProbe: { ...http, initialDelaySeconds: 0 } }) },
  { what: "a probe scheme ftp", spec: app({ readinessProbe: { httpGet: { path: "/", port: 80, scheme: "FTP" } } }) },
  { what: "an exec probe without a command", spec: app({ livenessProbe: { exec: { command: [] } } }) },
  { what: "a tcp probe on port 0", spec: app({ livenessProbe: { tcpSocket: { port: 0 } } }) },
  { what: "podSecurity baseline", spec: app({ podSecurity: "baseline" }) },
  { what: "an imagePullSecret with a bad name", spec: app({ imagePullSecrets: ["Reg_Cred"] }) },
  { what: "an imagePullSecret named twice", spec: app({ imagePullSecrets: ["a", "a"] }) },
  { what: "podLabels setting app", spec: app({ podLabels: { app: "other" } }) },
  { what: "podLabels setting managed-by", spec: app({ podLabels: { "managed-by": "me" } }) },
  { what: "a pod label value too long", spec: app({ podLabels: { team: "x".repeat(64) } }) },
  { what: "a pod label value with a space", spec: app({ podLabels: { team: "a b" } }) },
  {
    what: "65 pod labels",
    spec: app({ podLabels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, "x"])) }),
  },
  { what: "a pod annotation that is not a string", spec: app({ podAnnotations: { "prometheus.io/port": 8080 } }) },
  {
    what: "rollout with autoRollback, a threshold and a retry token",
    spec: app({ rollout: { autoRollback: true, failureThreshold: "90s", retry: "2026-12-05" } }),
  },
  { what: "rollout failureThreshold in minutes", spec: app({ rollout: { failureThreshold: "5m" } }) },
  { what: "rollout failureThreshold without a unit", spec: app({ rollout: { failureThreshold: "60" } }) },
  { what: "rollout failureThreshold in hours", spec: app({ rollout: { failureThreshold: "1h" } }) },
  { what: "rollout failureThreshold of 100 minutes", spec: app({ rollout: { failureThreshold: "100m" } }) },
  { what: "rollout retry too long", spec: app({ rollout: { retry: "x".repeat(64) } }) },
  { what: "rollout autoRollback not a boolean", spec: app({ rollout: { autoRollback: "yes" } }) },
];

/**
 * Rules the CRD does not hold (valibotOnly in pod-template.ts): the API server admits these WebApps, devctl
 * refuses them, and the API server refuses the Deployment the operator would write.
 */
export const VALIBOT_ONLY_CASES: SpecCase[] = [
  { what: "a pod label key with a space", spec: app({ podLabels: { "my team": "x" } }) },
  { what: "a pod annotation key with two slashes", spec: app({ podAnnotations: { "a/b/c": "x" } }) },
  { what: "pod annotations over 256 KiB", spec: app({ podAnnotations: { big: "x".repeat(256 * 1024) } }) },
];
