/**
 * The real node: containerd + kubelet + kube-proxy inside the cluster's network namespace.
 *
 * Contract:
 * - startRealNode(): writes the node's files (real-config.ts), creates its cgroup root in every
 *   hierarchy, starts containerd, imports the pause image, starts the kubelet and waits for the Node
 *   to be Ready (a Node left by an earlier kubelet is deleted first), then starts kube-proxy and waits
 *   until the `kubernetes` Service answers from inside the namespace. Every PID is written to the
 *   state as soon as it exists, so a failed or interrupted start is cleaned up by `down`.
 * - stopRealNode(): kubelet and kube-proxy (TERM, then KILL), every process in the node's cgroups
 *   (the pods), containerd, then shims of this containerd (found by its socket in their command line),
 *   every mount under the node's dir, the cgroups, and the kubelet's files outside its root dir
 *   (/var/log/containers links into this node). Resolves to the PIDs that survived (empty = clean).
 * - importIntoRealNode(archive): `ctr images import` into the running node's containerd (namespace
 *   k8s.io); resolves to the image names imported, or undefined when no real node is up.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { chmod, mkdir, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { binaryCacheRoot } from "../build.ts";
import { type ApiEndpoint, apiRequest } from "../kubeapi.ts";
import { unmountUnder } from "../mounts.ts";
import { inNetns } from "../netns.ts";
import { isRunning, run, startDetached, stopProcesses, waitUntil } from "../processes.ts";
import { type ClusterState, logPath, type NodeComponentName, paths, type RealNodeState, writeState } from "../state.ts";
import { ensurePauseArchive } from "./pause.ts";
import {
  cniConfList,
  containerdArgv,
  containerdConfig,
  GUARDED_REGISTRIES,
  kubeletArgv,
  kubeletConfig,
  kubeProxyArgv,
  kubeProxyConfig,
  type NodeLayout,
  nodeFiles,
  registryHostsToml,
} from "./real-config.ts";

const CRI_NAMESPACE = "k8s.io";
/** Machine-wide: which cluster's kubelet runs here ({dir, pid, argv0}); the kubelet's host paths allow one. */
export const REAL_NODE_OWNER = "/run/devctl-real-node.json";
const KUBERNETES_SERVICE = { ip: "10.96.0.1", port: 443 } as const;
const NODE_READY_TIMEOUT_MS = 60_000;

export type Log = (line: string) => void;

/** Every cgroup hierarchy mounted on this machine (v1 controllers, name=systemd, the unified one). */
export function cgroupMounts(mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): string[] {
  return mountinfo
    .split("\n")
    .map((l) => l.split(" - "))
    .filter(([, rest]) => /^cgroup2? /.test(rest ?? ""))
    .map(([head]) => head?.split(" ")[4] ?? "")
    .filter((m) => m.startsWith("/sys/fs/cgroup"));
}

async function writeNodeFiles(l: NodeLayout): Promise<void> {
  const f = nodeFiles(l.dir);
  for (const d of [f.containerdRoot, f.containerdState, f.cniConf, f.kubeletRoot, f.podLogs]) {
    await mkdir(d, { recursive: true });
  }
  await Bun.write(f.containerdConfig, containerdConfig(l));
  for (const host of ["_default", ...GUARDED_REGISTRIES]) {
    await mkdir(join(f.registryHosts, host), { recursive: true });
    await Bun.write(join(f.registryHosts, host, "hosts.toml"), registryHostsToml());
  }
  await Bun.write(join(f.cniConf, "10-devctl.conflist"), cniConfList());
  await Bun.write(f.kubeletConfig, kubeletConfig(l));
  await Bun.write(f.kubeProxyConfig, kubeProxyConfig(l));
  // No cluster DNS: pods get a resolver that answers nothing (a MissingClusterDNS event remains).
  await Bun.write(f.resolvConf, "nameserver 127.0.0.1\n");
  for (const m of cgroupMounts()) await mkdir(join(m, l.cgroupRoot), { recursive: true });
  await chmod(l.dir, 0o700);
}

async function startComponent(
  state: ClusterState,
  node: RealNodeState,
  name: NodeComponentName,
  argv: string[],
  log: Log,
): Promise<void> {
  const netns = state.network?.path;
  const pid = await startDetached(argv, logPath(name), netns);
  node.components[name] = { pid, argv, log: logPath(name), netns };
  await writeState(state);
  log(`started ${name} (pid ${pid})`);
}

function alive(node: RealNodeState, name: NodeComponentName): boolean {
  const rec = node.components[name];
  return rec !== undefined && isRunning(rec.pid, rec.argv[0] ?? "");
}

function ctr(node: RealNodeState, ...args: string[]): string[] {
  return ["ctr", "--address", node.containerdSocket, "--namespace", CRI_NAMESPACE, ...args];
}

async function nodeReady(ep: ApiEndpoint, name: string): Promise<boolean> {
  const got = await apiRequest(ep, "GET", `/api/v1/nodes/${name}`);
  const conds: { type: string; status: string }[] = got.body?.status?.conditions ?? [];
  return conds.some((c) => c.type === "Ready" && c.status === "True");
}

