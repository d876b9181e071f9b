/**
 * The real node, as the real-node suite sees it: whether it is up, its containerd, the image, and
 * `operator install` scheduled onto it.
 *
 * Contract:
 * - realNodeOrReason(): the running node's state, or why there is none (no local cluster, an
 *   external DEVCTL_TEST_KUBECONFIG, a machine that cannot run it). The suite fails on CI when absent.
 * - buildImage(): `npm run image` (builds, imports into the node); resolves to its IMAGE= reference.
 * - installOnRealNode(): `devctl operator install --image … --wait` onto the real node (the steps of
 *   tests/cluster/nodes/schedule.ts).
 * - containerOf(pod): the containerd task of the pod's first container: id and host PID (ctr tasks ls).
 */
import { OPERATOR_NAME } from "../../src/install/manifests.ts";
import { hasSchedulingFlags, installSteps } from "../cluster/nodes/schedule.ts";
import type { RealNodeState } from "../cluster/state.ts";
import { DEVCTL, devctl, kubectl, PODS, ROOT, kube, sh } from "../_support.ts";
import { clusterState } from "../cluster/control.ts";
import { usingLocalCluster } from "../cluster/env.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { testWhen } from "../_skip.ts";

export type NodeOrReason = { kind: "up"; node: RealNodeState } | { kind: "absent"; reason: string };

/**
 * What every real-node test file starts with: the node when it is up, and `realTest`, which runs a test only then and
 * otherwise skips it with why (the runner fails such a skip on CI=true).
 */
export async function realNodeSuite(): Promise<{
  node: RealNodeState | undefined;
  /** Why there is none ("" when there is). */
  why: string;
  realTest: ReturnType<typeof testWhen>;
}> {
  const found = await realNodeOrReason();
  const node = found.kind === "up" ? found.node : undefined;
  const why = found.kind === "absent" ? found.reason : "";
  return {
    node,
    why,
    realTest: testWhen({ met: node !== undefined, reason: `needs the local cluster's real node: ${why}` }),
  };
}

export async function realNodeOrReason(): Promise<NodeOrReason> {
  if (!usingLocalCluster()) return { kind: "absent", reason: "DEVCTL_TEST_KUBECONFIG names an external cluster" };
  const state = await clusterState();
  if (!state) return { kind: "absent", reason: "the local cluster is not up" };
  if (!state.node) return { kind: "absent", reason: state.noRealNode ?? "the local cluster has no real node" };
  return { kind: "up", node: state.node };
}

export function ctr(node: RealNodeState, ...args: string[]) {
  return sh(["ctr", "--address", node.containerdSocket, "--namespace", "k8s.io", ...args]);
}

export function buildImage(): string {
  const r = sh([process.execPath, "run", "src/build/image.ts"], { cwd: ROOT });
  const ref = /^IMAGE=(\S+)$/m.exec(r.stdout)?.[1];
  if (r.code !== 0 || !ref) throw new Error(`npm run image failed (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  if (!r.stderr.includes("imported into the local cluster's real node")) {
    throw new Error(`npm run image did not import into the real node:\n${r.stderr}`);
  }
  return ref;
}

export function installHasSchedulingFlags(): boolean {
  return hasSchedulingFlags(sh([DEVCTL, "operator", "install", "--help"]).stdout);
}

/** Resolves to install's result (code, output); with `wait` (default) that of install --wait. */
export function installOnRealNode(image: string, namespace: string, opts: { wait?: boolean; extra?: string[] } = {}) {
  const steps = installSteps(
    { image, namespace, wait: opts.wait ?? true, extra: opts.extra, deployment: OPERATOR_NAME },
    installHasSchedulingFlags(),
  );
  let last = { code: 0, stdout: "", stderr: "" };
  for (const step of steps) {
    last = step.tool === "devctl" ? devctl(step.args) : kubectl(step.args);
    if (last.code !== 0) return last;
  }
  return last;
}

export interface PodLike extends KubeObject {
  spec: { nodeName?: string; containers: { name: string; securityContext?: Record<string, unknown> }[] };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      restartCount: number;
      containerID?: string;
      state?: { waiting?: { reason?: string; message?: string }; running?: unknown };
    }[];
  };
}

export async function podsOf(namespace: string): Promise<PodLike[]> {
  return (await kube.list<PodLike>(PODS, { namespace, labelSelector: "app.kubernetes.io/name=devctl-operator" })).items;
}

export function containerOf(node: RealNodeState, pod: PodLike): { id: string; pid: number } {
  const id = pod.status?.containerStatuses?.[0]?.containerID?.replace(/^containerd:\/\//, "");
  if (!id) throw new Error(`pod ${pod.metadata.name} has no running container`);
  const ls = ctr(node, "tasks", "ls");
  const line = ls.stdout.split("\n").find((l) => l.startsWith(id));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no task for container ${id}:\n${ls.stdout}${ls.stderr}`);
  return { id, pid };
}
