/**
 * Shared support for integration suites: a client for the test cluster, kubectl, polling, and
 * throwaway namespaces. The cluster is the local control plane (npm run cluster:up) unless
 * DEVCTL_TEST_KUBECONFIG points at another one (see tests/cluster/env.ts).
 */
import type { RolloutRecord } from "../src/api/rollout-history.ts";
import { setDefaultTimeout } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createKubeClient } from "../src/kube/client.ts";
import { isNotFound } from "../src/kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../src/kube/types.ts";
import { testKubeconfig } from "./cluster/env.ts";
import { KUBECTL_CACHE_ENV, kubectlPath } from "./cluster/kubectl.ts";

/** Integration tests wait on a real API server and its controllers. */
setDefaultTimeout(120_000);

export const ROOT = resolve(import.meta.dir, "..");
export const DEVCTL = resolve(ROOT, "dist/devctl");

export const NAMESPACES: ResourceType = {
  group: "",
  version: "v1",
  plural: "namespaces",
  kind: "Namespace",
  namespaced: false,
};
export const DEPLOYMENTS: ResourceType = {
  group: "apps",
  version: "v1",
  plural: "deployments",
  kind: "Deployment",
  namespaced: true,
};
export const REPLICASETS: ResourceType = {
  group: "apps",
  version: "v1",
  plural: "replicasets",
  kind: "ReplicaSet",
  namespaced: true,
};
export const PODS: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
export const SERVICES: ResourceType = {
  group: "",
  version: "v1",
  plural: "services",
  kind: "Service",
  namespaced: true,
};
export const SERVICEACCOUNTS: ResourceType = {
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
};
export const CRDS: ResourceType = {
  group: "apiextensions.k8s.io",
  version: "v1",
  plural: "customresourcedefinitions",
  kind: "CustomResourceDefinition",
  namespaced: false,
};

export const kubeconfig = await testKubeconfig();
/** kubectl v1.36.3 built from the pinned module (tests compare its exact wording and tables). */
export const KUBECTL = kubectlPath();
export const kube: KubeClient = createKubeClient({ kubeconfig });

