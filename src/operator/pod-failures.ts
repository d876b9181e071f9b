/**
 * The failures of the pods of a WebApp's Deployment, read on demand (no pod is cached) for a WebApp that is
 * not Ready: pods controlled by one of the Deployment's ReplicaSets. When none has failed but one runs unready behind
 * its probe (readiness/pods.ts unreadyContainer), the kubelet's Unhealthy events of the first such pod are read (one
 * more list, by field selector) to say which probe fails and what it got, if it failed once the container had run
 * for a while by the kubelet's clock (probeFailure). A failed read is logged and reads as no failure.
 */
import type { WebApp } from "../api/webapp.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import { EVENTS, PODS } from "../kube/resources.ts";
import type { Logger } from "../runtime/logger.ts";
import {
  type PodFailure,
  podFailure,
  probeFailure,
  type UnreadyContainer,
  unreadyContainer,
} from "../readiness/pods.ts";
import { deploymentName, webAppSelector } from "./desired.ts";

export async function podFailures(
  deps: { client: KubeClient; logger: Logger },
  webapp: WebApp,
  now: number,
  signal: AbortSignal,
): Promise<PodFailure[]> {
  const { name, namespace } = webapp.metadata;
  const prefix = `${deploymentName(name)}-`;
  try {
    const pods = await deps.client.list<KubeObject>(PODS, {
      namespace,
      labelSelector: webAppSelector(name),
      signal,
    });
    const ours = pods.items.filter((p) =>
      p.metadata.ownerReferences?.some((r) => r.controller && r.kind === "ReplicaSet" && r.name.startsWith(prefix)),
    );
    const failures = ours.flatMap((p) => podFailure(p, now) ?? []);
    if (failures.length > 0) return failures;
    const unready = ours
      .map((p) => ({ pod: p.metadata.name ?? "", container: unreadyContainer(p) }))
      .filter((u): u is { pod: string; container: UnreadyContainer } => u.container !== undefined)
      .sort((a, b) => a.pod.localeCompare(b.pod))[0];
    if (!unready) return [];
    const events = await deps.client.list<KubeObject>(EVENTS, {
      namespace,
      fieldSelector: `involvedObject.kind=Pod,involvedObject.name=${unready.pod},reason=Unhealthy`,
      signal,
    });
    const failure = probeFailure(unready.pod, unready.container, events.items);
    return failure ? [failure] : [];
  } catch (e) {
    if (signal.aborted) throw e;
    deps.logger.warn(`could not read the pods of WebApp ${namespace}/${name}: ${e instanceof Error ? e.message : e}`);
    return [];
  }
}
