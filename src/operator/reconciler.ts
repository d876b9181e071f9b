/**
 * The WebApp reconciler: level-based, reading from the informer caches, writing only what changed.
 *
 * Order (sample-controller's): read the WebApp from the cache (gone: done, the garbage collector
 * removes children); validate the spec (invalid: Degraded/InvalidSpec, no retry: a fix is an update
 * event); for the Deployment, then the Service: a same-named object this WebApp does not control is
 * never touched (Degraded/ResourceExists, looked at again after RECHECK_MS); a missing one is looked
 * up and then created by server-side apply without force (so someone else's object is never adopted,
 * and every field we set is pruned when the spec drops it); one whose owned fields differ
 * is server-side applied with our field manager, force, and the uid we compared against as a
 * precondition (an object replaced meanwhile makes it a Conflict and a retry, never a blind overwrite); status is written
 * last and only when it changed; each write is announced by one Normal event. A child that cannot be
 * written (forbidden, rejected, API error) is reported in the status (Degraded: Forbidden/ApplyFailed,
 * with the API server's message) before the error goes to the controller to retry with backoff.
 * A child controlled by a previous WebApp of the same name (deleted and created again while the garbage
 * collector was not watching, which then never collects it) is taken over by a JSON patch of its owner
 * reference (adopt.ts), once a GET confirms this WebApp is the live one.
 * A child is created only for a WebApp the API server still has (same uid, not being deleted): the cache
 * may lag behind it (a watch re-listing after a 410 or an outage), and children created for a WebApp
 * deleted meanwhile would be deleted by the garbage collector, whose delete events would reconcile the
 * stale WebApp again — a create/delete hot loop until the cache catches up. One GET, only on creation.
 *
 * Properties: unchanged objects cost zero writes (diff.ts compares owned fields only); an exception
 * is the controller's to retry with backoff; no state is kept between calls.
 */
