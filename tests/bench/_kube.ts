/**
 * Cluster-side helpers shared by the scenarios: bounded parallelism, throwaway namespaces, the
 * WebApp CRD, the objects a WebApp stands for (built by the operator's own pure builders, so the
 * floor writes exactly what the operator writes), and readiness predicates.
 *
 * Properties:
 * - pool() never has more than `limit` calls in flight and rejects with the first failure.
 * - The floor's objects are desiredDeployment()/desiredService() of the same spec without an owner
 *   reference, applied server-side with the operator's field manager.
 */
import { buildWebAppCrd } from "../../src/api/crd.ts";
import {
  CRD_RESOURCE,
  DEPLOYMENT_RESOURCE,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
  type WebApp,
} from "../../src/api/webapp.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../src/kube/types.ts";
import { desiredDeployment, desiredService } from "../../src/operator/desired.ts";
import { FIELD_MANAGER } from "../../src/operator/reconciler.ts";

export { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE };
export const NAMESPACES: ResourceType = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};
export const RESOURCE_QUOTAS: ResourceType = {
  group: "",
  version: "v1",
  plural: "resourcequotas",
  kind: "ResourceQuota",
  namespaced: true,
};
/** The ResourceQuota name of a namespace whose ReplicaSets are refused (noReplicaSets). */
export const NO_REPLICA_SETS = "no-replicasets";
const REPLICA_SET_COUNT = "count/replicasets.apps";

/**
 * A ResourceQuota of 0 ReplicaSets in `namespace`, resolved once it is enforced: the API server's quota admission
 * enforces the quota's status (status.hard), which the controller-manager's quota controller writes, behind a
 * backlog of its own after many writes; until then every ReplicaSet is admitted. Rejects past `limitMs`.
 */
export async function noReplicaSets(kube: KubeClient, namespace: string, limitMs: number): Promise<void> {
  await kube.create(RESOURCE_QUOTAS, {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: NO_REPLICA_SETS, namespace },
    spec: { hard: { [REPLICA_SET_COUNT]: "0" } },
  });
  await until(limitMs, `the quota controller to take up ${namespace}'s quota`, async () => {
    const q = await kube.get<KubeObject & { status?: { hard?: Record<string, string> } }>(
      RESOURCE_QUOTAS,
      NO_REPLICA_SETS,
      namespace,
    );
    return q.status?.hard?.[REPLICA_SET_COUNT] !== undefined;
  });
}

/** Polls `done` every 200 ms until it is true; rejects with "waited N s for <what>" once `limitMs` has passed. */
export async function until(limitMs: number, what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + limitMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`waited ${limitMs / 1000} s for ${what}`);
    await Bun.sleep(200);
  }
}

export const PORT = 8080;
export const image = (tag: string): string => `registry.example/bench:${tag}`;
export const appName = (i: number): string => `app-${String(i).padStart(5, "0")}`;
export const appNames = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => appName(from + i));

/** Runs `fn` over `items` with at most `limit` in flight. */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i] as T, i);
      }
    }),
  );
}

export function webappObject(name: string, namespace: string, img: string): KubeObject {
  return {
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name, namespace },
    spec: { image: img, replicas: 1, port: PORT },
  };
}

/** What the operator would create for a WebApp of this name and image (no owner: there is no WebApp). */
export function floorObjects(
  name: string,
  namespace: string,
  img: string,
): { deployment: KubeObject; service: KubeObject } {
  const wa: WebApp = { metadata: { name, namespace }, spec: { image: img, replicas: 1, port: PORT } };
  return { deployment: desiredDeployment(wa), service: desiredService(wa) };
}

export const applyFloor = (kube: KubeClient, rt: ResourceType, obj: KubeObject) =>
  kube.apply(rt, obj, { fieldManager: FIELD_MANAGER, force: true });

/** The floor's Deployment and Service of every name, applied `concurrency` names at a time. */
export function applyFloorObjects(
  kube: KubeClient,
  names: readonly string[],
  namespace: string,
  img: string,
  concurrency: number,
): Promise<void> {
  return pool(names, concurrency, async (name) => {
    const o = floorObjects(name, namespace, img);
    await applyFloor(kube, DEPLOYMENT_RESOURCE, o.deployment);
    await applyFloor(kube, SERVICE_RESOURCE, o.service);
  });
}

/** How long a wait for N objects to converge (WebApps, floor Deployments, rollouts) may take. */
export const convergenceTimeout = (n: number): number => 120_000 + n * 300;

type WithConditions = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
const conditionTrue = (o: WithConditions | undefined, type: string) =>
  o?.status?.conditions?.some((c) => c.type === type && c.status === "True") ?? false;

export const webappAvailable = (o: KubeObject | undefined): boolean => conditionTrue(o as WithConditions, "Available");
export const deploymentAvailable = (o: KubeObject | undefined): boolean =>
  conditionTrue(o as WithConditions, "Available");

type DeploymentLike = KubeObject & {
  metadata: KubeObject["metadata"] & { generation?: number };
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { observedGeneration?: number; updatedReplicas?: number; availableReplicas?: number; replicas?: number };
};
export const deploymentImage = (o: KubeObject | undefined): string | undefined =>
  (o as DeploymentLike | undefined)?.spec?.template?.spec?.containers?.[0]?.image;
/** The rollout of the current template finished: every replica updated and available, none left over. */
export function rolledOut(o: KubeObject | undefined): boolean {
  const d = o as DeploymentLike | undefined;
  if (!d?.status || d.status.observedGeneration !== d.metadata.generation) return false;
  const want = d.spec?.replicas ?? 1;
  return d.status.updatedReplicas === want && d.status.availableReplicas === want && (d.status.replicas ?? 0) === want;
}

export async function createNamespace(kube: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  await kube.create(NAMESPACES, {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "devctl.dev/bench": "true" } },
  });
  return name;
}

/**
 * Sends one of each request the measurements send (server-side apply of a Deployment and a Service,
 * WebApp create and status patch), so that a freshly started API server has built what it builds on
 * first use (e.g. its server-side-apply type converters) before anything is timed.
 */
export async function warmUp(kube: KubeClient): Promise<void> {
  const ns = await createNamespace(kube, "warmup");
  const o = floorObjects("warmup", ns, image("v0"));
  await applyFloor(kube, DEPLOYMENT_RESOURCE, o.deployment);
  await applyFloor(kube, SERVICE_RESOURCE, o.service);
  await kube.create(WEBAPP_RESOURCE, webappObject("warmup", ns, image("v0")));
  await kube.patch(WEBAPP_RESOURCE, "warmup", ns, { status: { observedGeneration: 1 } }, "merge", {
    subresource: "status",
  });
}

/** Applies the CRD built from src/api (what `devctl operator install` applies) and waits until it is Established. */
export async function ensureCrd(kube: KubeClient): Promise<void> {
  const crd = buildWebAppCrd();
  await kube.apply(CRD_RESOURCE, crd, { fieldManager: "devctl-bench", force: true });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const live = await kube.get<WithConditions>(CRD_RESOURCE, crd.metadata.name as string);
    if (conditionTrue(live, "Established")) {
      // Established can precede the first successful LIST by a moment.
      if (
        await kube.list(WEBAPP_RESOURCE, { limit: 1 }).then(
          () => true,
          () => false,
        )
      )
        return;
    }
    await Bun.sleep(100);
  }
  throw new Error("the WebApp CRD did not become Established within 30 s");
}
