/**
 * Waiting for the operator's Deployment to roll out, the way `kubectl rollout status` judges it.
 *
 * Properties:
 * - Judged by readiness/deployment.ts (the port of kubectl rollout status the operator's status uses too):
 *   done only when the controller has seen the latest spec, every replica runs the new template, no old
 *   replica is left, and all updated replicas are available.
 * - waitForRollout() polls, reports a progress line whenever the state changes (and at least every
 *   PROGRESS_EVERY_MS while nothing changes), and fails early on ProgressDeadlineExceeded.
 * - On failure the error names the pods' waiting reasons (ImagePullBackOff, CrashLoopBackOff...) so the
 *   user sees why, not only that it timed out.
 */
import type { KubeClient, KubeObject } from "../kube/types.ts";
import { readDeployment, rolloutState } from "../readiness/deployment.ts";
import type { Clock } from "../runtime/clock.ts";
import { InstallError } from "./apply.ts";
import { DEPLOYMENTS, PODS } from "../kube/resources.ts";

export const POLL_MS = 1000;
export const PROGRESS_EVERY_MS = 10_000;

export interface DeploymentLike extends KubeObject {
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface WaitOptions {
  clock: Clock;
  timeoutMs: number;
  onProgress?: (line: string) => void;
  signal?: AbortSignal;
}

export async function waitForRollout(
  client: KubeClient,
  name: string,
  namespace: string,
  o: WaitOptions,
): Promise<string> {
  const started = o.clock.now();
  let lastLine = "";
  let lastAt = -Infinity;
  for (;;) {
    const d = await client.get<DeploymentLike>(DEPLOYMENTS, name, namespace, o.signal);
    const state = rolloutState(readDeployment(d));
    const elapsed = o.clock.now() - started;
    if (state.kind === "complete") return state.message;
    if (state.kind === "failed")
      throw new InstallError(
        `deployment ${namespace}/${name}: ${state.message}${await podProblems(client, d, o.signal)}`,
      );
    if (elapsed >= o.timeoutMs || o.signal?.aborted) {
      throw new InstallError(
        `deployment ${namespace}/${name} is not ready after ${Math.round(elapsed / 1000)} s: ` +
          `${state.message}${await podProblems(client, d, o.signal)}. ` +
          `Look at \`kubectl -n ${namespace} describe deployment ${name}\`, or wait longer with --timeout`,
      );
    }
    if (state.message !== lastLine || o.clock.now() - lastAt >= PROGRESS_EVERY_MS) {
      o.onProgress?.(`waiting for deployment ${namespace}/${name} (${Math.round(elapsed / 1000)}s): ${state.message}`);
      lastLine = state.message;
      lastAt = o.clock.now();
    }
    await o.clock.sleep(POLL_MS, o.signal);
  }
}

interface PodLike extends KubeObject {
  status?: {
    containerStatuses?: { state?: { waiting?: { reason?: string; message?: string } } }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

/** "; pod x: ImagePullBackOff (...)" for pods that are stuck, or "". Never throws. */
async function podProblems(client: KubeClient, d: DeploymentLike, signal?: AbortSignal): Promise<string> {
  const labels = d.spec?.selector?.matchLabels;
  if (!labels) return "";
  try {
    const pods = await client.list<PodLike>(PODS, {
      namespace: d.metadata.namespace,
      labelSelector: Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
      ...(signal ? { signal } : {}),
    });
    const problems = pods.items.flatMap((p) => {
      const waiting = p.status?.containerStatuses?.map((c) => c.state?.waiting).find((w) => w?.reason);
      if (waiting)
        return [`pod ${p.metadata.name}: ${waiting.reason}${waiting.message ? ` (${waiting.message})` : ""}`];
      const unscheduled = p.status?.conditions?.find((c) => c.type === "PodScheduled" && c.status === "False");
      return unscheduled
        ? [`pod ${p.metadata.name}: not scheduled (${unscheduled.message ?? unscheduled.reason})`]
        : [];
    });
    return problems.length ? `; ${problems.slice(0, 3).join("; ")}` : "";
  } catch {
    return "";
  }
}
