/**
 * Shared by the install suites (install.test.ts, install-guards.test.ts): background installs with
 * --wait, the operator pod KWOK runs, pod waiting states written as a kubelet writes them, and
 * clean-up so that every test starts with no devctl operator installed (install refuses a second).
 */
import { afterAll, beforeEach } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { DEVCTL, devctl, eventually, kube, kubeconfig, PODS } from "./_support.ts";

export const LEASES = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};
export const CLUSTERROLES = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterroles",
  kind: "ClusterRole",
  namespaced: false,
};
export const suffix = Math.random().toString(36).slice(2, 8);
export const installed: string[] = [];
export const cleanups: (() => Promise<unknown>)[] = [];

/** Every test starts with no devctl operator installed (install refuses a second one). */
export async function uninstallAll(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  for (const ns of installed.splice(0)) devctl(["operator", "uninstall", "-n", ns]);
}
/** Registers the clean-up before each test and after the file. */
export function cleanBetweenTests(): void {
  beforeEach(uninstallAll);
  afterAll(uninstallAll);
}

export interface Running {
  proc: ReturnType<typeof Bun.spawn>;
  stderr: () => string;
  exited: Promise<number>;
}

/** `devctl operator install … --wait` in the background, its stderr collected as it comes. */
export function installWaiting(namespace: string, args: string[]): Running {
  installed.push(namespace);
  let err = "";
  const proc = Bun.spawn([DEVCTL, "operator", "install", "-n", namespace, "--replicas", "1", "--wait", ...args], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdout: "ignore",
    stderr: "pipe",
  });
  const drained = (async () => {
    const d = new TextDecoder();
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) err += d.decode(c, { stream: true });
  })();
  cleanups.push(async () => proc.kill());
  return { proc, stderr: () => err, exited: proc.exited.then(async (code) => (await drained, code)) };
}

export interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** The install's one pod, once KWOK has made it Running (it has an IP). */
export async function runningPod(namespace: string): Promise<PodLike> {
  return eventually(
    async () => (await kube.list<PodLike>(PODS, { namespace })).items.find((p) => p.status?.podIP),
    30_000,
    `a running operator pod in ${namespace}`,
  );
}

/** Writes a container waiting state into the pod's status, as the kubelet would. */
export async function setWaiting(pod: PodLike, container: Record<string, unknown>): Promise<void> {
  await kube.patch(
    PODS,
    pod.metadata.name as string,
    pod.metadata.namespace,
    {
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          { type: "ContainersReady", status: "False" },
        ],
        containerStatuses: [{ name: "operator", ready: false, started: false, ...container }],
      },
    },
    "strategic",
    { subresource: "status" },
  );
}
