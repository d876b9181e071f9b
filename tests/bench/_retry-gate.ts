/**
 * Waits out the controller-manager's retry backlog before a measurement.
 *
 * Why: client-go's default controller rate limiter, which kube-controller-manager's controllers use, keeps one token
 * bucket (10 a second, burst 100) for the retries of all keys, beside each key's own backoff; every rate-limited
 * re-queue takes a token, from the future when the bucket is empty. A burst of sync errors therefore leaves a backlog
 * that any key failing later waits behind. Making a fixture costs about one error per Deployment (the Deployment
 * controller's status write conflicts with the writes that made it), and a trial's re-created Deployment whose first
 * sync failed (its old ReplicaSet's name taken, then gone) was then left alone for two minutes (BENCHMARKS.md, heal).
 *
 * How: a probe Deployment (0 replicas) in a namespace of its own, whose ReplicaSets a ResourceQuota refuses, so its
 * first sync fails and is re-queued rate-limited. The API server's quota admission enforces what the quota's status
 * says, which the controller-manager's quota controller writes (behind a backlog of its own after a fixture): the
 * probe is made only once that status is there. A gate that did not wait saw the probe's ReplicaSet made and waited
 * for a failure that never came (in a heal run of 2026-12-07; most likely also the two timeouts of the
 * 2026-12-06T20:53Z full run). Once the failure shows, as the Deployment's Progressing condition (reason
 * ReplicaSetCreateError) or as the controller's Warning Event of that reason (recorded even when the condition's
 * write fails), the quota goes; nothing else syncs the probe again, so its ReplicaSet appears at its retry, after
 * every retry queued before it. Every step may wait behind the controller-manager's queues, so each has the whole
 * limit. Resolves with the time from the quota's removal to the ReplicaSet (ms); rejects, naming the step, when a step
 * takes longer than its limit, or at once when the quota did not refuse the ReplicaSet. The namespace is deleted in
 * every case.
 */
import { EVENTS } from "../../src/kube/resources.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../src/kube/types.ts";
import {
  createNamespace,
  DEPLOYMENT_RESOURCE,
  NAMESPACES,
  NO_REPLICA_SETS,
  noReplicaSets,
  RESOURCE_QUOTAS,
  until,
} from "./_kube.ts";

const REPLICA_SETS: ResourceType = {
  group: "apps",
  version: "v1",
  plural: "replicasets",
  kind: "ReplicaSet",
  namespaced: true,
};
/** The Deployment controller's reason for a ReplicaSet it could not create (its condition's and its Event's). */
const CREATE_ERROR = "ReplicaSetCreateError";
/** The longest backlog waited out: 3,000 queued retries at 10 a second. */
export const BACKLOG_LIMIT_MS = 300_000;

export async function waitOutRetryBacklog(kube: KubeClient, limitMs = BACKLOG_LIMIT_MS): Promise<number> {
  const namespace = await createNamespace(kube, "retry-gate");
  try {
    await noReplicaSets(kube, namespace, limitMs);
    const labels = { app: "retry-gate" };
    await kube.create(DEPLOYMENT_RESOURCE, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "probe", namespace },
      spec: {
        replicas: 0,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: "probe", image: "retry-gate:none" }] } },
      },
    });
    await until(limitMs, "the probe Deployment's first sync to fail on the quota", async () => {
      if ((await kube.list(REPLICA_SETS, { namespace })).items.length > 0)
        throw new Error("the quota did not refuse the probe's ReplicaSet: nothing to wait for");
      const d = await kube.get<KubeObject>(DEPLOYMENT_RESOURCE, "probe", namespace);
      const status = d.status as { conditions?: { reason?: string }[] } | undefined;
      if ((status?.conditions ?? []).some((c) => c.reason === CREATE_ERROR)) return true;
      const events = await kube.list<KubeObject & { reason?: string }>(EVENTS, { namespace });
      return events.items.some((e) => e.reason === CREATE_ERROR);
    });
    await kube.delete(RESOURCE_QUOTAS, NO_REPLICA_SETS, namespace);
    const t0 = performance.now();
    await until(limitMs, "the probe's retry (the controller-manager's retry backlog)", async () => {
      const sets = await kube.list(REPLICA_SETS, { namespace });
      return sets.items.length > 0;
    });
    return performance.now() - t0;
  } finally {
    await kube.delete(NAMESPACES, namespace).catch(() => undefined);
  }
}
