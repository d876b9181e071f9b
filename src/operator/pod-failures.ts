/**
 * The failures of the pods of a WebApp's Deployment, read on demand (no pod is cached) for a WebApp that is
 * not Ready: pods controlled by one of the Deployment's ReplicaSets. A failed read is logged and reads as no
 * failure.
 */
import type { WebApp } from "../api/webapp.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import { PODS } from "../kube/resources.ts";
import type { Logger } from "../runtime/logger.ts";
import { type PodFailure, podFailure } from "../readiness/pods.ts";
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
    return pods.items
      .filter((p) =>
        p.metadata.ownerReferences?.some((r) => r.controller && r.kind === "ReplicaSet" && r.name.startsWith(prefix)),
      )
      .flatMap((p) => podFailure(p, now) ?? []);
  } catch (e) {
    if (signal.aborted) throw e;
    deps.logger.warn(`could not read the pods of WebApp ${namespace}/${name}: ${e instanceof Error ? e.message : e}`);
    return [];
  }
}
