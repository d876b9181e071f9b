/**
 * The operator's Deployment, as a pure builder.
 *
 * Properties:
 * - Runs the image's ENTRYPOINT (`devctl operator run`, see the Dockerfile) with OPERATOR_ARGS only:
 *   leader election on, the Lease in the install namespace, JSON logs, /metrics over HTTPS on :8443 (port
 *   "https"; a bearer token allowed to get /metrics, see rbac.ts METRICS_READER_ROLE) and plain /healthz + /readyz
 *   on :8081. WATCH_NAMESPACE is not set: the operator watches every namespace.
 * - Hardened: non-root (65532, distroless "nonroot"), read-only root filesystem (a small emptyDir
 *   at /tmp is the only writable path), no privilege escalation, every capability dropped, seccomp
 *   RuntimeDefault.
 * - Probes: liveness GET /healthz, readiness GET /readyz (caches synced, no stale watch) on port 8081.
 * - terminationGracePeriodSeconds (40) exceeds the operator's shutdown timeout (30 s), so in-flight
 *   reconciles finish and the Lease is released before SIGKILL.
 * - With more than one replica, a preferred pod anti-affinity spreads replicas across nodes.
 * - nodeSelector, tolerations, imagePullPolicy and imagePullSecrets appear only when given.
 * - Resources: a memory request and limit sized from the measured footprint (resources.ts), no CPU limit; the
 *   runtime is told the limit (RUNTIME_MEMORY_ENV, from the downward API), so it follows --memory-limit, and sizes its
 *   heap's growth against it as JavaScriptCore does by default (RUNTIME_HEAP_ENV).
 */
import type { KubeObject } from "../kube/types.ts";
import { containerResources, type ContainerResources } from "./resources.ts";

export const OPERATOR_CONTAINER_NAME = "operator";
/** HTTPS, bearer token required (`operator run --metrics-secure`, the default). */
export const METRICS_PORT = 8443;
/** The container port's name; the metrics Service, ServiceMonitor (monitoring.ts) and NetworkPolicy (hardening.ts)
 * refer to it by name. */
export const METRICS_PORT_NAME = "https";
export const HEALTH_PORT = 8081;
/** `operator run`'s default --shutdown-timeout is 30 s; Kubernetes must wait longer than that. */
export const TERMINATION_GRACE_SECONDS = 40;
/** distroless "nonroot" user and group. */
export const RUN_AS_USER = 65532;
/**
 * The container's memory limit in bytes, for JavaScriptCore (its `forceRAMSize` option): it sizes the heap's growth
 * by the RAM it sees, a node's tens of GiB unless told, and collects harder as the heap nears it, as GOMEMLIMIT
 * makes a Go operator do. Measured 2026-12-06 (BENCHMARKS.md, "Start-up's peak"): a fresh start over 10,000
 * production-shaped WebApps peaked at 335-415 MiB in six runs without it (two above the default limit, 384Mi),
 * 283-315 MiB in four with it, for the same CPU.
 */
export const RUNTIME_MEMORY_ENV = "BUN_JSC_forceRAMSize";
/**
 * JavaScriptCore's own heap-growth fractions, which Bun raises to 0.8 and 0.9: the heap doubles at each collection
 * until it passes a quarter of the limit above (not 80%), grows by half up to half of it, by a quarter beyond. Measured
 * 2026-12-06 (BENCHMARKS.md, "The heap's growth under the limit"), fresh starts over 10,000 WebApps: production-shaped
 * peak 226-237 MiB against 280-314 and 157-173 MiB 5 s after the first pass against 221-245; seed-shaped 99-106
 * against 129-140 MiB; for 50-70% more CPU in that start (seed 3.0 -> 4.5 s, production 6.2 -> 10.5 s).
 */
export const RUNTIME_HEAP_ENV: Readonly<Record<string, string>> = {
  BUN_JSC_smallHeapRAMFraction: "0.25",
  BUN_JSC_mediumHeapRAMFraction: "0.5",
};

