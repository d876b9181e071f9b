/**
 * One pass over a WebApp's children, one of each kind of child-kinds.ts (converge.ts converges each): which go now,
 * what the pass remembers, and what it observed, for the reconciler to report on.
 *
 * Properties:
 * - A kind the WebApp's spec does not want (child-kinds.ts `wanted`: a PodDisruptionBudget below 2 replicas) is not
 *   created, and the one this WebApp controls is deleted (converge.ts removeChild); someone else's is left alone.
 * - Every child is converged at once, except for a new WebApp's (no status yet): when none of the wanted ones exists,
 *   the workload (the Deployment) is created alone and the pass ends as othersLater (the reconciler asks for a pass
 *   at LATER priority, which creates the others: the Service, the PodDisruptionBudget, the Ingress). In a burst
 *   every rollout (the slow part: the ReplicaSet, the pods, their readiness) starts before the others are created;
 *   on a quiet queue the second pass follows at once. A workload not created (someone else's object in the way, a
 *   refusal) has the others converged in the same pass, after it (unless the WebApp turned out gone).
 * - One Created event names what a pass created, sent by that pass: an announcement left to a later pass would be
 *   lost if that pass never comes (another leader takes over in between). A new WebApp's is sent by the pass that
 *   creates its workload and names the others as next; their pass announces nothing more, unless it is another
 *   leader's (which does not know).
 * - A cached child found carrying its intent is kept without its spec from then on (cache-shape.ts `verifiedChild`,
 *   swapped in for the same version; not the Deployment: child-kinds.ts `keepsSpec`), until the watch brings a
 *   newer one.
 * - A child is reported (`live`) only once the cache has shown it: one this pass created, or one only the memory
 *   of our write stands for, is `pending`, which the status reports as being created, never as existing.
 * - Remembers between passes in the reconciler's two memories (expectations.ts): the children it wrote until the
 *   cache shows them, so a pass that runs before the watch delivered them neither writes nor reads again (a NotFound
 *   or Conflict about one drops it, and the child is converged from the cache in the same pass); and, in the
 *   WebApp's record, when it created children for it, whether the API server said it is gone (the owner check
 *   below), and whether its other children were left to the next pass.
 * - The owner check: a cached WebApp may be gone from the API server (the cache lags). A creation for it is
 *   harmless (the garbage collector removes a child whose owner uid does not exist), but a loop is not: collected
 *   children reconcile the stale WebApp again, which would create them again. So a creation that may be a
 *   re-creation asks the API server (one GET, beside the create: converge.ts), and once the WebApp is found gone
 *   (ownerGone) nothing is created for its uid again: for a WebApp this process created children for within
 *   CREATED_TTL_MS, or one that has a status (reconciledBefore: a missing child was deleted, by someone or by the
 *   collector as the WebApp is gone). A new WebApp (no status, nothing created) creates without asking, and so
 *   does the pass after its workload's (the others' first creation). An adoption always asks first.
 */
import type { WebApp, WebAppObject } from "../api/webapp.ts";
import { WEBAPP_RESOURCE } from "../api/webapp.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import { sameVersion } from "../runtime/store.ts";
import type { Logger } from "../runtime/logger.ts";
import { type AdmittedField, withAdmitted } from "./admission.ts";
import { verifiedChild } from "./cache-shape.ts";
import { CHILD_KINDS, type ChildKind, type ChildKindName, isWanted, type PerKind } from "./child-kinds.ts";
import {
  announceCreated,
  type Child,
  type ChildOutcome,
  type ConvergeContext,
  contradicts,
  convergeAfresh,
  convergeChild,
  intentStamp,
  removeChild,
} from "./converge.ts";
import type { WebAppMemo, WebAppMemory, WrittenChildren } from "./expectations.ts";
import type { LiveChildren, Problem } from "./status.ts";

/** Read access to a cache by "namespace/name" (an Informer fits). */
export interface Cache<T> {
  get(key: string): T | undefined;
  /** Stores `replacement` in place of `current` (the same version), iff it is still cached (runtime/store.ts). */
  swap?(current: T, replacement: T): boolean;
}

