/**
 * Bring-up checks that prove the control plane works end to end, through the API only.
 *
 * Contract:
 * - ensureFakeNode: one Node that KWOK manages (annotation kwok.x-k8s.io/node=fake), no taints,
 *   room for thousands of pods; resolves once the node is Ready.
 * - waitForDefaultServiceAccount: `default/default` exists (pods are admitted only after that).
 * - runSmokeDeployment: Deployment default/cluster-smoke (1 replica, pause image) reaches
 *   readyReplicas 1, then is deleted and its pods are gone. On timeout the error names the component
 *   that did not do its part (controller-manager: no pod; scheduler: pod not bound; kwok: not ready).
 */
import { FAKE_NODE_ANNOTATION, POD_CIDR } from "./components.ts";
import { type ApiEndpoint, apiRequest } from "./kubeapi.ts";
import { waitUntil } from "./processes.ts";
import type { ComponentName } from "./state.ts";

export const FAKE_NODE = "kwok-node-0";
/** Room for thousands of request-less pods; the CPU/memory figures only matter to pods with requests. */
export const FAKE_NODE_RESOURCES = { cpu: "32", memory: "256Gi", pods: "10000" } as const;
export const SMOKE = { namespace: "default", name: "cluster-smoke", image: "registry.k8s.io/pause:3.10" } as const;

/** A check that failed, with the component held responsible. */
export class ComponentFailure extends Error {
  constructor(
    readonly component: ComponentName,
    message: string,
  ) {
    super(message);
  }
}

export async function ensureFakeNode(ep: ApiEndpoint, timeoutMs = 60_000): Promise<void> {
  const node = {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: FAKE_NODE,
      annotations: { [FAKE_NODE_ANNOTATION]: "fake" },
      labels: {
        "kubernetes.io/hostname": FAKE_NODE,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
      },
    },
    spec: { podCIDR: POD_CIDR, podCIDRs: [POD_CIDR] },
    status: { capacity: FAKE_NODE_RESOURCES, allocatable: FAKE_NODE_RESOURCES },
  };
  const res = await apiRequest(ep, "POST", "/api/v1/nodes", node);
  if (res.status !== 201 && res.status !== 409) {
    throw new ComponentFailure(
      "kube-apiserver",
      `creating node ${FAKE_NODE} failed (${res.status}): ${brief(res.body)}`,
    );
  }
  await waitUntil(async () => {
    const got = await apiRequest(ep, "GET", `/api/v1/nodes/${FAKE_NODE}`);
    const conds: { type: string; status: string }[] = got.body?.status?.conditions ?? [];
    return conds.some((c) => c.type === "Ready" && c.status === "True");
  }, timeoutMs).catch(() => {
    throw new ComponentFailure("kwok", `node ${FAKE_NODE} did not become Ready within ${timeoutMs / 1000}s`);
  });
}

export async function waitForDefaultServiceAccount(ep: ApiEndpoint, timeoutMs = 60_000): Promise<void> {
  await waitUntil(
    async () => (await apiRequest(ep, "GET", "/api/v1/namespaces/default/serviceaccounts/default")).status === 200,
    timeoutMs,
  ).catch(() => {
    throw new ComponentFailure("kube-controller-manager", "ServiceAccount default/default was not created");
  });
}

export async function runSmokeDeployment(ep: ApiEndpoint, timeoutMs = 90_000): Promise<void> {
  const base = `/apis/apps/v1/namespaces/${SMOKE.namespace}/deployments`;
  const labels = { app: SMOKE.name };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: SMOKE.name, namespace: SMOKE.namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: "pause", image: SMOKE.image }] } },
    },
  };
  const created = await apiRequest(ep, "POST", base, deployment);
  if (created.status !== 201) {
    throw new ComponentFailure(
      "kube-apiserver",
      `creating the smoke Deployment failed (${created.status}): ${brief(created.body)}`,
    );
  }
  try {
    await waitUntil(
      async () => (await apiRequest(ep, "GET", `${base}/${SMOKE.name}`)).body?.status?.readyReplicas === 1,
      timeoutMs,
    );
  } catch {
    throw await diagnose(ep, timeoutMs);
  }
  await apiRequest(ep, "DELETE", `${base}/${SMOKE.name}?propagationPolicy=Background`);
  const pods = `/api/v1/namespaces/${SMOKE.namespace}/pods?labelSelector=app%3D${SMOKE.name}`;
  await waitUntil(async () => {
    const res = await apiRequest(ep, "GET", pods);
    return res.status === 200 && res.body.items.length === 0;
  }, 60_000).catch(() => {
    throw new ComponentFailure("kube-controller-manager", "the smoke Deployment's pods were not garbage-collected");
  });
}

/** Which component left the smoke pod short of Ready. */
async function diagnose(ep: ApiEndpoint, timeoutMs: number): Promise<ComponentFailure> {
  const res = await apiRequest(
    ep,
    "GET",
    `/api/v1/namespaces/${SMOKE.namespace}/pods?labelSelector=app%3D${SMOKE.name}`,
  );
  const pod = res.body?.items?.[0];
  const within = `within ${timeoutMs / 1000}s`;
  if (!pod)
    return new ComponentFailure("kube-controller-manager", `no pod was created for the smoke Deployment ${within}`);
  if (!pod.spec?.nodeName)
    return new ComponentFailure("kube-scheduler", `smoke pod ${pod.metadata.name} was not scheduled ${within}`);
  return new ComponentFailure(
    "kwok",
    `smoke pod ${pod.metadata.name} on ${pod.spec.nodeName} did not become Ready ${within}`,
  );
}

function brief(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}
