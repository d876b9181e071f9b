/**
 * Where the local test cluster lives and what it records about itself.
 *
 * Contract:
 * - Everything a running cluster needs, except its binaries, sits in `<repo>/.cluster/` (git-ignored;
 *   $DEVCTL_CLUSTER_DIR instead, when set):
 *   kubeconfig, pki/, etcd/ (data), logs/<component>.log, state.json.
 * - state.json is rewritten (atomically) after every component start, so an interrupted `up` still
 *   leaves the PIDs behind for the next `up` or `down` to stop.
 * - `ready` is true only once every component answered and the smoke Deployment became ready.
 */
import { mkdir, rename, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { unmountUnder } from "./mounts.ts";

export const REPO_ROOT = resolve(import.meta.dir, "../..");
/** DEVCTL_CLUSTER_DIR runs a second, independent cluster (its own ports and state) beside the default one. */
export const CLUSTER_DIR = process.env.DEVCTL_CLUSTER_DIR
  ? resolve(process.env.DEVCTL_CLUSTER_DIR)
  : join(REPO_ROOT, ".cluster");

export const paths = {
  dir: CLUSTER_DIR,
  state: join(CLUSTER_DIR, "state.json"),
  /** The kubeconfig handed to users and tests (context `devctl-test`). */
  kubeconfig: join(CLUSTER_DIR, "kubeconfig"),
  pki: join(CLUSTER_DIR, "pki"),
  /** The components' own copy of the admin kubeconfig, so edits to the user's copy cannot break them. */
  componentKubeconfig: join(CLUSTER_DIR, "pki", "components.kubeconfig"),
  etcdData: join(CLUSTER_DIR, "etcd"),
  logs: join(CLUSTER_DIR, "logs"),
  /** The real node's files (containerd root/state, kubelet root, configs). */
  node: join(CLUSTER_DIR, "node"),
} as const;

/** In start order; stopped in reverse. */
export const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"] as const;
export type ComponentName = (typeof COMPONENTS)[number];

export interface ComponentRecord {
  pid: number;
  /** The full command line; argv[0] is the binary, used to tell our process from a reused PID. */
  argv: string[];
  log: string;
  /** The network namespace it runs in (a /run/netns path); absent = the host's. */
  netns?: string;
}

/** The cluster's network namespace and the forwarder that makes its ports reachable on host loopback. */
export interface NetworkState {
  name: string;
  path: string;
  bridgeIp: string;
  forwarder?: ComponentRecord;
}

export const NODE_COMPONENTS = ["containerd", "kubelet", "kube-proxy"] as const;
export type NodeComponentName = (typeof NODE_COMPONENTS)[number];

/** The real node (kubelet + containerd + kube-proxy), present only where the machine can run one. */
export interface RealNodeState {
  name: string;
  dir: string;
  containerdSocket: string;
  /** Cgroup (in every hierarchy) all of the node's pods live under: /sys/fs/cgroup/<ctrl>/<cgroupRoot>. */
  cgroupRoot: string;
  components: Partial<Record<NodeComponentName, ComponentRecord>>;
}

export interface Ports {
  etcdClient: number;
  etcdPeer: number;
  apiServer: number;
  controllerManager: number;
  scheduler: number;
  kwok: number;
}

export interface ClusterState {
  /** True only after every component answered and the smoke Deployment became ready. */
  ready: boolean;
  binDir: string;
  kubeconfig: string;
  /** https://127.0.0.1:<ports.apiServer> */
  server: string;
  ports: Ports;
  /** Components started so far; a missing entry was never started. */
  components: Partial<Record<ComponentName, ComponentRecord>>;
  /** Absent: everything on host loopback, no real node (the machine cannot run one). */
  network?: NetworkState;
  node?: RealNodeState;
  /** Why there is no real node, when there is none. */
  noRealNode?: string;
  /** metrics-server (addons/metrics-server.ts), started after the real node, whose kubelet it scrapes. */
  metricsServer?: ComponentRecord;
}

export function logPath(component: ComponentName | NodeComponentName | "forward" | "metrics-server"): string {
  return join(paths.logs, `${component}.log`);
}

export async function readState(): Promise<ClusterState | undefined> {
  const file = Bun.file(paths.state);
  if (!(await file.exists())) return undefined;
  try {
    return (await file.json()) as ClusterState;
  } catch {
    return undefined; // a torn or foreign file counts as no state; `up` then starts over
  }
}

export async function writeState(state: ClusterState): Promise<void> {
  await mkdir(paths.dir, { recursive: true });
  const tmp = `${paths.state}.${process.pid}.tmp`;
  await Bun.write(tmp, `${JSON.stringify(state, null, 2)}\n`);
  await rename(tmp, paths.state);
}

export async function removeState(): Promise<void> {
  await rm(paths.state, { force: true });
}

/** Removes all of .cluster/ (state, PKI, etcd data, logs). The binary cache lives elsewhere and is kept. */
export async function removeClusterDir(): Promise<void> {
  // Never recurse through a mount a crashed node left (a kubelet volume, a container's root filesystem).
  const left = await unmountUnder(paths.dir);
  if (left.length > 0) throw new Error(`cannot remove ${paths.dir}: still mounted: ${left.join(", ")}`);
  await rm(paths.dir, { recursive: true, force: true });
}