import type { WebApp, WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { formatIssues, parseWebApp } from "../api/parse.ts";
import { findCondition } from "../api/conditions.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import type { Clock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { Logger } from "../runtime/logger.ts";
import { done, requeueAfter, type Outcome, type Reconciler, type Request } from "../runtime/reconcile.ts";
import { deploymentName, desiredDeployment, desiredService, serviceName } from "./desired.ts";
import { adoptionPatch, previousIncarnation } from "./adopt.ts";
import { isControlledBy, needsApply } from "./diff.ts";
import { computeStatus, resourceExistsProblem, statusEqual, type Problem } from "./status.ts";

export const FIELD_MANAGER = "webapp-operator";
/** How soon a WebApp blocked by someone else's object looks again (that object is not watched). */
export const RECHECK_MS = 60_000;

export const REASON = {
  created: "Created",
  updated: "Updated",
  scaled: "Scaled",
  resourceExists: "ResourceExists",
  adopted: "Adopted",
  invalidSpec: "InvalidSpec",
} as const;

/** Read access to a cache by "namespace/name" (an Informer fits). */
export interface Cache<T> {
  get(key: string): T | undefined;
}

export interface ReconcilerDeps {
  client: KubeClient;
  webapps: Cache<WebAppObject>;
  deployments: Cache<KubeObject>;
  services: Cache<KubeObject>;
  recorder: EventRecorder;
  clock: Clock;
  logger: Logger;
}

type Child = { kind: "Deployment" | "Service"; rt: ResourceType; desired: KubeObject };
/** What converging one child came to. */
type ChildOutcome = { live: KubeObject } | { blocked: Problem } | { ownerGone: true };

export function createWebAppReconciler(deps: ReconcilerDeps): Reconciler {
  const { client, recorder, logger } = deps;

  /** The API server still has this WebApp: same uid, not being deleted. */
  async function stillExists(webapp: WebAppObject, signal: AbortSignal): Promise<boolean> {
    const { name, namespace, uid } = webapp.metadata;
    try {
      const live = await client.get<KubeObject>(WEBAPP_RESOURCE, name as string, namespace, signal);
      return live.metadata.uid === uid && !live.metadata.deletionTimestamp;
    } catch (e) {
      if (isNotFound(e)) return false;
      throw e;
    }
  }

  /**
   * A child this WebApp does not control: taken over when its controller is a previous WebApp of the
   * same name (adopt.ts) and the API server confirms this WebApp is the live one; else reported.
   */
  async function adoptOrBlock(
    webapp: WebApp,
    child: Child,
    live: KubeObject,
    ownerExists: () => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<{ live: KubeObject } | { blocked: Problem }> {
    if (!previousIncarnation(live, webapp) || !(await ownerExists()))
      return { blocked: resourceExistsProblem(child.kind, live) };
    // The cached copy may lag (adopted already, or replaced): decide on the live object.
    const { name, namespace } = live.metadata as { name: string; namespace: string };
    const fresh = await client.get<KubeObject>(child.rt, name, namespace, signal);
    if (isControlledBy(fresh, webapp)) return { live: fresh };
    const previous = previousIncarnation(fresh, webapp);
    if (!previous) return { blocked: resourceExistsProblem(child.kind, fresh) };
    const adopted = await client.patch<KubeObject>(child.rt, name, namespace, adoptionPatch(fresh, webapp), "json", {
      fieldManager: FIELD_MANAGER,
      signal,
    });
    logger.info(
      `adopted ${child.kind} ${namespace}/${name} from a deleted WebApp of the same name (uid ${previous.uid})`,
    );
    recorder.event(
      webapp,
      "Normal",
      REASON.adopted,
      `${child.kind} ${name} adopted from a deleted WebApp of the same name (uid ${previous.uid})`,
    );
    return { live: adopted };
  }

  async function converge(
    webapp: WebApp,
    child: Child,
    cached: KubeObject | undefined,
    ownerExists: () => Promise<boolean>,
    signal: AbortSignal,
  ): Promise<ChildOutcome> {
    const { name, namespace } = child.desired.metadata as { name: string; namespace: string };
    let live = cached;
    if (live && !isControlledBy(live, webapp)) {
      const taken = await adoptOrBlock(webapp, child, live, ownerExists, signal);
      if ("blocked" in taken) return taken;
      live = taken.live;
    }
    if (!live) {
      // Not in our cache (which holds only objects labelled as ours): look before creating, so that
      // someone else's object of that name is reported, never adopted.
      live = await client.get<KubeObject>(child.rt, name, namespace, signal).catch((e) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
      if (live && !isControlledBy(live, webapp)) {
        const taken = await adoptOrBlock(webapp, child, live, ownerExists, signal);
        if ("blocked" in taken) return taken;
        live = taken.live;
      }
      if (!live) {
        if (!(await ownerExists())) return { ownerGone: true };
        // Created by server-side apply, so that every field is owned by our Apply entry and a field
        // dropped from the intent later is pruned. Without force: an object that appeared since the
        // GET conflicts instead of being taken over, and the retry reports it.
        const created = await client.apply<KubeObject>(child.rt, child.desired, {
          fieldManager: FIELD_MANAGER,
          signal,
        });
        logger.info(`created ${child.kind} ${namespace}/${name}`);
        recorder.event(
          webapp,
          "Normal",
          REASON.created,
          `${child.kind} ${name} created${describeSpec(webapp, child.kind)}`,
        );
        return { live: created };
      }
    }
    const check = needsApply(child.desired, live);
    if (!check.changed) return { live };
    // The uid is a precondition: if the object was replaced since we looked, the apply fails instead of
    // landing on someone else's object. (resourceVersion would also fail on every status update.)
    const intent = { ...child.desired, metadata: { ...child.desired.metadata, uid: live.metadata.uid } };
    const applied = await client.apply<KubeObject>(child.rt, intent, {
      fieldManager: FIELD_MANAGER,
      force: true,
      signal,
    });
    logger.info(`updated ${child.kind} ${namespace}/${name}`, { fields: check.fields });
    if (check.fields.length === 1 && check.fields[0] === "spec.replicas") {
      recorder.event(
        webapp,
        "Normal",
        REASON.scaled,
        `${child.kind} ${name} updated to ${webapp.spec.replicas} replicas`,
      );
    } else {
      recorder.event(webapp, "Normal", REASON.updated, `${child.kind} ${name} updated (${check.fields.join(", ")})`);
    }
    return { live: applied };
  }

  async function writeStatus(webapp: WebAppObject, status: WebAppStatus, signal: AbortSignal): Promise<void> {
    if (statusEqual(webapp.status, status)) return;
    const { name, namespace } = webapp.metadata;
    try {
      await client.patch(WEBAPP_RESOURCE, name as string, namespace, { status }, "merge", {
        subresource: "status",
        fieldManager: FIELD_MANAGER,
        signal,
      });
    } catch (e) {
      if (isNotFound(e)) return; // deleted meanwhile: nothing left to report on
      throw e;
    }
    const before = findCondition(webapp.status?.conditions, "Degraded");
    const after = findCondition(status.conditions, "Degraded");
    if (after?.status === "True" && (before?.status !== "True" || before.message !== after.message)) {
      recorder.event(webapp, "Warning", after.reason, after.message);
      logger.warn(`WebApp ${namespace}/${name} is degraded: ${after.message}`);
    }
  }

  return async function reconcile(req: Request, signal: AbortSignal): Promise<Outcome> {
    const webapp = deps.webapps.get(req.key);
    if (!webapp || webapp.metadata.deletionTimestamp) return done();
    const name = webapp.metadata.name as string;
    const namespace = webapp.metadata.namespace as string;
    const depKey = `${namespace}/${deploymentName(name)}`;
    const svcKey = `${namespace}/${serviceName(name)}`;

    const parsed = parseWebApp(webapp);
    if (!parsed.ok) {
      logger.debug(`WebApp ${req.key} has an invalid spec: ${formatIssues(parsed.issues).replaceAll("\n", "; ")}`);
      const own = (o: KubeObject | undefined) => (o && isControlledBy(o, webapp) ? o : undefined);
      const status = computeStatus(
        webapp,
        own(deps.deployments.get(depKey)),
        own(deps.services.get(svcKey)),
        [],
        deps.clock.now(),
      );
      await writeStatus(webapp, status, signal);
      return done();
    }

    const problems: Problem[] = [];
    let failure: unknown;
    let ownerCheck: Promise<boolean> | undefined;
    const ownerExists = () => (ownerCheck ??= stillExists(webapp, signal));
    let ownerGone = false;
    /** Converges one child; a failure becomes a problem in the status, then the reconcile is retried. */
    const attempt = async (child: Child, cached: KubeObject | undefined): Promise<KubeObject | undefined> => {
      try {
        const outcome = await converge(parsed.webapp, child, cached, ownerExists, signal);
        if ("live" in outcome) return outcome.live;
        if ("ownerGone" in outcome) ownerGone = true;
        else problems.push(outcome.blocked);
      } catch (e) {
        if (signal.aborted) throw e;
        failure ??= e;
        problems.push(failedProblem(child, e));
      }
      return undefined;
    };
    const dep = await attempt(
      { kind: "Deployment", rt: DEPLOYMENT_RESOURCE, desired: desiredDeployment(parsed.webapp) },
      deps.deployments.get(depKey),
    );
    const svc = ownerGone
      ? undefined
      : await attempt(
          { kind: "Service", rt: SERVICE_RESOURCE, desired: desiredService(parsed.webapp) },
          deps.services.get(svcKey),
        );
    if (ownerGone) {
      // Its delete (or the new incarnation) reaches the cache as an event, which reconciles it again.
      logger.debug(
        `WebApp ${req.key} is cached but gone from the API server (the cache lags behind it): not creating its children`,
      );
      return done();
    }
    await writeStatus(webapp, computeStatus(webapp, dep, svc, problems, deps.clock.now()), signal);
    if (failure) throw failure;
    return problems.length > 0 ? requeueAfter(RECHECK_MS) : done();
  };
}

function failedProblem(child: Child, e: unknown): Problem {
  const what = `${child.kind} ${child.desired.metadata.name}`;
  const message = e instanceof Error ? e.message : String(e);
  return isForbidden(e)
    ? { reason: "Forbidden", message: `the operator may not manage ${what}: ${message}` }
    : { reason: "ApplyFailed", message: `could not create or update ${what}: ${message}` };
}

function describeSpec(webapp: WebApp, kind: Child["kind"]): string {
  return kind === "Deployment"
    ? ` with ${webapp.spec.replicas} replicas of ${webapp.spec.image}`
    : ` (port 80 -> ${webapp.spec.port})`;
}
