/**
 * Which events of a WebApp's children go ahead in the controller's queue (runtime/queue.ts priorities). Pure.
 *
 * URGENT for a pass that has news someone waits for: the child was deleted (it is created again), or a
 * Deployment's rollout finished or failed, or its availability changed (the WebApp turns Ready, or stops
 * being so). Every other child event (our own creates and applies coming back, the controller-manager's
 * progress in between) waits its turn with the WebApps' own events: such a pass writes nothing new, and
 * ahead of the queue it would delay the creates of new WebApps and split a rollout into a status write per step.
 */
import type { KubeObject } from "../kube/types.ts";
import { readDeployment, rolloutState } from "../readiness/deployment.ts";
import type { SourceEvent } from "../runtime/source.ts";

export const URGENT = 1;
/** Also the pass that writes the status of one that wrote a child (reconciler.ts): at the back of the queue. */
export const IN_TURN = 0;
/** Behind every event: the Service pass of a new WebApp, whose Deployment was created first (reconciler.ts). */
export const LATER = -1;

export function deploymentEventPriority(e: SourceEvent<KubeObject>): number {
  if (e.type === "delete") return URGENT;
  if (e.type !== "update" || !e.old) return IN_TURN;
  const [before, after] = [readDeployment(e.old), readDeployment(e.object)];
  if ((before.available ?? false) !== (after.available ?? false)) return URGENT;
  const outcome = rolloutState(after).kind;
  return outcome !== "progressing" && outcome !== rolloutState(before).kind ? URGENT : IN_TURN;
}

export function serviceEventPriority(e: SourceEvent<KubeObject>): number {
  return e.type === "delete" ? URGENT : IN_TURN;
}