export async function startRealNode(state: ClusterState, layout: NodeLayout, ep: ApiEndpoint, log: Log): Promise<void> {
  const network = state.network;
  if (!network) throw new Error("the real node needs the cluster's network namespace");
  const node: RealNodeState = {
    name: layout.nodeName,
    dir: layout.dir,
    containerdSocket: layout.containerdSocket,
    cgroupRoot: layout.cgroupRoot,
    components: {},
  };
  state.node = node;
  await writeState(state);
  await writeNodeFiles(layout);
  const pause = await ensurePauseArchive(binaryCacheRoot());

  await startComponent(state, node, "containerd", containerdArgv(layout), log);
  await waitUntil(async () => {
    if (!alive(node, "containerd")) throw new Error("containerd exited during start-up");
    return (
      existsSync(node.containerdSocket) &&
      (await run(ctr(node, "version")).then(
        () => true,
        () => false,
      ))
    );
  }, 30_000);
  await run(ctr(node, "images", "import", "--no-unpack=false", pause));

  await apiRequest(ep, "DELETE", `/api/v1/nodes/${node.name}`); // a stale Node would read Ready for ~40 s
  await startComponent(state, node, "kubelet", kubeletArgv(layout), log);
  const kubelet = node.components.kubelet;
  await Bun.write(REAL_NODE_OWNER, JSON.stringify({ dir: paths.dir, pid: kubelet?.pid, argv0: kubelet?.argv[0] }));
  await waitUntil(async () => {
    if (!alive(node, "kubelet")) throw new Error("the kubelet exited during start-up");
    return nodeReady(ep, node.name);
  }, NODE_READY_TIMEOUT_MS).catch((err: Error) => {
    throw new Error(`node ${node.name} did not become Ready: ${err.message} (see ${logPath("kubelet")})`);
  });

  await startComponent(state, node, "kube-proxy", kubeProxyArgv(layout), log);
  const probe = inNetns(network.path, [
    "timeout",
    "2",
    "bash",
    "-c",
    `exec 3<>/dev/tcp/${KUBERNETES_SERVICE.ip}/${KUBERNETES_SERVICE.port}`,
  ]);
  await waitUntil(async () => {
    if (!alive(node, "kube-proxy")) throw new Error("kube-proxy exited during start-up");
    return run(probe).then(
      () => true,
      () => false,
    );
  }, 30_000).catch((err: Error) => {
    throw new Error(`the kubernetes Service is not reachable: ${err.message} (see ${logPath("kube-proxy")})`);
  });
  log(`real node ${node.name} Ready; the kubernetes Service ${KUBERNETES_SERVICE.ip} answers`);
}

/** Processes in the node's cgroups: its pods' containers (pause included). */
function podProcesses(node: RealNodeState): number[] {
  const pids = new Set<number>();
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    const procs = join(dir, "cgroup.procs");
    if (existsSync(procs)) {
      for (const p of readFileSync(procs, "utf8").split("\n")) if (p) pids.add(Number(p));
    }
    for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name));
  };
  for (const m of cgroupMounts()) walk(join(m, node.cgroupRoot));
  return [...pids];
}

/** containerd-shim processes of this node's containerd: their command line names its socket. */
function shimProcesses(node: RealNodeState): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (argv[0]?.includes("containerd-shim") && argv.includes(node.containerdSocket)) {
        found.push({ pid: Number(entry), argv });
      }
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

async function removeCgroups(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) await removeCgroups(join(dir, e.name));
  await rmdir(dir).catch(() => undefined); // a cgroup with a live process stays; reported by the caller's PID check
}

export async function stopRealNode(node: RealNodeState, log: Log): Promise<number[]> {
  const rec = (n: NodeComponentName) => {
    const r = node.components[n];
    return r ? [{ pid: r.pid, argv: r.argv }] : [];
  };
  const survivors = await stopProcesses([...rec("kubelet"), ...rec("kube-proxy")]);
  const pods = podProcesses(node);
  for (const pid of pods) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // gone
    }
  }
  await waitUntil(() => podProcesses(node).length === 0, 10_000, 50).catch(() => undefined);
  survivors.push(...podProcesses(node), ...(await stopProcesses(rec("containerd"))));
  const shims = shimProcesses(node);
  survivors.push(...(await stopProcesses(shims, 2_000)));
  await unmountUnder(node.dir);
  for (const m of cgroupMounts()) await removeCgroups(join(m, node.cgroupRoot));
  removeLinksInto("/var/log/containers", node.dir);
  await releaseOwner(node);
  log(
    `real node stopped: ${pods.length} pod processes killed, ${shims.length} shims stopped, mounts and cgroups removed`,
  );
  return survivors;
}

async function releaseOwner(node: RealNodeState): Promise<void> {
  try {
    const owner = JSON.parse(readFileSync(REAL_NODE_OWNER, "utf8")) as { pid?: number };
    if (owner.pid === node.components.kubelet?.pid) await rm(REAL_NODE_OWNER, { force: true });
  } catch {
    // absent or unreadable: nothing of ours to release
  }
}

function removeLinksInto(dir: string, target: string): void {
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    try {
      if (readlinkSync(join(dir, name)).startsWith(`${target}/`)) void rm(join(dir, name), { force: true });
    } catch {
      // not a link
    }
  }
}

export async function importIntoRealNode(archive: string): Promise<string | undefined> {
  const { readState } = await import("../state.ts");
  const state = await readState();
  const node = state?.node;
  if (!state?.ready || !node || !alive(node, "containerd")) return undefined;
  const out = await run(ctr(node, "images", "import", archive));
  return out.trim().replace(/\s+/g, " ");
}
