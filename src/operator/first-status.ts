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

/**
 * When the rollout behind a first status began: its Deployment's creation. Undefined when the WebApp was
 * reconciled before (it has a status of ours) or the Deployment's creation time is unknown.
 */
export function firstRolloutStart(reconciledBefore: boolean, deployment: KubeObject | undefined): number | undefined {
  if (reconciledBefore) return undefined;
  const created = Date.parse(deployment?.metadata.creationTimestamp ?? "");
  return Number.isNaN(created) ? undefined : created;
}

/**
 * How long the first status `next`, of a rollout begun at `start` (firstRolloutStart), can still wait (ms), or
 * undefined when it is to be written now.
 */
export function firstStatusWait(start: number | undefined, next: WebAppStatus, now: number): number | undefined {
  if (start === undefined) return undefined;
  const on = (type: string) => findCondition(next.conditions, type)?.status === "True";
  if (on("Ready") || on("Stalled") || on("Degraded")) return undefined;
  const wait = start + FIRST_STATUS_WAIT_MS - now;
  return wait > 0 ? wait : undefined;
}
