/**
 * Bringing the local test cluster up and down.
 *
 * Contract:
 * - up() resolves to the absolute kubeconfig path of a ready cluster. It reuses a running one
 *   (state ready, every recorded PID still ours, /readyz answers); otherwise it stops whatever an
 *   earlier run left, wipes .cluster/ and starts anew: binaries (built if missing), PKI, free ports,
 *   etcd -> kube-apiserver -> controller-manager + scheduler + kwok, fake node, smoke Deployment.
 * - Where the machine can run a real node (plan.ts), everything runs inside the cluster's own network
 *   namespace (netns.ts), a forwarder serves every port on host loopback (so kubeconfigs and health
 *   checks work unchanged), and after the smoke Deployment the real node joins (nodes/real.ts), then
 *   metrics-server serves metrics.k8s.io from its kubelet (addons/metrics-server.ts; built before anything starts).
 * - On failure it stops every process it started, keeps .cluster/logs/, drops the state and rejects
 *   with an UpFailure naming the component, with the tail of its log. An aborted `signal` is such a failure:
 *   up() checks it before each start and while waiting, and never marks an aborted start ready.
 * - down() stops exactly the recorded PIDs (metrics-server, the real node and its pods, clients, then the API server,
 *   then etcd, then the forwarder; TERM, grace, KILL), verifies they are gone, deletes the namespace
 *   and removes .cluster/. The binary cache is kept.
 */
import { chmod, mkdir } from "node:fs/promises";
import { messageOf } from "../../src/kube/errors.ts";
import { ensureMetricsServer, startMetricsServer, stopMetricsServer } from "./addons/metrics-server.ts";
import { binaryPath, ensureBinaries, kwokStages } from "./build.ts";
import { componentArgv, healthUrl, type Layout } from "./components.ts";
import { type ApiEndpoint, apiRequest, isApiReady, kubeconfigYaml, loadEndpoint } from "./kubeapi.ts";
import { createNetwork, deleteNetwork, networkName } from "./netns.ts";
import { startRealNode, stopRealNode } from "./nodes/real.ts";
import type { NodeLayout } from "./nodes/real-config.ts";
import { createPki, pkiFiles } from "./pki.ts";
import { planNodes } from "./plan.ts";
import { freePorts, isRunning, startDetached, stopProcesses, tailFile, waitUntil } from "./processes.ts";
import { ComponentFailure, ensureFakeNode, runSmokeDeployment, waitForDefaultServiceAccount } from "./smoke.ts";
import {
  type ClusterState,
  COMPONENTS,
  type ComponentName,
  type ComponentRecord,
  logPath,
  paths,
  readState,
  removeClusterDir,
  NODE_COMPONENTS,
  removeState,
  writeState,
} from "./state.ts";

export type Log = (line: string) => void;

export class UpFailure extends Error {
  constructor(
    readonly component: ComponentName | undefined,
    message: string,
  ) {
    super(message);
  }
}

const HEALTH_TIMEOUT_MS: Record<ComponentName, number> = {
  etcd: 30_000,
  "kube-apiserver": 120_000,
  "kube-controller-manager": 60_000,
  "kube-scheduler": 60_000,
  kwok: 60_000,
};

export function endpointOf(state: ClusterState): Promise<ApiEndpoint> {
  return loadEndpoint(state.server, pkiFiles(paths.pki));
}

export function runningComponents(state: ClusterState): ComponentName[] {
  return COMPONENTS.filter((c) => {
    const rec = state.components[c];
    return rec !== undefined && isRunning(rec.pid, rec.argv[0] ?? "");
  });
}

/** The forwarder, the real node's processes and metrics-server, when the cluster has them. */
export function auxiliaryRecords(state: ClusterState): ComponentRecord[] {
  const node = state.node ? NODE_COMPONENTS.flatMap((c) => state.node?.components[c] ?? []) : [];
  const metrics = state.metricsServer ? [state.metricsServer] : [];
  return [...(state.network?.forwarder ? [state.network.forwarder] : []), ...node, ...metrics];
}

/** A ready state whose processes all run and whose API server answers. */
export async function isUp(state: ClusterState): Promise<boolean> {
  if (!state.ready || runningComponents(state).length !== COMPONENTS.length) return false;
  if (!auxiliaryRecords(state).every((r) => isRunning(r.pid, r.argv[0] ?? ""))) return false;
  if (!(await Bun.file(state.kubeconfig).exists())) return false;
  return isApiReady(await endpointOf(state));
}

