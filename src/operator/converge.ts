/**
 * Converges one child of a WebApp (its Deployment or Service) towards the intent of desired.ts, and says
 * what that came to as a ChildOutcome value.
 *
 * Properties:
 * - Never adopts or writes someone else's object: a same-named object this WebApp does not control is
 *   reported (blocked), unless it is the child of a previous WebApp of the same name (adopt.ts).
 * - Every field we set is ours by server-side apply (FIELD_MANAGER), so a field dropped from the intent is pruned.
 * - An unchanged child costs no write (diff.ts compares owned fields only).
 * - A failed write is an outcome (failed, with the problem to report), not an exception; only an abort throws.
 */
import type { WebApp } from "../api/webapp.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { adoptionPatch, previousIncarnation } from "./adopt.ts";
import { isControlledBy, needsApply } from "./diff.ts";
import { type Problem, resourceExistsProblem } from "./status.ts";

export const FIELD_MANAGER = "webapp-operator";

/** Reasons of the Normal events announcing each write. */
export const REASON = {
  created: "Created",
  updated: "Updated",
  scaled: "Scaled",
  adopted: "Adopted",
} as const;

export type Child = { kind: "Deployment" | "Service"; rt: ResourceType; desired: KubeObject };

/** What converging one child came to; the reconciler decides on it in one switch. */
export type ChildOutcome =
  /** The child is ours and carries the intent; `live` is the object as the API server last returned it. */
  | { kind: "converged"; live: KubeObject }
  /** Someone else's object has the child's name; nothing was written. */
  | { kind: "blocked"; problem: Problem }
  /** A read or write failed (forbidden, rejected, API error): reported, then retried with backoff. */
  | { kind: "failed"; problem: Problem; error: unknown }
  /** The WebApp is gone from the API server (the cache lags): nothing was created. */
  | { kind: "ownerGone" };

/** What converging a child needs: the API, the announcers, the WebApp and its liveness check. */
export interface ConvergeContext {
  client: KubeClient;
  recorder: EventRecorder;
  logger: Logger;
  webapp: WebApp;
  /** The API server still has this WebApp (same uid, not being deleted); asked only before a create or an adoption. */
  ownerExists: () => Promise<boolean>;
  signal: AbortSignal;
}

export async function convergeChild(
  ctx: ConvergeContext,
  child: Child,
  cached: KubeObject | undefined,
): Promise<ChildOutcome> {
  try {
    // Our cache holds only objects labelled as ours: look before creating, so that someone else's
    // object of that name is reported, never adopted.
    const found = cached ?? (await getOrUndefined(ctx, child));
    if (!found) return await create(ctx, child);
    const owned = isControlledBy(found, ctx.webapp)
      ? ({ kind: "converged", live: found } as const)
      : await adoptOrBlock(ctx, child, found);
    return owned.kind === "converged" ? await update(ctx, child, owned.live) : owned;
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return { kind: "failed", problem: failedProblem(child, e), error: e };
  }
}

