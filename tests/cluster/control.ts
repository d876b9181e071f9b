/**
 * Fault injection and introspection for integration suites that run against the local cluster.
 *
 * Contract:
 * - clusterState(): the recorded state of the running local cluster (ports, PIDs, paths), or
 *   undefined when none is up. Cheap: reads state.json and /proc, no network.
 * - restartApiServer(): stops kube-apiserver (TERM: graceful, ~2-3 s; KILL after 10 s) and starts it again with
 *   the same command line (same port, certs and etcd), appending to the same log; resolves with the
 *   new PID once /readyz answers. A frozen API server is thawed by the stop.
 * - freezeApiServer() / thawApiServer(): SIGSTOP / SIGCONT. While frozen, the port still accepts
 *   connections but nothing answers: requests hang until the client's own timeout, like a partition.
 *   Keep freezes under ~40 s: longer ones let the node lease lapse, and the node flaps NotReady.
 * - compactEtcd(): bumps etcd's revision (one write outside the API server's /registry prefix),
 *   compacts history up to it and resolves with that revision: every resourceVersion issued before
 *   the call is older than it. Alone it is rarely visible: the API server's watch cache keeps
 *   serving recent history from memory (measured: a watch and an Exact list at an older RV still
 *   answer 200).
 * - expireResourceVersions(): compactEtcd() then restartApiServer(): afterwards every resourceVersion
 *   issued before the call is gone: a watch from it yields an ERROR event with a Status
 *   {code 410, reason Expired} ("too old resource version"), an Exact list answers HTTP 410.
 * - All reject with a message saying to run `npm run cluster:up` when no local cluster is up.
 */
import { appendFile } from "node:fs/promises";
import { auxiliaryRecords, endpointOf, waitHealthy } from "./lifecycle.ts";
import { isRunning, startDetached, stopProcesses } from "./processes.ts";
import { type ClusterState, type ComponentRecord, readState, writeState } from "./state.ts";

export type { ClusterState } from "./state.ts";

export async function clusterState(): Promise<ClusterState | undefined> {
  const state = await readState();
  if (!state?.ready) return undefined;
  const all = [...Object.values(state.components), ...auxiliaryRecords(state)].every(
    (r) => r !== undefined && isRunning(r.pid, r.argv[0] ?? ""),
  );
  return all ? state : undefined;
}

async function requireState(): Promise<ClusterState> {
  const state = await readState();
  if (!state?.ready) throw new Error("The local test cluster is not up: run `npm run cluster:up` first.");
  return state;
}

function apiServer(state: ClusterState): ComponentRecord {
  const rec = state.components["kube-apiserver"];
  if (!rec || !isRunning(rec.pid, rec.argv[0] ?? "")) {
    throw new Error(
      "kube-apiserver of the local test cluster is not running: run `npm run cluster:down && npm run cluster:up`.",
    );
  }
  return rec;
}

/**
 * Restarts kube-apiserver, with `extraArgs` this time only (e.g. --runtime-config=autoscaling/v2=false): the state
 * keeps the recorded argv, so the next restart (or cluster up) runs without them.
 */
export async function restartApiServer(extraArgs: readonly string[] = []): Promise<number> {
  const state = await requireState();
  const rec = apiServer(state);
  const left = await stopProcesses([{ pid: rec.pid, argv: rec.argv }]);
  if (left.length > 0) throw new Error(`kube-apiserver (pid ${rec.pid}) did not stop`);
  const how = extraArgs.length > 0 ? ` with ${extraArgs.join(" ")}` : "";
  await appendFile(rec.log, `\n----- restarted by restartApiServer()${how} at ${new Date().toISOString()} -----\n`);
  const pid = await startDetached([...rec.argv, ...extraArgs], rec.log, rec.netns);
  state.components["kube-apiserver"] = { ...rec, pid };
  await writeState(state);
  await waitHealthy(state, "kube-apiserver", await endpointOf(state));
  return pid;
}

export async function freezeApiServer(): Promise<void> {
  process.kill(apiServer(await requireState()).pid, "SIGSTOP");
}

export async function thawApiServer(): Promise<void> {
  process.kill(apiServer(await requireState()).pid, "SIGCONT");
}

export async function compactEtcd(): Promise<number> {
  const state = await requireState();
  const base = `http://127.0.0.1:${state.ports.etcdClient}/v3/kv`;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${base}/${path}`, {
      method: "POST",
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const json = (await res.json()) as { header?: { revision?: string }; error?: string; message?: string };
    if (!res.ok) throw new Error(`etcd ${path} failed (${res.status}): ${json.message ?? json.error ?? ""}`);
    return json;
  };
  // A write outside the API server's prefix bumps the revision, so every revision issued before
  // this call is strictly older than the one compacted to; the put's header carries the new revision.
  const put = await post("put", { key: b64("/devctl-test/compaction-marker"), value: b64(new Date().toISOString()) });
  const revision = Number(put.header?.revision);
  if (!Number.isSafeInteger(revision) || revision < 1)
    throw new Error(`etcd returned no revision: ${JSON.stringify(put)}`);
  await post("compaction", { revision: String(revision), physical: true });
  return revision;
}

function b64(text: string): string {
  return Buffer.from(text).toString("base64");
}

export async function expireResourceVersions(): Promise<number> {
  const revision = await compactEtcd();
  await restartApiServer();
  return revision;
}
