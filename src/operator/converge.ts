/**
 * Converges one child of a WebApp (its Deployment or Service) towards the intent of desired.ts, and says
 * what that came to as a ChildOutcome value.
 *
 * Properties:
 * - Decides from the cache, which once synced holds every Deployment and Service of the namespace (someone
 *   else's stripped to metadata): no object there means none exists, and the child is created without a GET.
 * - Never adopts or writes someone else's object: a same-named object this WebApp does not control is
 *   reported (blocked), unless it is the child of a previous WebApp of the same name (adopt.ts). One the
 *   cache does not show (yet) makes the create fail (a create never writes an existing object: 409
 *   AlreadyExists); it is then read and decided on.
 * - Every field we set is ours (FIELD_MANAGER): created by POST, updated by server-side apply, the create's
 *   ownership handed over to apply before an apply could drop a field (ownership.ts), so a dropped field is pruned.
 * - An unchanged child costs no write (diff.ts compares owned fields only), and neither does a field admission
 *   stored otherwise on our own last write (admission.ts): a write returns what admission made of it, recorded.
 * - One the cache keeps verified (cache-shape.ts: without its spec, stamped with the intent it was found carrying)
 *   is not compared again while the intent's stamp is the same (intentStamp); under another one it is read whole
 *   (one GET) and compared as any. A comparison that finds nothing to write says so (`verified`).
 * - An autoscaled Deployment's replica count is the autoscaler's: created at its minimum, then left out of the
 *   intent, and keepReplicas makes sure our apply cannot reset it (REPLICAS_KEEPER).
 * - A failed write is an outcome (failed, with the problem to report), not an exception; only an abort throws.
 * - Announces updates, scales and adoptions itself; creations are announced by the caller, one event for
 *   all the children created in one pass (announceCreated).
 * - A child of a kind the WebApp no longer wants (removeChild) is deleted when this WebApp controls it, with its uid
 *   and resourceVersion as preconditions (an object changed or replaced since is looked at again by the pass its
 *   newer version brings, never deleted blind); someone else's object of that name is left alone, and so is a
 *   missing one.
 */
import { fixedReplicas, leastReplicas, type WebApp } from "../api/webapp.ts";
import { isConflict, isForbidden, isInvalid, isNotFound, KubeError, messageOf } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ObjectMeta, ResourceType } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { type AdmittedField, admittedBy, drift } from "./admission.ts";
import { verifiedStamp } from "./cache-shape.ts";
import { type ChildKind, type ChildKindName, kindOf } from "./child-kinds.ts";
import { adoptionPatch, previousIncarnation } from "./adopt.ts";
import { isControlledBy, needsApply, reshapes } from "./diff.ts";
import { managerEntries, mayHaveCreateEntry, ownershipHandover, showsCreateEntry } from "./ownership.ts";
import { type Problem, resourceExistsProblem } from "./status.ts";

export const FIELD_MANAGER = "webapp-operator";

/** Reasons of the Normal events announcing each write. */
export const REASON = {
  created: "Created",
  updated: "Updated",
  scaled: "Scaled",
  adopted: "Adopted",
  deleted: "Deleted",
} as const;

export type Child = { kind: ChildKindName; rt: ResourceType; desired: KubeObject };

/** What was written to converge a child, if anything. */
export type Wrote = "created" | "updated" | "adopted";

type Converged = Extract<ChildOutcome, { kind: "converged" }>;

/** What converging one child came to; the reconciler decides on it in one switch. */
export type ChildOutcome =
  /**
   * The child is ours and carries the intent; `live` is the object as the API server last returned it. A create
   * or apply says what admission made of it (`admitted`, possibly none), which replaces this kind's records.
   * `verified`: nothing was written because `live` was compared with the intent and carries it, so the cache may
   * keep it without its spec (cache-shape.ts verifiedChild), stamped with the intent's intentStamp.
   */
  | { kind: "converged"; live: KubeObject; wrote?: Wrote; admitted?: AdmittedField[]; verified?: true }
  /** Someone else's object has the child's name; nothing was written. */
  | { kind: "blocked"; problem: Problem }
  /** A read or write failed (forbidden, rejected, API error): reported, then retried with backoff. */
  | { kind: "failed"; problem: Problem; error: unknown }
  /** The WebApp is gone from the API server (the cache lags): nothing was created. */
  | { kind: "ownerGone" }
  /** The WebApp wants no child of this kind: it has none of ours (any more); `removed` when this pass deleted it. */
  | { kind: "unwanted"; removed: boolean };