async function getOrUndefined(ctx: ConvergeContext, child: Child): Promise<KubeObject | undefined> {
  const { name, namespace } = child.desired.metadata as { name: string; namespace: string };
  try {
    return await ctx.client.get<KubeObject>(child.rt, name, namespace, ctx.signal);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * Created only for a WebApp the API server still has: the cache may lag (a re-list after a 410 or an
 * outage), and children of a WebApp deleted meanwhile would be collected, whose delete events would
 * reconcile the stale WebApp again — a create/delete loop until the cache catches up.
 * By server-side apply, so every field is owned by our Apply entry and a field dropped from the intent
 * later is pruned; without force, so an object that appeared since the GET conflicts instead of being
 * taken over, and the retry reports it.
 */
async function create(ctx: ConvergeContext, child: Child): Promise<ChildOutcome> {
  if (!(await ctx.ownerExists())) return { kind: "ownerGone" };
  const { name, namespace } = child.desired.metadata;
  const created = await ctx.client.apply<KubeObject>(child.rt, child.desired, {
    fieldManager: FIELD_MANAGER,
    signal: ctx.signal,
  });
  ctx.logger.info(`created ${child.kind} ${namespace}/${name}`);
  ctx.recorder.event(
    ctx.webapp,
    "Normal",
    REASON.created,
    `${child.kind} ${name} created${describeSpec(ctx.webapp, child)}`,
  );
  return { kind: "converged", live: created };
}

/**
 * A child this WebApp does not control: taken over when its controller is a previous WebApp of the same
 * name (deleted and created again while the garbage collector was not watching, adopt.ts) and the API
 * server confirms this WebApp is the live one; else blocked. Decided on a fresh GET, as the cache may lag.
 */
async function adoptOrBlock(ctx: ConvergeContext, child: Child, found: KubeObject): Promise<ChildOutcome> {
  const { webapp, client } = ctx;
  if (!previousIncarnation(found, webapp) || !(await ctx.ownerExists()))
    return { kind: "blocked", problem: resourceExistsProblem(child.kind, found) };
  const { name, namespace } = found.metadata as { name: string; namespace: string };
  const fresh = await client.get<KubeObject>(child.rt, name, namespace, ctx.signal);
  if (isControlledBy(fresh, webapp)) return { kind: "converged", live: fresh };
  const previous = previousIncarnation(fresh, webapp);
  if (!previous) return { kind: "blocked", problem: resourceExistsProblem(child.kind, fresh) };
  const patch = adoptionPatch(fresh, webapp);
  const adopted = await client.patch<KubeObject>(child.rt, name, namespace, patch, "json", {
    fieldManager: FIELD_MANAGER,
    signal: ctx.signal,
  });
  const why = `from a deleted WebApp of the same name (uid ${previous.uid})`;
  ctx.logger.info(`adopted ${child.kind} ${namespace}/${name} ${why}`);
  ctx.recorder.event(webapp, "Normal", REASON.adopted, `${child.kind} ${name} adopted ${why}`);
  return { kind: "converged", live: adopted };
}

/**
 * Server-side applied with force when owned fields differ, with the uid we compared against as a
 * precondition: an object replaced since we looked fails (a Conflict and a retry) instead of being
 * overwritten. (resourceVersion would also fail on every status update of the child.)
 */
async function update(ctx: ConvergeContext, child: Child, live: KubeObject): Promise<ChildOutcome> {
  const check = needsApply(child.desired, live);
  if (!check.changed) return { kind: "converged", live };
  const { name, namespace } = child.desired.metadata;
  const intent = { ...child.desired, metadata: { ...child.desired.metadata, uid: live.metadata.uid } };
  const applied = await ctx.client.apply<KubeObject>(child.rt, intent, {
    fieldManager: FIELD_MANAGER,
    force: true,
    signal: ctx.signal,
  });
  ctx.logger.info(`updated ${child.kind} ${namespace}/${name}`, { fields: check.fields });
  if (check.fields.length === 1 && check.fields[0] === "spec.replicas") {
    const message = `${child.kind} ${name} updated to ${ctx.webapp.spec.replicas} replicas`;
    ctx.recorder.event(ctx.webapp, "Normal", REASON.scaled, message);
  } else {
    const message = `${child.kind} ${name} updated (${check.fields.join(", ")})`;
    ctx.recorder.event(ctx.webapp, "Normal", REASON.updated, message);
  }
  return { kind: "converged", live: applied };
}

function failedProblem(child: Child, e: unknown): Problem {
  const what = `${child.kind} ${child.desired.metadata.name}`;
  const message = e instanceof Error ? e.message : String(e);
  return isForbidden(e)
    ? { reason: "Forbidden", message: `the operator may not manage ${what}: ${message}` }
    : { reason: "ApplyFailed", message: `could not create or update ${what}: ${message}` };
}

function describeSpec(webapp: WebApp, child: Child): string {
  return child.kind === "Deployment"
    ? ` with ${webapp.spec.replicas} replicas of ${webapp.spec.image}`
    : ` (port 80 -> ${webapp.spec.port})`;
}
