/**
 * Whether a new WebApp's first status can wait. Pure.
 *
 * Until the operator writes a status, a WebApp reads with the CRD's default one (observedGeneration 0: kstatus
 * says InProgress, `kubectl wait --for=condition=Ready` waits). While its Deployment is younger than
 * FIRST_STATUS_WAIT_MS and nothing is wrong, a first status could only say "in progress", and most rollouts
 * replace it within seconds. So it waits: the first status written says Ready, or is whatever holds once the
 * Deployment is FIRST_STATUS_WAIT_MS old, or reports a problem at once. In a rollout that goes well this saves
 * a status write per new WebApp, and the passes of its Deployment's progress write nothing.
 * The wait counts towards the time a WebApp has not been Ready (firstRolloutStart), so that its pods are read
 * as soon after its creation as before.
 */
import { findCondition } from "../api/conditions.ts";
import type { WebAppStatus } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";

/** How old a new WebApp's Deployment may get before its first status is written, if it is not Ready sooner. */
export const FIRST_STATUS_WAIT_MS = 10_000;

/** When the rollout behind a first status began (its Deployment's creation); undefined if `stored` is ours. */
export function firstRolloutStart(
  stored: WebAppStatus | undefined,
  deployment: KubeObject | undefined,
): number | undefined {
  if ((stored?.conditions?.length ?? 0) > 0) return undefined; // every status we write has conditions
  const created = Date.parse(deployment?.metadata.creationTimestamp ?? "");
  return Number.isNaN(created) ? undefined : created;
}

/** How long the first status `next` can still wait (ms), or undefined when it is to be written now. */
export function firstStatusWait(
  stored: WebAppStatus | undefined,
  next: WebAppStatus,
  deployment: KubeObject | undefined,
  now: number,
): number | undefined {
  const start = firstRolloutStart(stored, deployment);
  if (start === undefined) return undefined;
  const on = (type: string) => findCondition(next.conditions, type)?.status === "True";
  if (on("Ready") || on("Stalled") || on("Degraded")) return undefined;
  const wait = start + FIRST_STATUS_WAIT_MS - now;
  return wait > 0 ? wait : undefined;
}