export async function up(log: Log, signal?: AbortSignal): Promise<string> {
  const previous = await readState();
  if (previous && (await isUp(previous))) {
    log(`reusing the running cluster (API server ${previous.server})`);
    return previous.kubeconfig;
  }
  if (previous) {
    log("found a stale cluster state: stopping its processes and starting anew");
    await stopRecorded(previous);
  }
  await removeClusterDir();
  await mkdir(paths.logs, { recursive: true });

  const plan = await planNodes(log);
  const binDir = await ensureBinaries(log);
  const metricsServer = plan.kind === "with-real-node" ? await ensureMetricsServer(log) : undefined;
  const stages = await kwokStages();
  const started = Date.now();
  const pki = await createPki(paths.pki);
  const ports = freePorts(["etcdClient", "etcdPeer", "apiServer", "controllerManager", "scheduler", "kwok"] as const);
  const state: ClusterState = {
    ready: false,
    binDir,
    kubeconfig: paths.kubeconfig,
    server: `https://127.0.0.1:${ports.apiServer}`,
    ports,
    components: {},
    ...(plan.kind === "kwok-only" ? { noRealNode: plan.reason } : {}),
  };
  const ep = await endpointOf(state);
  for (const file of [paths.kubeconfig, paths.componentKubeconfig]) {
    await Bun.write(file, kubeconfigYaml(ep));
    await chmod(file, 0o600); // holds the admin key
  }
  await writeState(state);
  const layout: Layout = {
    binDir,
    pki,
    ports,
    kubeconfig: paths.componentKubeconfig,
    etcdData: paths.etcdData,
    kwokStages: stages,
  };

  try {
    signal?.throwIfAborted();
    if (plan.kind === "with-real-node") {
      const network = await createNetwork(networkName(paths.dir));
      state.network = { ...network };
      await writeState(state);
      layout.bridgeIp = network.bridgeIp;
      await startForwarder(state, binDir, log);
    }
    await startAndWait(state, layout, ["etcd"], ep, log, signal);
    await startAndWait(state, layout, ["kube-apiserver"], ep, log, signal);
    await startAndWait(state, layout, ["kube-controller-manager", "kube-scheduler", "kwok"], ep, log, signal);
    log("creating the fake node and running the smoke Deployment");
    await ensureFakeNode(ep);
    await waitForDefaultServiceAccount(ep);
    await runSmokeDeployment(ep);
    signal?.throwIfAborted();
    if (plan.kind === "with-real-node") {
      log("starting the real node (containerd, kubelet, kube-proxy)");
      await startRealNode(state, realNodeLayout(state, binDir, layout), ep, log);
      signal?.throwIfAborted();
      if (metricsServer) await startMetricsServer(state, ep, metricsServer, log, signal);
    } else {
      log(`no real node: ${plan.reason}`);
    }
    signal?.throwIfAborted();
  } catch (err) {
    throw await failUp(state, err);
  }
  state.ready = true;
  await writeState(state);
  log(`cluster ready in ${((Date.now() - started) / 1000).toFixed(1)}s (API server ${state.server})`);
  return state.kubeconfig;
}

async function startAndWait(
  state: ClusterState,
  layout: Layout,
  names: ComponentName[],
  ep: ApiEndpoint,
  log: Log,
  signal?: AbortSignal,
): Promise<void> {
  for (const name of names) {
    signal?.throwIfAborted();
    const argv = componentArgv(name, layout);
    const netns = state.network?.path;
    const pid = await startDetached(argv, logPath(name), netns).catch((err: Error) => {
      throw new ComponentFailure(name, err.message);
    });
    state.components[name] = { pid, argv, log: logPath(name), ...(netns ? { netns } : {}) };
    await writeState(state);
    log(`started ${name} (pid ${pid})`);
  }
  await Promise.all(names.map((name) => waitHealthy(state, name, ep, signal)));
}