export interface ChildrenDeps {
  client: KubeClient;
  /** Every child of its kind, by "namespace/name" (child-kinds.ts). */
  children: PerKind<Cache<KubeObject>>;
  /** The optional kinds the cluster does not serve (served.ts): never written, as if not wanted. */
  unserved?: ReadonlySet<ChildKindName>;
  recorder: EventRecorder;
  logger: Logger;
  /** Waits between the attempts of an ownership handover (converge.ts handOver). */
  clock: Pick<Clock, "sleep">;
}

/** What the passes remember between calls (expectations.ts; see the contract above). */
export interface ChildrenMemory {
  written: WrittenChildren;
  webapps: WebAppMemory;
}

export type Observed =
  | { kind: "ownerGone" }
  /** The workload of a new WebApp was created (and what admission made of it); the others are for the next pass. */
  | { kind: "othersLater"; admitted: AdmittedField[] }
  | {
      kind: "observed";
      /** The children the cache has shown, as last written or cached. */
      live: LiveChildren;
      /** Children written (or remembered) that the cache has not shown yet: reported as being created. */
      pending: Child["kind"][];
      /** What admission made of our writes (admission.ts), with this pass's writes in. */
      admitted: AdmittedField[];
      problems: Problem[];
      failure: unknown;
      /** A child was converged from what this process wrote, the cache showing nothing under its name. */
      unseen: boolean;
      /** This pass wrote a child (created, updated or adopted it). */
      wrote: boolean;
    };

/**
 * A child of this pass: its intent (none when the WebApp does not want one of its kind), what the cache has, and
 * what the pass goes by (the cache, or what we wrote).
 */
interface PassChild {
  kind: ChildKind;
  child: Child | undefined;
  key: string;
  cached: KubeObject | undefined;
  found: KubeObject | undefined;
}

/** The children converged (see the contract above); each outcome decided in one switch. */
export async function convergeChildren(
  deps: ChildrenDeps,
  memory: ChildrenMemory,
  webapp: WebApp,
  reconciledBefore: boolean,
  admitted: readonly AdmittedField[],
  signal: AbortSignal,
): Promise<Observed> {
  const uid = webapp.metadata.uid;
  const memo = memory.webapps.get(uid);
  if (memo.gone) return { kind: "ownerGone" }; // the cache still lags
  const children = CHILD_KINDS.map((k): PassChild => {
    const child: Child | undefined =
      isWanted(k, webapp.spec) && !deps.unserved?.has(k.kind)
        ? { kind: k.kind, rt: k.rt, desired: k.desired(webapp) }
        : undefined;
    const key = `${webapp.metadata.namespace}/${k.name(webapp.metadata.name)}`;
    const cached = deps.children[k.kind].get(key);
    return { kind: k, child, key, cached, found: memory.written.resolve(key, cached) };
  });
  const [workload, ...others] = children as [PassChild, ...PassChild[]];
  // Our workload there and the others left to this pass: their first creation, no re-creation.
  const othersFirst = memo.othersNext === true && !!workload.found;
  let ownerCheck: Promise<boolean> | undefined;
  const ctx: ConvergeContext = {
    ...deps,
    webapp,
    ownerExists: () => (ownerCheck ??= stillExists(deps.client, webapp, signal)),
    confirmOwner: reconciledBefore || uid === undefined || (memory.webapps.createdRecently(uid) && !othersFirst),
    admitted,
    signal,
  };
  const converge = async ({ kind, child, key, cached, found }: PassChild): Promise<ChildOutcome> => {
    if (!child) return removeChild(ctx, kind, found);
    const outcome = await convergeChild(ctx, child, found);
    if (
      outcome.kind === "converged" &&
      outcome.verified &&
      !kind.keepsSpec &&
      cached &&
      sameVersion(outcome.live, cached)
    )
      deps.children[kind.kind].swap?.(cached, verifiedChild(cached, intentStamp(child, ctx.admitted)));
    if (outcome.kind !== "failed" || !contradicts(outcome.error)) return outcome;
    // What we remembered writing is gone or was re-created (the chaos soak's app-031): with nothing cached, created
    // (a create that finds one converges it); what the cache showed is behind: read afresh.
    if (memory.written.contradicted(key, outcome.error) && !cached) return convergeChild(ctx, child, undefined);
    return convergeAfresh(ctx, child);
  };
  let outcomes: ChildOutcome[];
  let later = false;
  if (!reconciledBefore && uid !== undefined && children.every((c) => !c.child || !c.found)) {
    const first = await converge(workload);
    later = first.kind === "converged" && first.wrote === "created";
    outcomes = later || first.kind === "ownerGone" ? [first] : [first, ...(await Promise.all(others.map(converge)))];
  } else outcomes = await Promise.all(children.map(converge));
  return decide(ctx, memory, memo, children, outcomes, later);
}