/** Runs a command to completion; returns exit code and output (never throws). */
export function sh(
  cmd: string[],
  opts: { env?: Record<string, string | undefined>; stdin?: string; cwd?: string } = {},
) {
  const r = Bun.spawnSync(cmd, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: r.exitCode ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/**
 * kubectl's HTTP cache goes to a directory of this test run: the shared ~/.kube/cache would keep a
 * restarting API server's "429, retry after 5 s" and slow every later kubectl on the machine. `npm test` names it
 * and removes it (KUBECTL_CACHE_ENV), and so does a bare `bun test` (tests/_preload.ts); a script that imports this
 * module without either (the chaos soak names its own) gets a temporary directory.
 */
const kubectlCache = process.env[KUBECTL_CACHE_ENV] ?? mkdtempSync(join(tmpdir(), "devctl-kubectl-cache-"));
export const kubectl = (args: string[], stdin?: string) =>
  sh([KUBECTL, "--kubeconfig", kubeconfig, "--cache-dir", kubectlCache, ...args], stdin !== undefined ? { stdin } : {});
export const devctl = (args: string[], env: Record<string, string | undefined> = {}, stdin?: string) =>
  sh([DEVCTL, ...args], { env: { KUBECONFIG: kubeconfig, ...env }, ...(stdin !== undefined ? { stdin } : {}) });

/** Polls `fn` until it returns a truthy value; fails with the last value/error after `timeoutMs`. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 30_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v) return v;
      last = v;
    } catch (e) {
      last = e;
    }
    await Bun.sleep(200);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`,
  );
}

/** Creates a namespace with a unique name; `drop()` deletes it (not waiting for finalization). */
export async function tempNamespace(prefix: string): Promise<{ name: string; drop: () => Promise<void> }> {
  const name = `${prefix}-${Math.random().toString(36).slice(2, 8)}`;
  await kube.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  return {
    name,
    drop: async () => {
      await kube.delete(NAMESPACES, name).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
    },
  };
}

export async function getOrUndefined<T extends KubeObject>(
  rt: ResourceType,
  name: string,
  namespace?: string,
): Promise<T | undefined> {
  try {
    return await kube.get<T>(rt, name, namespace);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export const WEBAPPS: ResourceType = {
  group: "apps.example.com",
  version: "v1",
  plural: "webapps",
  kind: "WebApp",
  namespaced: true,
};
export const EVENTS: ResourceType = { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true };

/** Applies the checked-in CRD (server-side, so it also repairs an altered one) and waits until it is Established. */
export async function ensureCrd(file = "crd/webapps.apps.example.com.yaml"): Promise<void> {
  const r = kubectl(["apply", "--server-side", "--force-conflicts", "-f", file]);
  if (r.code !== 0) throw new Error(`kubectl apply ${file}: ${r.stderr}`);
  await eventually(
    async () => {
      const crd = await kube.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
        CRDS,
        "webapps.apps.example.com",
      );
      return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    },
    30_000,
    "the WebApp CRD to be Established",
  );
}

export interface WebAppLike extends KubeObject {
  spec: { image: string; replicas?: number; port: number };
  status?: {
    replicas?: number;
    readyReplicas?: number;
    observedGeneration?: number;
    autoscaling?: { currentReplicas?: number; desiredReplicas?: number };
    conditions?: { type: string; status: string; reason: string; message: string }[];
    rollouts?: RolloutRecord[];
    lastReadyRevision?: number;
  };
}

export const webapp = (name: string, namespace: string, spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  metadata: { name, namespace },
  spec,
});

export const conditionOf = (wa: WebAppLike | undefined, type: string) =>
  wa?.status?.conditions?.find((c) => c.type === type);

/** The WebApp `namespace/name` once `ok` holds for it (it may not exist yet); fails after timeoutMs saying `what`. */
export function webAppOnce(
  namespace: string,
  name: string,
  what: string,
  ok: (w: WebAppLike) => boolean,
  timeoutMs = 60_000,
): Promise<WebAppLike> {
  return eventually(
    async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, namespace);
      return w && ok(w) ? w : undefined;
    },
    timeoutMs,
    `${name}: ${what}`,
  );
}

/** A Deployment as far as its containers' images. */
export type ImagedDeployment = KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } };

/** The image the WebApp `name`'s Deployment runs now. */
export async function deployedImage(namespace: string, name: string): Promise<string | undefined> {
  const d = await kube.get<ImagedDeployment>(DEPLOYMENTS, `${name}-deployment`, namespace);
  return d.spec.template.spec.containers[0]?.image;
}

/** Ready True, for the generation it has now. */
export const readyOnItsGeneration = (w: WebAppLike): boolean =>
  conditionOf(w, "Ready")?.status === "True" && w.status?.observedGeneration === w.metadata.generation;

/** Events about one object, newest last. */
export async function eventsFor(
  namespace: string,
  name: string,
): Promise<{ type: string; reason: string; message: string; count?: number }[]> {
  const list = await kube.list<
    KubeObject & { type: string; reason: string; message: string; count?: number; involvedObject: { name: string } }
  >(EVENTS, { namespace });
  return list.items.filter((e) => e.involvedObject.name === name);
}

/** The Events about `name`, once one of them is what `wanted` accepts (an Event is written after what it tells). */
export function eventsOnceSeen(
  namespace: string,
  name: string,
  wanted: (e: Awaited<ReturnType<typeof eventsFor>>[number]) => boolean,
  what: string,
  timeoutMs = 15_000,
): ReturnType<typeof eventsFor> {
  return eventually(
    async () => {
      const events = await eventsFor(namespace, name);
      return events.some(wanted) ? events : undefined;
    },
    timeoutMs,
    what,
  );
}
