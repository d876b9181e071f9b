/**
 * `install --wait`: polls the operator's Deployment, its pods and the leader-election Lease until a
 * pod of this install leads, and fails fast on what waiting cannot fix.
 *
 * Properties:
 * - Done only when the rollout is complete (readiness/deployment.ts, kubectl's rules) and one of the Deployment's current
 *   pods holds the Lease (pods.ts decides; this module only reads and reports).
 * - Progress: each pod's line is reported when it changes; the overall line when it changes and at
 *   least every PROGRESS_EVERY_MS.
 * - Fails at once on a pull error or a crash loop (InstallError naming the image and the next step),
 *   on ProgressDeadlineExceeded, and at the timeout with the last state of every pod.
 * - A crash-looping pod's message carries its container's last log line (the previous container's
 *   log); a log that cannot be read is left out, never an error.
 */
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import { InstallError } from "./apply.ts";
import { OPERATOR_CONTAINER_NAME } from "./deployment.ts";
import { LEASE_NAME } from "./manifests.ts";
import { podLine, podState, waitVerdict, type PodLike, type PodState } from "./pods.ts";
import { readDeployment, rolloutState } from "../readiness/deployment.ts";
import { POLL_MS, PROGRESS_EVERY_MS, type DeploymentLike } from "./rollout.ts";
import { DEPLOYMENTS, LEASES, PODS } from "../kube/resources.ts";

/** Log lines are cut to this many characters in progress lines. */
const LOG_LINE_MAX = 240;

export interface OperatorWaitOptions {
  clock: Clock;
  timeoutMs: number;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
  /** The Lease's name (default: the one install configures). */
  leaseName?: string;
}

interface Lease extends KubeObject {
  spec?: { holderIdentity?: string };
}

/** Resolves with "… pod X holds the Lease" once a pod of this install leads. */
export async function waitForOperator(
  client: KubeClient,
  name: string,
  namespace: string,
  o: OperatorWaitOptions,
): Promise<string> {
  const started = o.clock.now();
  const lastPodLine = new Map<string, string>();
  let lastLine = "";
  let lastAt = -Infinity;
  for (;;) {
    const d = await client.get<DeploymentLike>(DEPLOYMENTS, name, namespace, o.signal);
    const pods = await withLastLogs(client, namespace, await readPods(client, d, o.signal), o.signal);
    const holder = await readHolder(client, namespace, o.leaseName ?? LEASE_NAME, o.signal);
    const verdict = waitVerdict({ namespace, rollout: rolloutState(readDeployment(d)), pods, holder });
    for (const p of pods) {
      const line = podLine(p);
      if (lastPodLine.get(p.pod) !== line) o.onProgress?.(`  ${line}`);
      lastPodLine.set(p.pod, line);
    }
    if (verdict.kind === "leading") return verdict.message;
    if (verdict.kind === "failed") throw new InstallError(`deployment ${namespace}/${name}: ${verdict.message}`);
    const elapsed = o.clock.now() - started;
    if (elapsed >= o.timeoutMs || o.signal?.aborted) {
      const states = pods.map(podLine).join("; ");
      throw new InstallError(
        `deployment ${namespace}/${name} is not leading after ${Math.round(elapsed / 1000)} s: ${verdict.message}` +
          `${states ? `; ${states}` : ""}. Look at \`kubectl -n ${namespace} describe pods\`, or wait longer with --timeout`,
      );
    }
    if (verdict.message !== lastLine || o.clock.now() - lastAt >= PROGRESS_EVERY_MS) {
      o.onProgress?.(
        `waiting for deployment ${namespace}/${name} (${Math.round(elapsed / 1000)}s): ${verdict.message}`,
      );
      lastLine = verdict.message;
      lastAt = o.clock.now();
    }
    await o.clock.sleep(POLL_MS, o.signal);
  }
}

async function readPods(client: KubeClient, d: DeploymentLike, signal?: AbortSignal): Promise<PodState[]> {
  const labels = d.spec?.selector?.matchLabels;
  if (!labels) return [];
  const list = await client.list<PodLike>(PODS, {
    namespace: d.metadata.namespace,
    labelSelector: Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(","),
    ...(signal ? { signal } : {}),
  });
  return list.items
    .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
    .map((p) => podState(p));
}

async function readHolder(
  client: KubeClient,
  namespace: string,
  leaseName: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  try {
    const lease = await client.get<Lease>(LEASES, leaseName, namespace, signal);
    return lease.spec?.holderIdentity || undefined;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

async function withLastLogs(
  client: KubeClient,
  namespace: string,
  pods: PodState[],
  signal?: AbortSignal,
): Promise<PodState[]> {
  return Promise.all(
    pods.map(async (p) => {
      if (p.kind !== "crash-looping") return p;
      const lastLog = await readLastLog(client, namespace, p.pod, signal);
      return lastLog ? { ...p, lastLog } : p;
    }),
  );
}

/** The last non-empty line of the previous container's log; undefined when it cannot be read. */
async function readLastLog(client: KubeClient, namespace: string, pod: string, signal?: AbortSignal) {
  const path =
    `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/log` +
    `?container=${OPERATOR_CONTAINER_NAME}&previous=true&tailLines=20`;
  try {
    return lastLine(String(await client.raw("GET", path, undefined, undefined, signal)));
  } catch {
    return undefined;
  }
}

export function lastLine(log: string): string | undefined {
  const line = log
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1);
  if (!line) return undefined;
  return line.length > LOG_LINE_MAX ? `${line.slice(0, LOG_LINE_MAX - 1)}…` : line;
}
