import { describe, expect, test } from "bun:test";
import type { WebAppObject } from "../../api/webapp.ts";
import { describeWebApp } from "./_describe.ts";
import { probeLine } from "./_describe-template.ts";

const webapp = (spec: Record<string, unknown>): WebAppObject => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  metadata: { name: "shop", namespace: "default" },
  spec,
});
/** The lines between "Spec:" and "Status:". */
const specBlock = (spec: Record<string, unknown>) => {
  const lines = describeWebApp(webapp(spec), [], 0).split("\n");
  return lines.slice(lines.indexOf("Spec:") + 1, lines.indexOf("Status:"));
};

describe("describeWebApp's Spec section", () => {
  test("a WebApp without the pod-template fields shows image, replicas and port only, as before", () => {
    expect(specBlock({ image: "nginx:1.25", replicas: 3, port: 80 })).toEqual([
      "  Image:     nginx:1.25",
      "  Replicas:  3",
      "  Port:      80",
    ]);
  });

  test("shows each pod-template field set, env as kubectl shows a container's, healthCheck as its two probes", () => {
    const block = specBlock({
      image: "shop:v3",
      replicas: 2,
      port: 8080,
      env: [
        { name: "MODE", value: "production" },
        { name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "url" } } },
      ],
      envFrom: [{ configMapRef: { name: "settings" }, prefix: "CFG_" }],
      resources: { requests: { cpu: "250m" }, limits: { memory: "1Gi" } },
      healthCheck: { path: "/healthz", failureThreshold: 2 },
      podSecurity: "restricted",
      imagePullSecrets: ["regcred"],
      podLabels: { team: "web" },
      podAnnotations: { "prometheus.io/scrape": "true" },
    });
    expect(block).toEqual([
      "  Image:               shop:v3",
      "  Replicas:            2",
      "  Port:                8080",
      "  Requests:            cpu=250m",
      "  Limits:              memory=1Gi",
      "  Readiness:           http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=2  (healthCheck)",
      "  Liveness:            http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=6  (healthCheck)",
      "  Pod Security:        restricted",
      "  Image Pull Secrets:  regcred",
      "  Pod Labels:          team=web",
      "  Pod Annotations:     prometheus.io/scrape=true",
      "  Environment:",
      "    MODE:  production",
      "    DB:    <set to the key 'url' in secret 'db'>  Optional: false",
      "  Environment Variables from:",
      "    settings  ConfigMap  Optional: false  Prefix: CFG_",
    ]);
  });

  test("the disruption budget and the address, as the objects they become", () => {
    const rows = (spec: Record<string, unknown>) =>
      specBlock({ image: "x", replicas: 3, port: 80, ...spec }).filter((l) => /Disruption|Expose/.test(l));
    expect(rows({ disruptionBudget: {} })).toEqual(["  Disruption Budget:  max unavailable 1"]);
    expect(rows({ disruptionBudget: { minAvailable: 2 } })).toEqual(["  Disruption Budget:  min available 2"]);
    expect(rows({ disruptionBudget: { enabled: false } })).toEqual(["  Disruption Budget:  none (enabled: false)"]);
    expect(rows({ expose: { host: "shop.example.com" } })).toEqual(["  Expose:    http://shop.example.com/"]);
    expect(
      rows({ expose: { host: "shop.example.com", path: "/api", ingressClassName: "nginx", tlsSecretName: "tls" } }),
    ).toEqual(["  Expose:    https://shop.example.com/api (class nginx, TLS secret tls)"]);
    expect(rows({ expose: "shop" })).toEqual(["  Expose:    <invalid>"]);
  });

  test("a field of an unexpected shape reads <invalid>, it does not throw", () => {
    expect(
      specBlock({ image: "x", port: 80, env: "A=1", readinessProbe: { periodSeconds: 5 }, podLabels: [] }),
    ).toEqual([
      "  Image:       x",
      "  Replicas:    <none>",
      "  Port:        80",
      "  Readiness:   <invalid> delay=0s timeout=1s period=5s #success=1 #failure=3",
      "  Pod Labels:  <invalid>",
      "  Environment:",
      "    <invalid>:",
    ]);
  });
});

describe("probeLine", () => {
  test("writes every handler as kubectl describe does", () => {
    expect(probeLine({ tcpSocket: { port: 80 }, initialDelaySeconds: 5 })).toBe(
      "tcp-socket :80 delay=5s timeout=1s period=10s #success=1 #failure=3",
    );
    expect(probeLine({ httpGet: { port: 8443, path: "/ready", scheme: "HTTPS" } })).toStartWith(
      "http-get https://:8443/ready ",
    );
    expect(probeLine({ grpc: { port: 9090, service: "health" } })).toStartWith("grpc <pod>:9090 health ");
    expect(probeLine({ exec: { command: ["cat", "/tmp/ok"] } })).toStartWith("exec [cat /tmp/ok] ");
  });
});

describe("describeWebApp's rollout lines", () => {
  test("spec.rollout says when a failed rollout is rolled back; the status names the revision and the last Ready", () => {
    expect(specBlock({ image: "a:1", port: 80, rollout: { autoRollback: true } }).at(-1)).toBe(
      "  Rollout:   automatic rollback after 60s of failure",
    );
    expect(specBlock({ image: "a:1", port: 80, rollout: { autoRollback: false } }).at(-1)).toBe(
      "  Rollout:   no automatic rollback",
    );
    expect(specBlock({ image: "a:1", port: 80, rollout: { failureThreshold: "2m" } }).at(-1)).toBe(
      "  Rollout:   automatic rollback as the operator's default (--auto-rollback), after 2m of failure",
    );
    const w: WebAppObject = {
      ...webapp({ image: "a:2", port: 80 }),
      status: {
        lastReadyRevision: 1,
        rollouts: [
          {
            revision: 1,
            image: "a:1",
            digest: "d1",
            startedAt: "2026-12-05T10:00:00Z",
            readyAt: "2026-12-05T10:00:05Z",
          },
          {
            revision: 2,
            image: "a:2",
            digest: "d2",
            startedAt: "2026-12-05T10:01:00Z",
            failedAt: "2026-12-05T10:01:30Z",
            reason: "CrashLoopBackOff",
            rolledBackAt: "2026-12-05T10:02:30Z",
          },
        ],
      },
    };
    expect(describeWebApp(w, [], 0).split("\n")).toContain(
      "  Revision:             2 (RolledBack (CrashLoopBackOff)), last Ready 1",
    );
  });
});
