/**
 * The shapes of WebApp the bench creates: the seed's (image, replicas 1, port: all the Go peer knows) and a
 * production-shaped one (issue #31 item 7). Pure.
 *
 * Properties:
 * - The seed shape is webappObject() of _kube.ts, unchanged: every figure measured with it before stays comparable.
 * - The production shape sets what a production WebApp sets: healthCheck, env (plain values and one key of a Secret
 *   that prerequisites() creates, so no pod waits for a missing Secret), resources (requests small enough for 2,000
 *   pods on the fake node: 32 CPUs, 256Gi), expose without an ingressClassName (the cluster has no IngressClass),
 *   and 2 replicas, so a PodDisruptionBudget is wanted. With HPA_ON_HALF, every other WebApp (even index) carries
 *   autoscaling {minReplicas 2, maxReplicas 4} and no replicas instead.
 * - What a shape's WebApps own is counted by the operator's own rules (child-kinds.ts CHILD_KINDS and isWanted over
 *   the parsed spec), so a kind added there (the HorizontalPodAutoscaler) is counted without a change here.
 */
import { parseWebAppSpec } from "../../src/api/parse.ts";
import { buildWebAppCrd } from "../../src/api/crd.ts";
import type { KubeObject, ResourceType } from "../../src/kube/types.ts";
import { CHILD_KINDS, type ChildKindName, isWanted } from "../../src/operator/child-kinds.ts";
import { PORT, webappObject } from "./_kube.ts";

export const SECRETS: ResourceType = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };

/** Whether the WebApp API has this spec field (read from the CRD that src/api generates). */
export function specHasField(field: string): boolean {
  const root = buildWebAppCrd().spec.versions[0]?.schema.openAPIV3Schema;
  return root?.properties?.spec?.properties?.[field] !== undefined;
}

/**
 * Half the production-shaped WebApps autoscale (spec.autoscaling, being added to src/api/webapp.ts). On by itself once
 * the API has the field; one line to turn off (false) or on.
 */
export const HPA_ON_HALF = specHasField("autoscaling");

/** The Secret a production-shaped WebApp's env reads a key of. */
export const PRODUCTION_SECRET = "bench-app-secrets";

export interface Shape {
  name: "seed" | "production";
  /** Prefix of the namespaces of its convergence runs. */
  prefix: string;
  /** Whether half of its WebApps autoscale (production only). */
  hpa: boolean;
  webapp(name: string, namespace: string, img: string, index: number): KubeObject;
  /** What its namespace needs before the WebApps (created once, before anything is timed). */
  prerequisites(namespace: string): { rt: ResourceType; object: KubeObject }[];
}

export const SEED_SHAPE: Shape = {
  name: "seed",
  prefix: "conv",
  hpa: false,
  webapp: (name, namespace, img) => webappObject(name, namespace, img),
  prerequisites: () => [],
};

/** The spec of the production-shaped WebApp `name`, the `index`th of its fixture. */
export function productionSpec(name: string, img: string, index: number, hpa = HPA_ON_HALF): Record<string, unknown> {
  return {
    image: img,
    port: PORT,
    ...(hpa && index % 2 === 0 ? { autoscaling: { minReplicas: 2, maxReplicas: 4 } } : { replicas: 2 }),
    healthCheck: { path: "/healthz" },
    env: [
      { name: "APP_NAME", value: name },
      { name: "LOG_LEVEL", value: "info" },
      { name: "DATABASE_PASSWORD", valueFrom: { secretKeyRef: { name: PRODUCTION_SECRET, key: "password" } } },
    ],
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
    expose: { host: `${name}.bench.example.com` },
  };
}

export function productionShape(hpa = HPA_ON_HALF): Shape {
  return {
    name: "production",
    prefix: "prod",
    hpa,
    webapp: (name, namespace, img, index) => ({
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      metadata: { name, namespace },
      spec: productionSpec(name, img, index, hpa),
    }),
    prerequisites: (namespace) => [
      {
        rt: SECRETS,
        object: {
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: PRODUCTION_SECRET, namespace },
          type: "Opaque",
          stringData: { password: "not-a-secret" },
        },
      },
    ],
  };
}

export interface WantedChildren {
  kind: ChildKindName;
  rt: ResourceType;
  count: number;
}

/** How many children of each kind these WebApps want (kinds none wants left out), in CHILD_KINDS order. */
export function wantedChildren(webapps: readonly KubeObject[]): WantedChildren[] {
  const specs = webapps.map((w) => {
    const parsed = parseWebAppSpec(w);
    if (!parsed.ok) throw new Error(`WebApp ${w.metadata.name}: ${parsed.issues.map((i) => i.message).join("; ")}`);
    return parsed.spec;
  });
  return CHILD_KINDS.map((k) => ({ kind: k.kind, rt: k.rt, count: specs.filter((s) => isWanted(k, s)).length })).filter(
    (c) => c.count > 0,
  );
}