/** What converging a child needs: the API, the announcers, the WebApp and its liveness check. */
export interface ConvergeContext {
  client: KubeClient;
  recorder: EventRecorder;
  logger: Logger;
  /** Waits between the attempts of an ownership handover (handOver). */
  clock: Pick<Clock, "sleep">;
  webapp: WebApp;
  /** The API server still has this WebApp (same uid, not being deleted); asked before an adoption. */
  ownerExists: () => Promise<boolean>;
  /** Ask ownerExists beside a create too (the reconciler says when: a creation that may be a re-creation). */
  confirmOwner: boolean;
  /** What admission made of our last writes of this WebApp's children (admission.ts): not drift. */
  admitted: readonly AdmittedField[];
  signal: AbortSignal;
}

export async function convergeChild(
  ctx: ConvergeContext,
  child: Child,
  cached: KubeObject | undefined,
): Promise<ChildOutcome> {
  try {
    if (!cached) return await create(ctx, child);
    return await converge(ctx, child, cached);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return { kind: "failed", problem: failedProblem(child, e), error: e };
  }
}

/**
 * The API server contradicted the object a pass went by (`contradicts`): 404, the child was deleted since; an apply
 * that named its uid answered 409 ("uid mismatch": none there) or 422 on metadata.uid ("field is immutable": another
 * one there), so it was deleted or created again since. Either way the cache (or the memory of a write) is behind: a
 * watch that lags, e.g. waiting out its backoff before re-listing after an API server restart.
 * `convergeAfresh` converges once more from what the API server has now, read whole (one GET), or creates the
 * child when it has none. Before, the pass failed, said Degraded and backed off until the watch caught up: 767 passes
 * failed so in one 10-minute chaos soak (2026-12-07).
 */
export function contradicts(error: unknown): boolean {
  if (!(error instanceof KubeError)) return false;
  if (error.code === 404 || error.code === 409) return true; // as answered, not as re-read
  return error.code === 422 && (error.status?.details?.causes ?? []).some((c) => c.field === "metadata.uid");
}

export async function convergeAfresh(ctx: ConvergeContext, child: Child): Promise<ChildOutcome> {
  let fresh: KubeObject | undefined;
  try {
    fresh = await getOrUndefined(ctx, child);
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    return { kind: "failed", problem: failedProblem(child, e), error: e };
  }
  return convergeChild(ctx, child, fresh);
}

/**
 * An existing object of the child's name: updated if it is ours (or adopted), else blocked. One the cache keeps
 * verified (cache-shape.ts) is converged as it is when its stamp is this intent's, and read whole when not.
 */
async function converge(ctx: ConvergeContext, child: Child, cached: KubeObject): Promise<ChildOutcome> {
  const kept = verifiedStamp(cached);
  let found = cached;
  if (kept !== undefined && isControlledBy(cached, ctx.webapp)) {
    if (kept === intentStamp(child, ctx.admitted)) return { kind: "converged", live: cached };
    const fresh = await getOrUndefined(ctx, child);
    if (!fresh) return create(ctx, child); // deleted since the cache showed it: its event is on the way
    found = fresh;
  }
  const owned = isControlledBy(found, ctx.webapp)
    ? ({ kind: "converged", live: found } as const)
    : await adoptOrBlock(ctx, child, found);
  if (owned.kind !== "converged") return owned;
  const updated = await update(ctx, child, owned.live);
  if (updated.wrote) return updated;
  return updated.verified ? { ...owned, verified: true } : owned;
}

/**
 * What a comparison of a child with its intent depends on besides the child: the intent, and the admission records
 * of its kind (drift() takes what they explain for no difference). Equal stamps, equal verdicts on one version.
 */
