/**
 * metrics-server for the cluster with the real node: the resource metrics API (metrics.k8s.io) that `kubectl top`
 * and the HorizontalPodAutoscaler read, served from the real kubelet's /metrics/resource.
 *
 * Contract:
 * - ensureMetricsServer(log): the binary, built from the Go module pinned in ../go/metrics-server (a `tool` of it,
 *   METRICS_SERVER_VERSION) into `${XDG_CACHE_HOME:-$HOME/.cache}/devctl/metrics-server/<version>_<8 hex of
 *   sha256 over go.mod and go.sum>/metrics-server`; complete or absent (built into a sibling temp dir, renamed).
 * - startMetricsServer(state, ep, log): once the real node is Ready: its serving cert (cluster CA), its objects
 *   (metrics-server-config.ts), a token of its ServiceAccount in a kubeconfig under pki/, then the process in the
 *   cluster's network namespace, recorded in the state as soon as it exists (so `down` and a failed `up` stop it);
 *   resolves once the APIService is Available (rejects at once when `signal` aborts). Node and pod metrics follow
 *   within two resolutions (~20 s).
 * - stopMetricsServer(state): TERM, grace, KILL; resolves to the PIDs that survived.
 */
import { existsSync } from "node:fs";
import { chmod, mkdir, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { goBuildPackages, removeAbandonedTempDirs } from "../build.ts";
import { type ApiEndpoint, apiRequest } from "../kubeapi.ts";
import { pkiFiles, signCert } from "../pki.ts";
import { isRunning, startDetached, stopProcesses, waitUntil } from "../processes.ts";
import { type ClusterState, logPath, paths, writeState } from "../state.ts";
import {
  METRICS_APISERVICE,
  METRICS_NAME,
  METRICS_NAMESPACE,
  METRICS_SERVER_MODULE,
  METRICS_SERVER_PORT,
  METRICS_SERVER_VERSION,
  METRICS_SERVICE_HOST,
  metricsServerArgv,
  metricsServerObjects,
  tokenKubeconfig,
} from "./metrics-server-config.ts";

const MODULE_DIR = join(import.meta.dir, "..", "go", "metrics-server");
const KEY_FILES = ["go.mod", "go.sum"];
/** The version stamp its Makefile sets (it reports client-go's version variables). */
const LDFLAGS = `-s -w -X k8s.io/client-go/pkg/version.gitVersion=${METRICS_SERVER_VERSION}`;
/** Long enough for any session of the test cluster; the token dies with the cluster (a new signing key each up). */
const TOKEN_SECONDS = 365 * 24 * 3600;
const AVAILABLE_TIMEOUT_MS = 60_000;

export type Log = (line: string) => void;

export async function metricsServerPath(): Promise<string> {
  const hash = createHash("sha256");
  for (const f of KEY_FILES) hash.update(await Bun.file(join(MODULE_DIR, f)).bytes());
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  const key = `${METRICS_SERVER_VERSION}_${hash.digest("hex").slice(0, 8)}`;
  return join(base, "devctl", "metrics-server", key, METRICS_NAME);
}

export async function ensureMetricsServer(log: Log): Promise<string> {
  const bin = await metricsServerPath();
  if (existsSync(bin)) return bin;
  const dir = join(bin, "..");
  const root = join(dir, "..");
  const key = dir.slice(root.length + 1);
  await mkdir(root, { recursive: true });
  await removeAbandonedTempDirs(root, key);
  const tmp = join(root, `.tmp-${key}-${process.pid}`);
  await rm(tmp, { recursive: true, force: true });
  await mkdir(tmp);
  try {
    const out = join(tmp, METRICS_NAME);
    const label = `metrics-server ${METRICS_SERVER_VERSION}`;
    await goBuildPackages({ dir: MODULE_DIR, packages: [METRICS_SERVER_MODULE], out, ldflags: LDFLAGS, label }, log);
    await rm(dir, { recursive: true, force: true });
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
  return bin;
}

/** Creates each object; one that exists already (a retried start) is left as it is. */
async function createAll(ep: ApiEndpoint, objects: { path: string; body: unknown }[]): Promise<void> {
  for (const o of objects) {
    const r = await apiRequest(ep, "POST", o.path, o.body);
    if (r.status !== 201 && r.status !== 409) {
      throw new Error(`creating ${o.path} for metrics-server: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
  }
}

async function serviceAccountToken(ep: ApiEndpoint): Promise<string> {
  const path = `/api/v1/namespaces/${METRICS_NAMESPACE}/serviceaccounts/${METRICS_NAME}/token`;
  const body = {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: TOKEN_SECONDS },
  };
  const r = await apiRequest(ep, "POST", path, body);
  const token: unknown = r.body?.status?.token;
  if (r.status !== 201 || typeof token !== "string") {
    throw new Error(`a token for metrics-server: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  }
  return token;
}

async function apiServiceAvailable(ep: ApiEndpoint): Promise<string | true> {
  const r = await apiRequest(ep, "GET", `/apis/apiregistration.k8s.io/v1/apiservices/${METRICS_APISERVICE}`);
  const conds: { type: string; status: string; message?: string }[] = r.body?.status?.conditions ?? [];
  const available = conds.find((c) => c.type === "Available");
  return available?.status === "True" ? true : (available?.message ?? `HTTP ${r.status}`);
}

export async function startMetricsServer(
  state: ClusterState,
  ep: ApiEndpoint,
  binary: string,
  log: Log,
  signal?: AbortSignal,
): Promise<void> {
  const network = state.network;
  if (!network) throw new Error("metrics-server runs in the cluster's network namespace, which this cluster lacks");
  const pki = paths.pki;
  const files = pkiFiles(pki);
  await signCert(pki, { cert: files.caCert, key: files.caKey }, METRICS_NAME, `/CN=${METRICS_SERVICE_HOST}`, [
    `subjectAltName=DNS:${METRICS_SERVICE_HOST},IP:${network.bridgeIp}`,
    "extendedKeyUsage=serverAuth",
  ]);
  const address = network.bridgeIp;
  await createAll(ep, metricsServerObjects({ address, port: METRICS_SERVER_PORT, caPem: ep.ca }));
  const kubeconfig = join(pki, `${METRICS_NAME}.kubeconfig`);
  const server = `https://127.0.0.1:${state.ports.apiServer}`; // the API server's port inside the namespace
  await Bun.write(kubeconfig, tokenKubeconfig({ server, caPem: ep.ca, token: await serviceAccountToken(ep) }));
  await chmod(kubeconfig, 0o600);

  const argv = metricsServerArgv({
    binary,
    address,
    port: METRICS_SERVER_PORT,
    kubeconfig,
    servingCert: join(pki, `${METRICS_NAME}.crt`),
    servingKey: join(pki, `${METRICS_NAME}.key`),
  });
  const log_ = logPath(METRICS_NAME);
  const pid = await startDetached(argv, log_, network.path);
  state.metricsServer = { pid, argv, log: log_, netns: network.path };
  await writeState(state);
  log(`started metrics-server (pid ${pid})`);
  let last: string | true = "not checked yet";
  await waitUntil(async () => {
    signal?.throwIfAborted();
    if (!isRunning(pid, argv[0] ?? "")) throw new Error("metrics-server exited during start-up");
    last = await apiServiceAvailable(ep);
    return last === true;
  }, AVAILABLE_TIMEOUT_MS).catch((err: Error) => {
    if (signal?.aborted) throw err;
    throw new Error(`the APIService ${METRICS_APISERVICE} is not Available (${last}): ${err.message} (see ${log_})`);
  });
  log(`metrics-server serves ${METRICS_APISERVICE}`);
}

export async function stopMetricsServer(state: ClusterState): Promise<number[]> {
  const rec = state.metricsServer;
  return rec ? stopProcesses([{ pid: rec.pid, argv: rec.argv }]) : [];
}