/** What the outcomes (in the order of children, maybe fewer) come to, remembered and announced; memo: as the pass began. */
function decide(
  ctx: ConvergeContext,
  memory: ChildrenMemory,
  memo: Readonly<WebAppMemo>,
  children: readonly PassChild[],
  outcomes: readonly ChildOutcome[],
  othersLater: boolean,
): Observed {
  const uid = ctx.webapp.metadata.uid;
  const unseen = children.some((c) => c.cached === undefined && c.found !== undefined);
  const wrote = outcomes.some(
    (o) => (o.kind === "converged" && o.wrote !== undefined) || (o.kind === "unwanted" && o.removed),
  );
  const observed: Observed = {
    kind: "observed",
    live: {},
    pending: [],
    admitted: [...ctx.admitted],
    problems: [],
    failure: undefined,
    unseen,
    wrote,
  };
  const created: Child[] = [];
  let ownerGone = false;
  for (const [i, outcome] of outcomes.entries()) {
    const { kind, child, key, cached } = children[i] as PassChild;
    switch (outcome.kind) {
      case "unwanted":
        break;
      case "converged":
        if (!child) break;
        if (cached && outcome.wrote !== "created") observed.live[child.kind] = outcome.live;
        else observed.pending.push(child.kind);
        if (outcome.wrote) memory.written.remember(key, outcome.live, outcome.wrote === "created", kind.statusRead);
        if (outcome.wrote === "created") created.push(child);
        if (outcome.admitted) observed.admitted = withAdmitted(observed.admitted, child.kind, outcome.admitted);
        break;
      case "blocked":
        observed.problems.push(outcome.problem);
        break;
      case "failed":
        observed.problems.push(outcome.problem);
        observed.failure ??= outcome.error;
        break;
      case "ownerGone":
        ownerGone = true;
        break;
    }
  }
  // A new WebApp's other children, left to the next pass, are announced with its workload, as next: one event for
  // all, sent now. That pass does not announce them again, unless it does not know (another leader runs it).
  const announced = memo.othersNext === true;
  const workload = (children[0] as PassChild).child;
  const next = othersLater ? children.slice(1).flatMap((c) => c.child ?? []) : [];
  announceCreated(ctx, announced ? created.filter((c) => c === workload) : created, next);
  if (created.length > 0) memory.webapps.created(uid);
  memory.webapps.set(uid, ownerGone ? { gone: true } : { othersNext: othersLater || undefined });
  if (ownerGone) return { kind: "ownerGone" };
  return othersLater ? { kind: "othersLater", admitted: observed.admitted } : observed;
}

/** The API server still has this WebApp: same uid, not being deleted. One GET, before an adoption or a re-creation. */
async function stillExists(client: KubeClient, webapp: WebAppObject, signal: AbortSignal): Promise<boolean> {
  const { name, namespace, uid } = webapp.metadata;
  try {
    const live = await client.get<KubeObject>(WEBAPP_RESOURCE, name as string, namespace, signal);
    return live.metadata.uid === uid && !live.metadata.deletionTimestamp;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}