export function intentStamp(child: Child, admitted: readonly AdmittedField[]): number {
  const own = admitted.filter((a) => a.kind === child.kind);
  const text = own.length === 0 ? JSON.stringify(child.desired) : JSON.stringify([child.desired, own]);
  return Number(BigInt.asUintN(53, BigInt(Bun.hash(text)))); // a number, kept unboxed: a bigint is a heap cell
}

/**
 * Created by a plain create (POST), which the API server serves at about half the CPU of a server-side apply of
 * a new object (ownership.ts has the figures); its fields are recorded under an Update entry of our field
 * manager, handed over to apply before the first apply that could drop one (update below). A create never
 * writes an existing object: one the cache does not show yet (appeared since, or a cache that lags) fails
 * with 409 AlreadyExists. A refused create (409, 422, 5xx; not 403) reads the name once: an object found
 * there is decided on as any existing one (reported when it is someone else's), else the refusal is the
 * problem. When ctx.confirmOwner, the owner check runs beside the create (see ownerChecked).
 */
async function create(ctx: ConvergeContext, child: Child): Promise<ChildOutcome> {
  return ctx.confirmOwner ? ownerChecked(ctx, createOrDecide(ctx, child)) : createOrDecide(ctx, child);
}

/**
 * A re-creation (ctx.confirmOwner, see reconciler.ts) asks the API server whether the WebApp is still there
 * while its create is in flight, so that it costs one round trip, as a first creation does. When the WebApp
 * turns out gone the outcome is ownerGone whatever the create did: a child it made names an owner uid that
 * does not exist, which the garbage collector removes, and the reconciler remembers the uid so that it
 * creates nothing for it again. The create is always awaited, so no write outlives the pass.
 */
async function ownerChecked(ctx: ConvergeContext, creating: Promise<ChildOutcome>): Promise<ChildOutcome> {
  const [exists, created] = await Promise.allSettled([ctx.ownerExists(), creating]);
  if (exists.status === "rejected") throw exists.reason;
  if (!exists.value) return { kind: "ownerGone" };
  if (created.status === "rejected") throw created.reason;
  return created.value;
}

async function createOrDecide(ctx: ConvergeContext, child: Child): Promise<ChildOutcome> {
  const { name, namespace } = child.desired.metadata as { name: string; namespace: string };
  let created: KubeObject;
  try {
    created = await ctx.client.create<KubeObject>(child.rt, withMinimumReplicas(ctx, child), {
      fieldManager: FIELD_MANAGER,
      signal: ctx.signal,
    });
  } catch (e) {
    // Refused (it exists, an immutable selector, a server error): is an object there?
    if (ctx.signal.aborted || isForbidden(e)) throw e;
    const found = await getOrUndefined(ctx, child).catch(() => undefined);
    if (!found) throw e; // none (or unreadable): the refusal is the problem, retried
    return await converge(ctx, child, found);
  }
  ctx.logger.info(`created ${child.kind} ${namespace}/${name}`, { uid: created.metadata.uid });
  const admitted = admittedBy(child.kind, needsApply(child.desired, created));
  return { kind: "converged", live: created, wrote: "created", admitted };
}

/**
 * One Normal event for the children created in one pass: "Deployment x created ...; Service y created ...", and
 * the children the next pass creates, if any: "...; Service y next".
 */
export function announceCreated(
  ctx: Pick<ConvergeContext, "recorder" | "webapp">,
  created: readonly Child[],
  next: readonly Child[] = [],
): void {
  if (created.length === 0) return;
  const told = (c: Child, what: string) => `${c.kind} ${c.desired.metadata.name} ${what}${describe(ctx.webapp, c)}`;
  const message = [...created.map((c) => told(c, "created")), ...next.map((c) => told(c, "next"))];
  ctx.recorder.event(ctx.webapp, "Normal", REASON.created, message.join("; "));
}