export interface DeploymentParams {
  name: string;
  namespace: string;
  image: string;
  replicas: number;
  serviceAccount: string;
  leaseName: string;
  /** On the Deployment (including app.kubernetes.io/version). */
  labels: Record<string, string>;
  /** On the Deployment only (never the pod template, so changing one rolls no pod); left out when unset. */
  annotations?: Record<string, string>;
  /** The pod selector, also the pod template's labels. Immutable once created. */
  selector: Record<string, string>;
  /** Scheduling and pulling, each left out of the object when unset (the API server's defaults apply). */
  nodeSelector?: Record<string, string>;
  tolerations?: Toleration[];
  imagePullPolicy?: "Always" | "IfNotPresent" | "Never";
  imagePullSecrets?: string[];
  /** Default: sized from the measured footprint (resources.ts). */
  resources?: ContainerResources;
  /** `devctl operator run --auto-rollback`: roll back failed revisions of WebApps that do not say. */
  autoRollback?: boolean;
}

/** core/v1 Toleration, as install sets it. */
export interface Toleration {
  key: string;
  operator: "Equal" | "Exists";
  value?: string;
  effect?: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
}

/** The container's arguments after the image's ENTRYPOINT (`devctl operator run`). */
export function operatorArgs(p: Pick<DeploymentParams, "namespace" | "leaseName" | "autoRollback">): string[] {
  return [
    "--leader-elect",
    `--lease-name=${p.leaseName}`,
    `--lease-namespace=${p.namespace}`,
    "--log-format=json",
    "--metrics-secure",
    `--metrics-bind-address=:${METRICS_PORT}`,
    `--health-probe-bind-address=:${HEALTH_PORT}`,
    ...(p.autoRollback ? ["--auto-rollback"] : []),
  ];
}

export function buildOperatorDeployment(p: DeploymentParams): KubeObject {
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: "health", scheme: "HTTP" },
    periodSeconds,
    timeoutSeconds: 2,
    failureThreshold,
  });
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: p.name,
      namespace: p.namespace,
      labels: { ...p.labels },
      ...(p.annotations ? { annotations: { ...p.annotations } } : {}),
    },
    spec: {
      replicas: p.replicas,
      selector: { matchLabels: { ...p.selector } },
      template: {
        metadata: { labels: { ...p.selector } },
        spec: {
          serviceAccountName: p.serviceAccount,
          terminationGracePeriodSeconds: TERMINATION_GRACE_SECONDS,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUN_AS_USER,
            runAsGroup: RUN_AS_USER,
            seccompProfile: { type: "RuntimeDefault" },
          },
          ...(p.replicas > 1 ? { affinity: spreadAcrossNodes(p.selector) } : {}),
          ...(p.nodeSelector ? { nodeSelector: { ...p.nodeSelector } } : {}),
          ...(p.tolerations?.length ? { tolerations: p.tolerations.map((t) => ({ ...t })) } : {}),
          ...(p.imagePullSecrets?.length ? { imagePullSecrets: p.imagePullSecrets.map((name) => ({ name })) } : {}),
          containers: [
            {
              name: OPERATOR_CONTAINER_NAME,
              image: p.image,
              ...(p.imagePullPolicy ? { imagePullPolicy: p.imagePullPolicy } : {}),
              args: operatorArgs(p),
              env: [
                // The leader-election identity starts with the pod's name (operator/identity.ts).
                { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
                {
                  name: RUNTIME_MEMORY_ENV,
                  valueFrom: {
                    resourceFieldRef: {
                      containerName: OPERATOR_CONTAINER_NAME,
                      resource: "limits.memory",
                      divisor: "1",
                    },
                  },
                },
                ...Object.entries(RUNTIME_HEAP_ENV).map(([name, value]) => ({ name, value })),
              ],
              ports: [
                { name: METRICS_PORT_NAME, containerPort: METRICS_PORT, protocol: "TCP" },
                { name: "health", containerPort: HEALTH_PORT, protocol: "TCP" },
              ],
              livenessProbe: probe("/healthz", 10, 3),
              readinessProbe: probe("/readyz", 5, 3),
              resources: structuredClone(p.resources ?? containerResources()),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                runAsNonRoot: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [{ name: "tmp", mountPath: "/tmp" }],
            },
          ],
          // The only writable path, for anything the runtime may put in $TMPDIR.
          volumes: [{ name: "tmp", emptyDir: { sizeLimit: "16Mi" } }],
        },
      },
    },
  };
}

function spreadAcrossNodes(selector: Record<string, string>) {
  return {
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { ...selector } } },
        },
      ],
    },
  };
}
