/**
 * Which optional kinds of child (child-kinds.ts `wanted`: the PodDisruptionBudget, the Ingress, the
 * HorizontalPodAutoscaler) the cluster serves, asked once at start-up through discovery, and what a WebApp that
 * wants one the cluster does not serve is told.
 *
 * Properties:
 * - One GET of /apis/<group>/<version> per group-version of an optional kind (the Deployment and the Service are
 *   always served: apps/v1 and v1). A kind is served iff that answer lists its plural. A 404 is "not served"; any
 *   other failure stops the start (OperatorError from the caller): guessing would either crash-loop an informer or
 *   report a cluster wrong.
 * - A kind the cluster does not serve gets no informer (manager.ts gives it an empty, synced cache: nothing of that
 *   kind can exist), is never written, and a WebApp that wants one is Stalled with KindNotServed, naming the field
 *   that asks for it, the API and the Kubernetes version that serves it. Its other children converge as usual.
 * - A cluster upgraded under a running operator is seen on the operator's next start (as client-go's discovery
 *   caches do until a restart).
 */
import { isNotFound } from "../kube/errors.ts";
import { apiVersionOf } from "../kube/resources.ts";
import type { KubeClient } from "../kube/types.ts";
import { CHILD_KINDS, type ChildKind, type ChildKindName, isWanted } from "./child-kinds.ts";
import type { Problem } from "./status.ts";
import type { WebApp } from "../api/webapp.ts";

/** The optional kinds this cluster does not serve. */
export async function unservedKinds(client: KubeClient, signal?: AbortSignal): Promise<Set<ChildKindName>> {
  const optional = CHILD_KINDS.filter((k) => k.wanted !== undefined);
  const byGroupVersion = new Map<string, ChildKind[]>();
  for (const k of optional)
    byGroupVersion.set(apiVersionOf(k.rt), [...(byGroupVersion.get(apiVersionOf(k.rt)) ?? []), k]);
  const unserved = new Set<ChildKindName>();
  await Promise.all(
    [...byGroupVersion].map(async ([groupVersion, kinds]) => {
      const plurals = await servedPlurals(client, groupVersion, signal);
      for (const k of kinds) if (!plurals.has(k.rt.plural)) unserved.add(k.kind);
    }),
  );
  return unserved;
}

async function servedPlurals(client: KubeClient, groupVersion: string, signal?: AbortSignal): Promise<Set<string>> {
  try {
    const list = await client.raw<{ resources?: { name?: string }[] }>(
      "GET",
      `/apis/${groupVersion}`,
      undefined,
      undefined,
      signal,
    );
    return new Set((list.resources ?? []).map((r) => r.name ?? ""));
  } catch (e) {
    if (isNotFound(e)) return new Set();
    throw e;
  }
}

/** A Stalled problem for each kind the WebApp wants that the cluster does not serve. */
export function unservedProblems(webapp: WebApp, unserved: ReadonlySet<ChildKindName>): Problem[] {
  if (unserved.size === 0) return [];
  return CHILD_KINDS.filter((k) => unserved.has(k.kind) && isWanted(k, webapp.spec)).map((k) => ({
    reason: "KindNotServed",
    message:
      `${k.kind} ${k.name(webapp.metadata.name)} cannot be created: this cluster does not serve ${apiVersionOf(k.rt)} ` +
      `${k.rt.plural}${k.servedSince ? ` (Kubernetes serves them from ${k.servedSince})` : ""}, which ` +
      `${k.wantedBy ?? "the spec"} asks for; change the spec or upgrade the cluster, then restart the operator`,
  }));
}