/** A child of a kind the WebApp does not want: deleted if this WebApp controls it (see the module doc). */
export async function removeChild(
  ctx: ConvergeContext,
  kind: ChildKind,
  found: KubeObject | undefined,
): Promise<ChildOutcome> {
  if (!found || !isControlledBy(found, ctx.webapp)) return { kind: "unwanted", removed: false };
  const { name, namespace, uid, resourceVersion } = found.metadata as ObjectMeta & { name: string };
  const what = `${kind.kind} ${namespace}/${name}`;
  try {
    await ctx.client.delete(kind.rt, name, namespace, { preconditions: { uid, resourceVersion }, signal: ctx.signal });
  } catch (e) {
    if (ctx.signal.aborted) throw e;
    // Gone already; or changed since the cache showed it (a PodDisruptionBudget's status moves with every pod): the
    // watch brings the newer object, whose pass looks again. Neither is a problem to report.
    if (isNotFound(e) || isConflict(e)) return { kind: "unwanted", removed: false };
    const message = messageOf(e);
    const problem: Problem = isForbidden(e)
      ? { reason: "Forbidden", message: `the operator may not delete ${what}: ${message}` }
      : { reason: "ApplyFailed", message: `could not delete ${what}, which the spec no longer asks for: ${message}` };
    return { kind: "failed", problem, error: e };
  }
  ctx.logger.info(`deleted ${what}: the spec no longer asks for one`, { uid });
  const why = kind.unwantedBecause?.(ctx.webapp.spec) ?? "the spec no longer asks for one";
  ctx.recorder.event(ctx.webapp, "Normal", REASON.deleted, `${kind.kind} ${name} deleted: ${why}`);
  return { kind: "unwanted", removed: true };
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
 * A child this WebApp does not control: taken over when its controller is a previous WebApp of the same
 * name (deleted and created again while the garbage collector was not watching, adopt.ts) and the API
 * server confirms this WebApp is the live one; else blocked. Decided on a fresh GET, as the cache may lag.
 */
async function adoptOrBlock(ctx: ConvergeContext, child: Child, found: KubeObject): Promise<ChildOutcome> {
  const { webapp, client } = ctx;
  if (!previousIncarnation(found, webapp) || !(await ctx.ownerExists()))
    return { kind: "blocked", problem: resourceExistsProblem(child.kind, found) };
  const { name, namespace } = found.metadata as { name: string; namespace: string };
  const fresh = await getOrUndefined(ctx, child);
  // Gone since the cache showed it: the garbage collector deleted the previous WebApp's child, its event is on the
  // way (a watch that lags after an API server restart: the chaos soak's app-013 was Degraded for 6 s before).
  if (!fresh) return create(ctx, child);
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
  return { kind: "converged", live: adopted, wrote: "adopted" };
}

/**
 * Server-side applied with force when owned fields differ, with the uid we compared against as a
 * precondition: an object replaced since we looked fails (a Conflict and a retry) instead of being
 * overwritten. (resourceVersion would also fail on every status update of the child.) An apply that reshapes
 * a child we created first hands the create's Update entry over to apply (ownership.ts), so what it drops
 * (the old port) is pruned; values changed in place need no handover.
 *
 * A list item beside the intent's (another port, diff.ts `extra`) on a child that still shows that Update entry
 * may be a field of ours no apply could prune: the entry is handed over and the intent applied, which prunes it if
 * it is ours and leaves it if it is someone else's. Either way the entry is gone afterwards, so this costs one read
 * and two writes once. (The chaos soak's app-036 kept its old port 8080 beside 80 that way: a second Update entry
 * of ours, which ownership.ts now hands over too, had hidden the create's. This heals children an earlier
 * version left so, and any other way such a leftover arises.)
 */
async function update(ctx: ConvergeContext, child: Child, live: KubeObject): Promise<Converged> {
  const check = needsApply(child.desired, live);
  const changes = drift(child.kind, check, ctx.admitted);
  const changed = changes.length > 0;
  const leftover = check.extra > 0 && showsCreateEntry(live, FIELD_MANAGER);
  if (!changed && !leftover) return { kind: "converged", live, verified: true };
  const handedOver = reshapes(changes) || leftover ? await handOver(ctx, child, live) : false;
  if (!changed && !handedOver) return { kind: "converged", live };
  await keepReplicas(ctx, child, live);
  const intent = { ...child.desired, metadata: { ...child.desired.metadata, uid: live.metadata.uid } };
  const applied = await ctx.client.apply<KubeObject>(child.rt, intent, {
    fieldManager: FIELD_MANAGER,
    force: true,
    signal: ctx.signal,
  });
  const returned = needsApply(child.desired, applied);
  ctx.logger.debug(`${childRef(child)}: applied over drift`, { drift: changes, admitted: ctx.admitted });
  if (changed)
    announceUpdate(
      ctx,
      child,
      applied,
      changes.map((d) => d.path),
    );
  else if (returned.extra < check.extra) announceUpdate(ctx, child, applied, [PRUNED]);
  else ctx.logger.debug(`${childRef(child)}: the list items beside the intent are someone else's, kept`);
  return { kind: "converged", live: applied, wrote: "updated", admitted: admittedBy(child.kind, returned) };
}

/**
 * The field manager that holds an autoscaled Deployment's spec.replicas for the autoscaler (never ours to write).
 * Server-side apply removes a field its manager owned and the intent dropped when no other manager owns it: the
 * Deployment would fall back to 1 replica. So before our first apply without replicas, this manager applies the
 * count the Deployment has (the Kubernetes documentation's ownership transfer to an autoscaler): the field then has
 * an owner besides us, which keeps it as the autoscaler changes it.
 */
export const REPLICAS_KEEPER = `${FIELD_MANAGER}-replicas-keeper`;

/**
 * What creates a child: its intent, but an autoscaled Deployment starts at spec.autoscaling.minReplicas (the intent
 * leaves the count out, and the API server would default it to 1 until the autoscaler's first sync; a cluster whose
 * autoscaler is not running would stay there). The count is ours until the autoscaler changes it (keepReplicas).
 */
function withMinimumReplicas(ctx: ConvergeContext, child: Child): KubeObject {
  const spec = child.desired.spec as { replicas?: number } | undefined;
  if (child.kind !== "Deployment" || !spec || spec.replicas !== undefined) return child.desired;
  return { ...child.desired, spec: { replicas: leastReplicas(ctx.webapp.spec), ...spec } };
}

/**
 * Before an apply of a Deployment intent without spec.replicas (spec.autoscaling): the count it runs is kept by
 * REPLICAS_KEEPER. Once per Deployment: the cache shows that manager's entry afterwards. Not forced: a conflict means
 * another manager (the autoscaler) holds another count than the cache showed, which keeps the field as well.
 */
async function keepReplicas(ctx: ConvergeContext, child: Child, live: KubeObject): Promise<void> {
  const replicas = (live.spec as { replicas?: unknown } | undefined)?.replicas;
  if (child.kind !== "Deployment" || (child.desired.spec as { replicas?: number }).replicas !== undefined) return;
  if (typeof replicas !== "number" || managerEntries(live).some((e) => e.manager === REPLICAS_KEEPER)) return;
  const { name, namespace } = child.desired.metadata as { name: string; namespace: string };
  const keeper = { apiVersion: child.desired.apiVersion, kind: child.desired.kind, spec: { replicas } };
  try {
    await ctx.client.apply(
      child.rt,
      { ...keeper, metadata: { name, namespace, uid: live.metadata.uid } },
      {
        fieldManager: REPLICAS_KEEPER,
        signal: ctx.signal,
      },
    );
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  ctx.logger.debug(`${childRef(child)}: ${replicas} replicas kept for the autoscaler by ${REPLICAS_KEEPER}`);
}

/** What an apply that only pruned our leftovers is logged and announced as. */
const PRUNED = "fields our create set that the intent no longer has";

/** How log lines name a child: "Deployment team-a/web-deployment". */
const childRef = (child: Child): string =>
  `${child.kind} ${child.desired.metadata.namespace}/${child.desired.metadata.name}`;

/** The log line and the Normal event of an apply: Scaled when only spec.replicas changed, else Updated. */
function announceUpdate(ctx: ConvergeContext, child: Child, applied: KubeObject, fields: string[]): void {
  ctx.logger.info(`updated ${childRef(child)}`, { fields, uid: applied.metadata.uid });
  const name = child.desired.metadata.name;
  if (fields.length === 1 && fields[0] === "spec.replicas") {
    const message = `${child.kind} ${name} updated to ${fixedReplicas(ctx.webapp.spec)} replicas`;
    ctx.recorder.event(ctx.webapp, "Normal", REASON.scaled, message);
  } else {
    const message = `${child.kind} ${name} updated (${fields.join(", ")})`;
    ctx.recorder.event(ctx.webapp, "Normal", REASON.updated, message);
  }
}

/**
 * The ownership handover (ownership.ts) of a child about to be reshaped, when the cached view may hold the Update
 * entry a create recorded (it shows it, or shows no managedFields at all). The handover is computed from the object
 * read fresh (the cache keeps no field sets), and its patch tests that object's resourceVersion: a write in between
 * (the Deployment controller's status, someone's edit) gets a 422, and the object is read and handed over again,
 * after HANDOVER_WAIT_MS, doubled each time. Reshaping is rare (a port changed), so the read costs nothing where it
 * counts. Says whether anything was handed over (the object read may have no Update entry of ours).
 *
 * A 422 whose object did not change (same resourceVersion at the next read) was not our test failing: it is
 * thrown as it came. One that kept changing through HANDOVER_ATTEMPTS reads is a Conflict, retried by the controller.
 * (Three attempts back to back were not enough: a CI run had all three refused while a Deployment just given a new
 * template rolled out, its controller writing the status in a burst, and the reconcile logged an error.)
 */
async function handOver(ctx: ConvergeContext, child: Child, cached: KubeObject): Promise<boolean> {
  if (!mayHaveCreateEntry(cached, FIELD_MANAGER)) return false;
  const { name, namespace } = child.desired.metadata as { name: string; namespace: string };
  const what = childRef(child);
  let refused: { error: KubeError; resourceVersion: string | undefined } | undefined;
  for (let attempt = 1; ; attempt++) {
    const fresh = await ctx.client.get<KubeObject>(child.rt, name, namespace, ctx.signal);
    if (refused && refused.resourceVersion === fresh.metadata.resourceVersion) throw refused.error; // not our test
    if (refused && attempt > HANDOVER_ATTEMPTS) {
      const message = `${what} changed between each of our ${HANDOVER_ATTEMPTS} reads and the handover that tested it`;
      // Code and Status stay the API server's (a 422): only the reason says what this caller learnt the 422 meant.
      throw new KubeError("Conflict", message, refused.error.code, refused.error.status, { cause: refused.error });
    }
    const patch = ownershipHandover(fresh, FIELD_MANAGER);
    if (!patch) {
      ctx.logger.debug(`nothing to hand over on ${what}: it has no Update entry of ours`, { uid: fresh.metadata.uid });
      return false;
    }
    try {
      await ctx.client.patch(child.rt, name, namespace, patch, "json", { signal: ctx.signal, discardResponse: true });
    } catch (e) {
      if (!(e instanceof KubeError) || !isInvalid(e)) throw e;
      refused = { error: e, resourceVersion: fresh.metadata.resourceVersion };
      ctx.logger.debug(`${what} changed since we read it: handing over again`, { attempt });
      if (attempt < HANDOVER_ATTEMPTS) await ctx.clock.sleep(HANDOVER_WAIT_MS * 2 ** (attempt - 1), ctx.signal);
      if (ctx.signal.aborted) throw e;
      continue;
    }
    ctx.logger.debug(`handed the fields our create of ${what} set over to apply`, { uid: fresh.metadata.uid });
    return true;
  }
}

/** Reads and patches of one handover before a changing object makes it a Conflict (retried by the controller). */
const HANDOVER_ATTEMPTS = 5;
/** The wait after the first refused handover; doubled after each next one (50 + 100 + 200 + 400 ms at most). */
const HANDOVER_WAIT_MS = 50;

function failedProblem(child: Child, e: unknown): Problem {
  const what = `${child.kind} ${child.desired.metadata.name}`;
  const message = messageOf(e);
  return isForbidden(e)
    ? { reason: "Forbidden", message: `the operator may not manage ${what}: ${message}` }
    : { reason: "ApplyFailed", message: `could not create or update ${what}: ${message}` };
}

/** How the Created event describes a child (child-kinds.ts). */
const describe = (webapp: WebApp, child: Child): string => kindOf(child)?.describe(webapp) ?? "";