export async function waitHealthy(
  state: ClusterState,
  name: ComponentName,
  ep: ApiEndpoint,
  signal?: AbortSignal,
): Promise<void> {
  const rec = state.components[name];
  if (!rec) throw new ComponentFailure(name, `${name} was never started`);
  const url = healthUrl(name, state.ports);
  const timeoutMs = HEALTH_TIMEOUT_MS[name];
  await waitUntil(async () => {
    signal?.throwIfAborted();
    if (!isRunning(rec.pid, rec.argv[0] ?? "")) throw new ComponentFailure(name, `${name} exited during start-up`);
    if (name === "kube-apiserver") return (await apiRequest(ep, "GET", "/readyz", undefined, 3_000)).status === 200;
    const res = await fetch(url, { tls: { rejectUnauthorized: false }, signal: AbortSignal.timeout(3_000) }).catch(
      () => undefined,
    );
    return res?.status === 200;
  }, timeoutMs).catch((err) => {
    throw err instanceof ComponentFailure || signal?.aborted
      ? err
      : new ComponentFailure(name, `${name} did not answer ${url} within ${timeoutMs / 1000}s`);
  });
}

/** Stops what `up` started, keeps the logs, and names the culprit: a process that died, else the failed check's. */
async function failUp(state: ClusterState, err: unknown): Promise<UpFailure> {
  const dead = COMPONENTS.find((c) => state.components[c] && !runningComponents(state).includes(c));
  const component = dead ?? (err instanceof ComponentFailure ? err.component : undefined);
  const reason = messageOf(err);
  const stopError = await stopRecorded(state).then(
    () => undefined,
    (e: Error) => e,
  );
  if (!stopError) await removeState(); // else keep the PIDs on record so `down` can retry
  const logTail = component
    ? `\n--- last lines of ${logPath(component)} ---\n${await tailFile(logPath(component))}`
    : "";
  const what = component ? `${component} failed` : "cluster start-up failed";
  const deadNote = dead ? ` (${dead} is not running)` : "";
  const stopNote = stopError ? `\n${stopError.message}: run \`npm run cluster:down\`` : "";
  return new UpFailure(component, `${what}${deadNote}: ${reason}${logTail}\nlogs kept in ${paths.logs}${stopNote}`);
}

/** Stops the recorded processes; rejects naming any PID that survived SIGKILL. */
export async function stopRecorded(state: ClusterState, log: Log = () => {}): Promise<void> {
  const survivors = await stopMetricsServer(state);
  if (state.node) survivors.push(...(await stopRealNode(state.node, log)));
  const phases: ComponentName[][] = [
    ["kwok", "kube-scheduler", "kube-controller-manager"],
    ["kube-apiserver"],
    ["etcd"],
  ];
  for (const phase of phases) {
    const procs = phase.flatMap((c) => {
      const rec = state.components[c];
      return rec ? [{ pid: rec.pid, argv: rec.argv }] : [];
    });
    survivors.push(...(await stopProcesses(procs)));
  }
  const fwd = state.network?.forwarder;
  if (fwd) survivors.push(...(await stopProcesses([{ pid: fwd.pid, argv: fwd.argv }])));
  if (state.network && survivors.length === 0) await deleteNetwork(state.network.name);
  if (survivors.length > 0) throw new Error(`could not stop cluster processes with PIDs ${survivors.join(", ")}`);
}

/** Host-loopback forwarder for every port a client or health check uses (not etcd's peer port). */
async function startForwarder(state: ClusterState, binDir: string, log: Log): Promise<void> {
  const network = state.network;
  if (!network) return;
  const { etcdPeer: _peer, ...served } = state.ports;
  const argv = [
    binaryPath(binDir, "forward"),
    `-netns=${network.path}`,
    ...Object.values(served).map((p) => `127.0.0.1:${p}`),
  ];
  const pid = await startDetached(argv, logPath("forward"));
  network.forwarder = { pid, argv, log: logPath("forward") };
  await writeState(state);
  log(`started the host-loopback forwarder into ${network.name} (pid ${pid})`);
}

function realNodeLayout(state: ClusterState, binDir: string, layout: Layout): NodeLayout {
  const network = state.network;
  if (!network) throw new Error("the real node needs the cluster's network namespace");
  return {
    nodeName: network.bridgeIp,
    dir: paths.node,
    containerdSocket: `${paths.node}/containerd.sock`,
    cgroupRoot: network.name,
    kubeconfig: layout.kubeconfig,
    caCert: layout.pki.caCert,
    binDir,
  };
}

export async function down(log: Log): Promise<void> {
  const state = await readState();
  if (state) {
    const names = COMPONENTS.filter((c) => state.components[c]);
    await stopRecorded(state, log);
    log(`stopped ${names.map((c) => `${c} (pid ${state.components[c]?.pid})`).join(", ") || "nothing"}`);
  } else {
    log("no cluster state found: nothing to stop");
  }
  await removeClusterDir();
}
