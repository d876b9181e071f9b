import { rolloutChanges } from "./webapp-metrics.ts";
import { describe, expect, test } from "bun:test";
import {
  DEPLOYMENT_RESOURCE,
  INGRESS_RESOURCE,
  POD_DISRUPTION_BUDGET_RESOURCE,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
  type WebApp,
  type WebAppObject,
} from "../api/webapp.ts";
import { findCondition } from "../api/conditions.ts";
import { KubeError } from "../kube/errors.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import { type Clock, createFakeClock } from "../runtime/clock.ts";
import type { EventRecorder, EventType } from "../runtime/events.ts";
import { done, requeue, requeueAfter, requestFor, type Outcome } from "../runtime/reconcile.ts";
import { ServerTime, serverTimeClock } from "../runtime/server-time.ts";
import { createFakeApiServer, type Action } from "./_fake-apiserver.ts";
import { testApp } from "./_test-fixtures.ts";
import { IN_TURN, LATER } from "./child-priority.ts";
import { verifiedStamp } from "./cache-shape.ts";
import { CHILD_KINDS, type ChildKind, type ChildKindName, kindOf, perKind } from "./child-kinds.ts";
import { desiredDeployment, desiredPodDisruptionBudget, desiredService, wantsDisruptionBudget } from "./desired.ts";
import { CREATED_TTL_MS, WRITTEN_TTL_MS } from "./expectations.ts";
import type { ManagerEntry } from "./ownership.ts";
import { createWebAppReconciler, NOT_READY_RECHECK_MS, POD_CHECK_AFTER_MS, RECHECK_MS } from "./reconciler.ts";
import { computeStatus, podProblems } from "./status.ts";

const START = Date.UTC(2024, 4, 1, 12, 0, 0);
const KEY = "default/test-app";
const APP_PATH = "/apis/apps.example.com/v1/namespaces/default/webapps/test-app";
const DEP_PATH = "/apis/apps/v1/namespaces/default/deployments/test-app-deployment";
const SVC_PATH = "/api/v1/namespaces/default/services/test-app-svc";
/** Where creates are POSTed (the collections). */
const DEPS = "/apis/apps/v1/namespaces/default/deployments";
const SVCS = "/api/v1/namespaces/default/services";
const PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
const JSON_BODY = "application/json";
const APPLY = "application/apply-patch+yaml";
const MERGE = "application/merge-patch+json";
const FIELD_MANAGER = "webapp-operator";

interface RecordedEvent {
  on: string;
  type: EventType;
  reason: string;
  message: string;
}

/** A cache as a Map that swaps, as the informers' stores do (runtime/store.ts): verified children go without spec. */
class SwappingMap extends Map<string, KubeObject> {
  swap(current: KubeObject, replacement: KubeObject): boolean {
    const key = `${current.metadata.namespace}/${current.metadata.name}`;
    if (this.get(key) !== current || current.metadata.resourceVersion !== replacement.metadata.resourceVersion)
      return false;
    this.set(key, replacement);
    return true;
  }
}

/**
 * The reconciler over an in-memory API server (real REST client), caches that are plain Maps (what
 * the informers would hold), a fake clock, a recording event recorder and a silent logger.
 */
function world(
  opts: {
    wrap?: (client: KubeClient) => KubeClient;
    unserved?: ReadonlySet<ChildKindName>;
    autoRollback?: boolean;
  } = {},
) {
  const clock = createFakeClock(START);
  const api = createFakeApiServer("default", () => clock.now());
  const webapps = new Map<string, WebAppObject>();
  const caches = perKind(() => new SwappingMap());
  const ingressClasses = new Map<string, KubeObject>();
  const { Deployment: deployments, Service: services, PodDisruptionBudget: budgets } = caches;
  const events: RecordedEvent[] = [];
  const recorder: EventRecorder = {
    event: (obj, type, reason, message) =>
      void events.push({ on: `${obj.kind}/${obj.metadata.name}`, type, reason, message }),
    flush: async () => {},
  };
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const rollbacks: string[] = [];
  const start = (reconcilerClock: Clock = clock) =>
    createWebAppReconciler({
      client: opts.wrap ? opts.wrap(api.client) : api.client,
      webapps,
      children: caches,
      ingressClasses,
      ...(opts.unserved ? { unserved: opts.unserved } : {}),
      recorder,
      clock: reconcilerClock,
      logger: silent,
      ...(opts.autoRollback ? { autoRollback: true } : {}),
      reported: (app, written) => {
        for (const _ of rolloutChanges(app.status, written).rolledBack) rollbacks.push(app.metadata.name ?? "");
      },
    });
  let reconciler = start();
  const keyOf = (o: { metadata: KubeObject["metadata"] }) => `${o.metadata.namespace}/${o.metadata.name}`;
  return {
    /** A new process (or a new leader) over the same API server and caches: nothing remembered. Its own clock if given. */
    restart(reconcilerClock?: Clock): void {
      reconciler = start(reconcilerClock);
    },
    api,
    clock,
    webapps,
    deployments,
    services,
    budgets,
    ingressClasses,
    events,
    /** The WebApps each rollback was counted for (the metric), in order. */
    rollbacks,
    /** A WebApp the API server has and the cache holds. */
    stored(app: WebAppObject): WebAppObject {
      const live = api.put(WEBAPP_RESOURCE, app);
      webapps.set(keyOf(live), live);
      return live;
    },
    /** A child the API server has and the cache holds. */
    cached(obj: KubeObject): KubeObject {
      const kind = kindOf(obj) as ChildKind;
      const live = api.put(kind.rt, obj);
      caches[kind.kind].set(keyOf(live), live);
      return live;
    },
    /** The informer catching up with the API server for the WebApp. */
    resync(): void {
      const live = api.object(WEBAPP_RESOURCE, "default", "test-app");
      if (live) webapps.set(KEY, live as WebAppObject);
    },
    /** The two passes of a new WebApp: its Deployment, then (asked for at LATER priority) its Service. */
    async created(): Promise<Outcome> {
      expect(await this.reconcile()).toEqual(requeue(LATER));
      return this.reconcile();
    },
    /** One pass; `superseded` says whether the key was queued again meanwhile (the controller knows). */
    reconcile: (superseded = false): Promise<Outcome> =>
      reconciler(
        requestFor(KEY, () => superseded),
        new AbortController().signal,
      ),
    /** The watch delivering a child's event: the cache changes, and the reconciler is told (observeChild). */
    watched(type: "add" | "update" | "delete", obj: KubeObject): void {
      const cache = caches[(kindOf(obj) as ChildKind).kind];
      if (type === "delete") cache.delete(keyOf(obj));
      else cache.set(keyOf(obj), obj);
      reconciler.observeChild({ type, object: obj });
    },
    /** The informers catching up with the API server for every child. */
    childrenCached(): void {
      for (const k of CHILD_KINDS) {
        const [cache, name] = [caches[k.kind], k.name("test-app")];
        const live = api.object(k.rt, "default", name);
        if (live) cache.set(`default/${name}`, live);
        else cache.delete(`default/${name}`);
      }
    },
    writes: (): Action[] => api.actions.filter((a) => a.method !== "GET"),
    statusWrites: (): Action[] => api.actions.filter((a) => a.path === `${APP_PATH}/status`),
  };
}

/** The Deployment as the API server returns it: the intent plus defaults, metadata and a rolled-out status. */
function liveDeployment(app: WebApp, replicas = app.spec.replicas): KubeObject {
  const intent = desiredDeployment(app);
  const [container] = intent.spec.template.spec.containers;
  return {
    ...intent,
    metadata: {
      ...intent.metadata,
      uid: "uid-dep",
      resourceVersion: "501",
      generation: 4,
      annotations: { "deployment.kubernetes.io/revision": "1" },
    },
    spec: {
      ...intent.spec,
      replicas,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: "25%", maxSurge: "25%" } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      template: {
        metadata: { ...intent.spec.template.metadata, creationTimestamp: null },
        spec: {
          containers: [
            {
              ...container,
              imagePullPolicy: "IfNotPresent",
              terminationMessagePath: "/dev/termination-log",
              terminationMessagePolicy: "File",
              resources: {},
            },
          ],
          restartPolicy: "Always",
          terminationGracePeriodSeconds: 30,
          dnsPolicy: "ClusterFirst",
          securityContext: {},
          schedulerName: "default-scheduler",
        },
      },
    },
    status: {
      observedGeneration: 4,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: replicas,
      availableReplicas: replicas,
      conditions: [
        {
          type: "Available",
          status: "True",
          reason: "MinimumReplicasAvailable",
          message: "Deployment has minimum availability.",
        },
        {
          type: "Progressing",
          status: "True",
          reason: "NewReplicaSetAvailable",
          message: "ReplicaSet has successfully progressed.",
        },
      ],
    },
  };
}

/** The Service as the API server returns it: the intent plus defaults. */
function liveService(app: WebApp): KubeObject {
  const intent = desiredService(app);
  return {
    ...intent,
    metadata: { ...intent.metadata, uid: "uid-svc", resourceVersion: "502" },
    spec: {
      ...intent.spec,
      type: "ClusterIP",
      clusterIP: "10.96.12.34",
      clusterIPs: ["10.96.12.34"],
      sessionAffinity: "None",
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
    },
    status: { loadBalancer: {} },
  };
}

/** A WebApp whose stored status is what the reconciler computed for these children a minute ago. */
/** The PodDisruptionBudget as the API server returns it: the intent plus metadata. */
function liveBudget(app: WebApp): KubeObject {
  const intent = desiredPodDisruptionBudget(app);
  return { ...intent, metadata: { ...intent.metadata, uid: "uid-pdb", resourceVersion: "503", generation: 1 } };
}

/** The status stored after a pass saw these children (and the WebApp's budget, where it wants one, unless told). */
function withStatus(
  app: WebApp,
  dep: KubeObject | undefined,
  svc: KubeObject | undefined,
  pdb: KubeObject | undefined = wantsDisruptionBudget(app.spec) ? liveBudget(app) : undefined,
  at = START - 60_000,
): WebApp {
  const live = { Deployment: dep, Service: svc, PodDisruptionBudget: pdb };
  return { ...app, status: computeStatus(app, live, [], at) };
}

const degraded = (a: Action | undefined) =>
  findCondition((a?.body as { status?: WebApp["status"] })?.status?.conditions, "Degraded");

describe("a new WebApp", () => {
  test("gets its Deployment created by a plain create (POST) under our field manager, then its Service in a pass at LATER priority, no read first, then at once a status saying what is going on", async () => {
    const w = world();
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeue(LATER));
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`)).toEqual([`POST ${DEPS}`]);
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    const [first, second, third, ...rest] = w.api.actions.map((a) => `${a.method} ${a.path}`);
    // Its other children together: the Service, and the PodDisruptionBudget (3 replicas).
    expect([first, second, third]).toEqual([`POST ${DEPS}`, `POST ${SVCS}`, `POST ${PDBS}`]);
    // No GET (the synced cache says they do not exist; the Service's is its first creation); the status is left
    // to the pass it asked for, which reads what the creates came back as.
    expect(rest).toEqual([]);
    const dep = w.writes().find((a) => a.path === DEPS);
    const svc = w.writes().find((a) => a.path === SVCS);
    const pdb = w.writes().find((a) => a.path === PDBS);
    expect(pdb?.body).toEqual(desiredPodDisruptionBudget(testApp() as WebApp));
    for (const create of [dep, svc, pdb]) {
      expect(create?.contentType).toBe(JSON_BODY);
      expect(create?.query).toEqual({ fieldManager: FIELD_MANAGER }); // a create never writes an existing object
    }
    expect(dep?.body).toEqual(desiredDeployment(testApp() as WebApp));
    expect(svc?.body).toEqual(desiredService(testApp() as WebApp));

    // The pass it asked for runs before the watch delivered the children: no clock moved, no child request.
    expect(await w.reconcile()).toEqual(requeueAfter(WRITTEN_TTL_MS));
    expect(w.api.actions.filter((a) => a.method === "GET")).toEqual([]);
    const [status, ...more] = w.statusWrites();
    expect(more).toEqual([]);
    expect(status?.contentType).toBe(MERGE);
    expect(status?.query).toEqual({ fieldManager: FIELD_MANAGER });
    expect(status?.body).toMatchObject({
      status: { observedGeneration: 1, selector: "app=test-app,managed-by=webapp-operator" },
    });
    const conditions = (status?.body as { status?: WebApp["status"] })?.status?.conditions;
    expect(findCondition(conditions, "Reconciling")).toMatchObject({ status: "True" });
    // Created, not yet seen in the cache: reported as being created, never as existing.
    expect(findCondition(conditions, "Available")).toMatchObject({ status: "False", reason: "DeploymentCreating" });
    expect(degraded(status)?.status).toBe("False");
  });

  test("whose children are Available when the pass after its creates runs gets Ready as its first status", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.childrenCached();
    w.cached(liveDeployment(testApp()));
    expect(await w.reconcile()).toEqual(done());
    const statuses = w.statusWrites().map((a) => (a.body as { status?: WebApp["status"] })?.status?.conditions);
    expect(statuses.map((c) => findCondition(c, "Ready")?.status)).toEqual(["True"]);
  });

  test("whose Deployment is Available by its Service pass is not Ready before the cache shows the Service", async () => {
    const w = world();
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeue(LATER));
    w.cached(liveDeployment(testApp()));
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    expect(w.statusWrites()).toEqual([]);
    expect(await w.reconcile()).toEqual(requeueAfter(POD_CHECK_AFTER_MS)); // not Ready: the Service not seen yet
    const ready = () =>
      w
        .statusWrites()
        .map((a) => findCondition((a.body as { status?: WebApp["status"] })?.status?.conditions, "Ready"));
    expect(ready()).toMatchObject([{ status: "False" }]);
    w.resync();
    w.childrenCached();
    expect(await w.reconcile()).toEqual(done());
    expect(ready().map((c) => c?.status)).toEqual(["False", "True"]);
  });

  test("whose Deployment create is refused gets its other children created in the same pass, and all reported", async () => {
    const w = world({
      wrap: (client) => ({
        ...client,
        create: async (rt, obj, o) => {
          if (obj.kind === "Deployment") throw new KubeError("Other", "etcdserver: request timed out", 500);
          return client.create(rt, obj, o);
        },
      }),
    });
    w.stored(testApp());
    await expect(w.reconcile()).rejects.toThrow("etcdserver: request timed out");
    expect(w.writes().map((a) => `${a.method} ${a.path}`)).toEqual([
      `POST ${SVCS}`,
      `POST ${PDBS}`,
      `PATCH ${APP_PATH}/status`,
    ]);
    expect(degraded(w.statusWrites()[0])).toMatchObject({ status: "True", reason: "ApplyFailed" });
  });

  test("left to its Service pass while its Deployment create is in flight is not asked for: one request per pass", async () => {
    const pending: Array<() => void> = [];
    const sent: string[] = [];
    const w = world({
      wrap: (client) => ({
        ...client,
        create: async (rt, obj, o) => {
          sent.push(obj.kind ?? "");
          await new Promise<void>((resolve) => pending.push(resolve));
          return client.create(rt, obj, o);
        },
      }),
    });
    w.stored(testApp());
    const first = w.reconcile();
    await w.clock.settle();
    expect(sent).toEqual(["Deployment"]);
    pending.shift()?.();
    expect(await first).toEqual(requeue(LATER));
    const second = w.reconcile();
    await w.clock.settle();
    expect(sent).toEqual(["Deployment", "Service", "PodDisruptionBudget"]);
    for (const answer of pending.splice(0)) answer();
    expect(await second).toEqual(requeue(IN_TURN));
    expect(w.api.actions).toHaveLength(3);
  });

  test("is announced by one Created event, sent by the pass that creates its Deployment, naming its Service as next (the Service pass may be another leader's)", async () => {
    const w = world();
    w.stored(testApp());
    await w.reconcile();
    const created = (message: string): RecordedEvent => ({
      on: "WebApp/test-app",
      type: "Normal",
      reason: "Created",
      message,
    });
    const both = created(
      "Deployment test-app-deployment created with 3 replicas of nginx:1.25; Service test-app-svc next (port 80 -> 80); " +
        "PodDisruptionBudget test-app-pdb next (max unavailable 1)",
    );
    expect(w.events).toEqual([both]);
    await w.reconcile();
    expect(w.events).toEqual([both]);
    // Another leader runs the Service pass: it does not know of the announcement, and makes its own.
    const other = world();
    other.stored(testApp());
    await other.reconcile();
    other.restart();
    await other.reconcile();
    expect(other.events.at(-1)).toEqual(
      created(
        "Service test-app-svc created (port 80 -> 80); PodDisruptionBudget test-app-pdb created (max unavailable 1)",
      ),
    );
  });

  test("reconciled again before the watch delivered its children uses what the creates returned: no request", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    await w.reconcile(); // writes the first status
    w.resync(); // the status write reached the cache, the children did not
    const before = w.api.actions.length;
    expect(await w.reconcile()).toEqual(requeueAfter(WRITTEN_TTL_MS));
    expect(w.api.actions.length).toBe(before);
    expect(w.events).toHaveLength(1);
  });

  test("whose child is deleted once the cache has shown it gets it created again at once, the WebApp confirmed beside it", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.resync();
    w.childrenCached();
    await w.reconcile(); // the cache has caught up: it is what counts from now on
    await w.api.client.delete(DEPLOYMENT_RESOURCE, "test-app-deployment", "default");
    w.childrenCached(); // its delete event
    const before = w.api.actions.length;
    await w.reconcile();
    const again = w.api.actions.slice(before, before + 2).map((a) => `${a.method} ${a.path}`);
    // reconciled before: is this a re-creation for a WebApp that is gone? Asked in the same round trip.
    expect(again.sort()).toEqual([`GET ${APP_PATH}`, `POST ${DEPS}`].sort());
  });

  test("being created again sends the create before the owner check is answered: one round trip", async () => {
    const answer: Array<() => void> = [];
    const sent: string[] = [];
    const w = world({
      wrap: (client) => ({
        ...client,
        get: async (rt, name, ns, signal) => {
          sent.push(`GET ${rt.kind}`);
          await new Promise<void>((resolve) => answer.push(resolve));
          return client.get(rt, name, ns, signal);
        },
        create: async (rt, obj, o) => {
          sent.push(`POST ${obj.kind}`);
          return client.create(rt, obj, o);
        },
      }),
    });
    w.stored(withStatus(testApp(), liveDeployment(testApp()), liveService(testApp()))); // reconciled before
    const outcome = w.reconcile();
    await w.clock.settle();
    // The GET not answered yet.
    expect(sent.sort()).toEqual(["GET WebApp", "POST Deployment", "POST PodDisruptionBudget", "POST Service"]);
    for (const resolve of answer) resolve();
    await outcome;
    expect(w.writes().filter((a) => a.path === DEPS || a.path === SVCS)).toHaveLength(2);
  });

  test("whose children the cache still does not show after WRITTEN_TTL_MS gets them created again, asking the API server beside it", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.resync();
    await w.clock.advance(WRITTEN_TTL_MS);
    const before = w.api.actions.length;
    // A re-creation within CREATED_TTL_MS of a creation asks too, beside the Deployment's create (409: it exists).
    await w.reconcile();
    const again = w.api.actions.slice(before).map((a) => `${a.method} ${a.path}`);
    expect(again.slice(0, 2).sort()).toEqual([`GET ${APP_PATH}`, `POST ${DEPS}`].sort());
    expect(again.filter((a) => a === `POST ${SVCS}`)).toHaveLength(1);
  });
});

describe("a WebApp's PodDisruptionBudget (from 2 replicas, maxUnavailable 1 unless its spec says otherwise)", () => {
  const PDB_PATH = `${PDBS}/test-app-pdb`;
  /** A WebApp of `spec` whose Deployment, Service and PodDisruptionBudget (of 3 replicas) the cache shows. */
  function convergedWith(spec: Partial<WebApp["spec"]>) {
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(spec), dep, svc, liveBudget(testApp())));
    return w;
  }
  const deletes = (w: ReturnType<typeof world>) => w.api.actions.filter((a) => a.method === "DELETE");

  test("scaled to 1 replica: deleted, with its uid and resourceVersion as preconditions, announced, not counted", async () => {
    const w = convergedWith({ replicas: 1 });
    await w.reconcile();
    expect(deletes(w).map((a) => [a.path, (a.body as { preconditions?: unknown }).preconditions])).toEqual([
      [PDB_PATH, { uid: "uid-pdb", resourceVersion: "503" }],
    ]);
    expect(w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", "test-app-pdb")).toBeUndefined();
    expect(w.events.filter((e) => e.reason === "Deleted").map((e) => e.message)).toEqual([
      "PodDisruptionBudget test-app-pdb deleted: the WebApp runs fewer than 2 replicas",
    ]);
    // Its deletion comes back through the watch: nothing more to do, and Available does not wait for it.
    w.resync();
    w.watched("delete", liveBudget(testApp()));
    w.cached(liveDeployment(testApp({ replicas: 1 })));
    await w.reconcile();
    expect(deletes(w)).toHaveLength(1);
    const status = (w.statusWrites().at(-1)?.body as { status?: WebApp["status"] })?.status;
    expect(findCondition(status?.conditions, "Available")?.status).toBe("True");
  });

  test("changed since the cache showed it (its status moved): the DELETE's precondition fails quietly, the next pass deletes it", async () => {
    const w = convergedWith({ replicas: 1 });
    const before = liveBudget(testApp());
    const moved = w.api.put(POD_DISRUPTION_BUDGET_RESOURCE, {
      ...before,
      metadata: { ...before.metadata, resourceVersion: "600" },
      status: { currentHealthy: 2 },
    });
    await w.reconcile();
    expect(deletes(w)).toHaveLength(1); // refused: 409 on the resourceVersion
    expect(w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", "test-app-pdb")).toBeDefined();
    expect(w.events.filter((e) => e.type === "Warning" || e.reason === "Deleted")).toEqual([]);
    expect(degraded(w.statusWrites().at(-1))?.status).not.toBe("True");
    w.watched("update", moved); // the watch brings the newer object
    await w.reconcile();
    expect(deletes(w)).toHaveLength(2);
    expect(w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", "test-app-pdb")).toBeUndefined();
  });

  test("turned off by spec.disruptionBudget.enabled false: deleted, saying so", async () => {
    const w = convergedWith({ disruptionBudget: { enabled: false } });
    await w.reconcile();
    expect(deletes(w).map((a) => a.path)).toEqual([PDB_PATH]);
    expect(w.events.find((e) => e.reason === "Deleted")?.message).toBe(
      "PodDisruptionBudget test-app-pdb deleted: spec.disruptionBudget.enabled is false",
    );
  });

  test("changed from maxUnavailable to minAvailable: the apply drops maxUnavailable (ours, handed over first)", async () => {
    const w = convergedWith({ disruptionBudget: { minAvailable: 2 } });
    await w.reconcile();
    const apply = w.writes().find((a) => a.path === PDB_PATH && a.contentType === APPLY);
    expect((apply?.body as { spec?: unknown })?.spec).toEqual({
      selector: { matchLabels: { app: "test-app", "managed-by": "webapp-operator" } },
      minAvailable: 2,
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    });
    expect(w.events.find((e) => e.reason === "Updated")?.message).toBe(
      "PodDisruptionBudget test-app-pdb updated (spec.minAvailable)",
    );
  });

  test("someone else's object of that name is never deleted when unwanted, nor written when wanted", async () => {
    const foreign: KubeObject = {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "test-app-pdb", namespace: "default", uid: "theirs", resourceVersion: "7" },
      spec: { maxUnavailable: 0, selector: { matchLabels: { app: "test-app" } } },
    };
    const unwanted = world();
    unwanted.cached(foreign);
    unwanted.stored(testApp({ replicas: 1 }));
    await unwanted.created();
    expect(deletes(unwanted)).toEqual([]);
    expect(unwanted.api.actions.filter((a) => a.path.startsWith(PDBS))).toEqual([]);

    const wanted = world();
    wanted.cached(foreign);
    wanted.stored(testApp());
    await wanted.reconcile(); // someone else's child there: not a new WebApp's split first pass, all at once
    expect(wanted.api.actions.filter((a) => a.path.startsWith(PDBS) && a.method !== "GET")).toEqual([]);
    expect(degraded(wanted.statusWrites().at(-1))).toMatchObject({ status: "True", reason: "ResourceExists" });
  });
});

describe("a kind of child the cluster does not serve (served.ts)", () => {
  test("is never written; the WebApp that wants it gets its other children and is Stalled KindNotServed", async () => {
    const w = world({ unserved: new Set<ChildKindName>(["HorizontalPodAutoscaler"]) });
    const app = testApp({
      replicas: undefined,
      autoscaling: { maxReplicas: 3 },
      resources: { requests: { cpu: "1" } },
    });
    w.stored(app);
    await w.created();
    expect(
      w
        .writes()
        .filter((a) => a.method === "POST")
        .map((a) => a.path),
    ).toEqual([DEPS, SVCS]);
    w.cached(liveDeployment(app, 1));
    w.childrenCached();
    w.resync();
    await w.reconcile();
    const status = (w.statusWrites().at(-1)?.body as { status?: WebApp["status"] } | undefined)?.status;
    expect(findCondition(status?.conditions, "Stalled")).toMatchObject({
      status: "True",
      reason: "KindNotServed",
      message: expect.stringContaining("this cluster does not serve autoscaling/v2 horizontalpodautoscalers"),
    });
    expect(findCondition(status?.conditions, "Ready")?.status).toBe("False");
  });
});

describe("an exposed WebApp (spec.expose: an Ingress to its Service)", () => {
  const INGS = "/apis/networking.k8s.io/v1/namespaces/default/ingresses";
  const exposed = () => testApp({ replicas: 1, expose: { host: "shop.example.com" } });
  const statusOf = (w: ReturnType<typeof world>) =>
    (w.statusWrites().at(-1)?.body as { status?: WebApp["status"] } | undefined)?.status;

  test("gets its Ingress with its other children, status.url once it has an address, and loses it with the field", async () => {
    const w = world();
    w.stored(exposed());
    await w.created();
    expect(
      w
        .writes()
        .filter((a) => a.method === "POST")
        .map((a) => a.path),
    ).toEqual([DEPS, SVCS, INGS]);
    expect(w.events[0]?.message).toContain("Ingress test-app-ingress next (shop.example.com/ -> Service test-app-svc)");
    // The children shown by the cache, rolled out; the Ingress controller has not given it an address yet.
    w.cached(liveDeployment(exposed()));
    w.childrenCached();
    w.resync();
    await w.reconcile();
    expect(statusOf(w)?.url).toBeUndefined();
    expect(findCondition(statusOf(w)?.conditions, "Ready")).toMatchObject({
      status: "True",
      message: expect.stringContaining("Ingress test-app-ingress has no address yet"),
    });
    // The controller writes its address: the status says where the WebApp answers.
    const ingress = w.api.object(INGRESS_RESOURCE, "default", "test-app-ingress") as KubeObject;
    w.watched("update", { ...ingress, status: { loadBalancer: { ingress: [{ ip: "192.0.2.10" }] } } });
    w.resync();
    await w.reconcile();
    expect(statusOf(w)?.url).toBe("http://shop.example.com/");

    // spec.expose removed: the Ingress is deleted, said why, and the url goes.
    const stored = w.api.object(WEBAPP_RESOURCE, "default", "test-app") as WebAppObject;
    w.stored({ ...testApp({ replicas: 1 }), status: stored.status });
    await w.reconcile();
    expect(w.api.actions.filter((a) => a.method === "DELETE").map((a) => a.path)).toEqual([`${INGS}/test-app-ingress`]);
    expect(w.events.at(-1)?.message).toBe("Ingress test-app-ingress deleted: spec.expose was removed");
    // The merge patch of the status removes status.url (null): left out, the stored one would stay.
    w.resync();
    await w.reconcile();
    expect(statusOf(w)).toHaveProperty("url", null);
    expect((w.api.object(WEBAPP_RESOURCE, "default", "test-app") as WebAppObject).status).not.toHaveProperty("url");
  });

  test("naming an IngressClass the cluster does not have: Stalled IngressClassNotFound with a Warning, until it exists", async () => {
    const w = world();
    const classy = testApp({ replicas: 1, expose: { host: "shop.example.com", ingressClassName: "nginx" } });
    w.stored(classy);
    await w.created();
    w.cached(liveDeployment(classy));
    w.childrenCached();
    w.resync();
    expect(await w.reconcile()).toEqual(requeueAfter(RECHECK_MS));
    const stalled = findCondition(statusOf(w)?.conditions, "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "IngressClassNotFound" });
    expect(stalled?.message).toStartWith("IngressClass nginx (spec.expose.ingressClassName) does not exist");
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["IngressClassNotFound"]);
    // Installed since: the next look clears it.
    w.ingressClasses.set("nginx", {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: { name: "nginx" },
    });
    w.resync();
    await w.reconcile();
    expect(findCondition(statusOf(w)?.conditions, "Stalled")).toBeUndefined();
    expect(findCondition(statusOf(w)?.conditions, "Ready")?.status).toBe("True");
  });
});

describe("a converged WebApp", () => {
  test("costs zero writes (and zero reads) when the cached children are the intents plus server defaults", async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    await w.clock.advance(3_600_000);
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions).toEqual([]);
    expect(w.events).toEqual([]);
  });
});

describe("a child found carrying its intent (cache-shape.ts verifiedChild)", () => {
  /** A WebApp whose children the cache holds as the API server stored them, and one pass over them. */
  const verified = async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    expect(await w.reconcile()).toEqual(done());
    return w;
  };
  const PDB = "test-app-pdb";
  const PDB_PATH = `${PDBS}/${PDB}`;
  const isPdb = (a: string) => a.includes("poddisruptionbudgets");
  const budget = (w: ReturnType<typeof world>) =>
    w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", PDB)?.spec as Record<string, unknown> | undefined;
  /** The WebApp's spec with another disruption budget: a new intent for its PodDisruptionBudget alone. */
  const budgetOf = (w: ReturnType<typeof world>, maxUnavailable: number) =>
    w.stored({
      ...(w.webapps.get(KEY) as WebAppObject),
      spec: { ...testApp().spec, disruptionBudget: { maxUnavailable } },
    });
  const actionsOf = async (w: ReturnType<typeof world>, pass: () => Promise<unknown>): Promise<string[]> => {
    const before = w.api.actions.length;
    await pass();
    return w.api.actions.slice(before).map((a) => `${a.method} ${a.path}`);
  };

  test("is kept without its spec at the same version, stamped; the Deployment is kept whole", async () => {
    const w = await verified();
    const svc = w.services.get("default/test-app-svc") as KubeObject;
    const pdb = w.budgets.get(`default/${PDB}`) as KubeObject;
    expect(svc.spec).toBeUndefined();
    expect(pdb.spec).toBeUndefined();
    expect(pdb.metadata.resourceVersion).toBe(
      w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", PDB)?.metadata.resourceVersion,
    );
    expect(verifiedStamp(svc)).toBeDefined();
    expect(svc.status).toEqual(liveService(testApp()).status);
    const dep = w.deployments.get("default/test-app-deployment") as KubeObject;
    expect(dep.spec).toEqual(liveDeployment(testApp()).spec);
    expect(verifiedStamp(dep)).toBeUndefined();
  });

  test("costs no request in the passes that follow, nor after a restart (the stamp is the intent's, not the process's)", async () => {
    const w = await verified();
    expect(await actionsOf(w, () => w.reconcile())).toEqual([]);
    w.restart();
    expect(await actionsOf(w, () => w.reconcile())).toEqual([]);
  });

  test("under a new intent is read whole once and applied; the children the change does not touch send nothing", async () => {
    const w = await verified();
    budgetOf(w, 2);
    const sent = await actionsOf(w, () => w.reconcile());
    expect(sent.filter(isPdb)).toEqual([`GET ${PDB_PATH}`, `PATCH ${PDB_PATH}`]);
    expect(sent.filter((a) => !isPdb(a) && !a.endsWith("/status") && !a.includes("/events"))).toEqual([]);
    expect(budget(w)?.maxUnavailable).toBe(2);
  });

  test("under a new intent it already carries (someone made it so): read whole, nothing written, kept stamped anew", async () => {
    const w = await verified();
    const live = structuredClone(w.api.object(POD_DISRUPTION_BUDGET_RESOURCE, "default", PDB)) as Record<string, any>;
    live.spec.maxUnavailable = 2;
    const edited = w.api.put(POD_DISRUPTION_BUDGET_RESOURCE, live as KubeObject); // the watch has not delivered it yet
    budgetOf(w, 2);
    expect((await actionsOf(w, () => w.reconcile())).filter(isPdb)).toEqual([`GET ${PDB_PATH}`]);
    w.watched("update", edited);
    expect((await actionsOf(w, () => w.reconcile())).filter(isPdb)).toEqual([]);
    expect(w.budgets.get(`default/${PDB}`)?.spec).toBeUndefined();
  });

  test("changed by someone comes whole from the watch and is applied back", async () => {
    const w = await verified();
    const live = structuredClone(w.api.object(SERVICE_RESOURCE, "default", "test-app-svc")) as Record<string, any>;
    live.spec.ports[0].targetPort = 1;
    w.watched("update", w.api.put(SERVICE_RESOURCE, live as KubeObject));
    expect((await actionsOf(w, () => w.reconcile())).filter((a) => a.includes("/services"))).toEqual([
      `PATCH ${SVC_PATH}`,
    ]);
    const svc = w.api.object(SERVICE_RESOURCE, "default", "test-app-svc") as Record<string, any>;
    const ports = svc.spec.ports as { targetPort: unknown }[];
    expect(ports[0]?.targetPort).toBe(80);
  });

  test("gone from the API server while the cache still shows it, under a new intent: created again", async () => {
    const w = await verified();
    await w.api.client.delete(POD_DISRUPTION_BUDGET_RESOURCE, PDB, "default");
    budgetOf(w, 2);
    expect((await actionsOf(w, () => w.reconcile())).filter(isPdb)).toEqual([`GET ${PDB_PATH}`, `POST ${PDBS}`]);
    expect(budget(w)?.maxUnavailable).toBe(2);
  });
});

describe("a child we created (the create recorded its fields under an Update entry of our field manager)", () => {
  /** The child with these managedFields entries. */
  const withEntries = (obj: KubeObject, managedFields: ManagerEntry[]): KubeObject => ({
    ...obj,
    metadata: { ...obj.metadata, managedFields },
  });
  const createdByUs = (dep: KubeObject): KubeObject =>
    withEntries(dep, [{ manager: FIELD_MANAGER, operation: "Update" }]);
  /** A WebApp whose port changed to 8080 (a reshape), over a Deployment we created, its Service and budget. */
  const portChanged = () => {
    const w = world();
    const dep = w.cached(createdByUs(liveDeployment(testApp())));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp({ port: 8080 }), dep, svc));
    return w;
  };
  const depWrites = (w: ReturnType<typeof world>) =>
    w
      .writes()
      .filter((a) => a.path === DEP_PATH)
      .map((a) => `${a.method} ${a.contentType}`);

  const entriesOf = (w: ReturnType<typeof world>) =>
    w.api
      .object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")
      ?.metadata.managedFields?.map((e) => `${(e as ManagerEntry).manager}/${(e as ManagerEntry).operation}`);

  test("reshaped by a new port: the entry is read, handed over to apply first, so the apply prunes the old port", async () => {
    const w = portChanged();
    await w.reconcile();
    expect(depWrites(w)).toEqual(["PATCH application/json-patch+json", `PATCH ${APPLY}`]);
    expect(w.api.actions.filter((a) => a.method === "GET" && a.path === DEP_PATH)).toHaveLength(1);
    const [handover] = w.writes().filter((a) => a.path === DEP_PATH);
    expect(handover?.body).toContainEqual({
      op: "replace",
      path: "/metadata/managedFields",
      value: [{ manager: FIELD_MANAGER, operation: "Apply" }],
    });
    expect(entriesOf(w)).toEqual([`${FIELD_MANAGER}/Apply`]);
  });

  test("a cache behind the object (we applied since, someone edited it): the handover is computed from the object read", async () => {
    const w = world();
    const dep = w.cached(createdByUs(liveDeployment(testApp())));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    // On the API server: our Apply entry and kubectl's edit, which the cache has not seen.
    const ours = dep.metadata.managedFields ?? [];
    w.api.put(DEPLOYMENT_RESOURCE, {
      ...dep,
      metadata: {
        ...dep.metadata,
        managedFields: [
          { manager: FIELD_MANAGER, operation: "Apply" },
          { manager: "kubectl-edit", operation: "Update" },
          ...ours,
        ],
      },
    });
    w.stored(withStatus(testApp({ port: 8080 }), dep, svc));
    await w.reconcile();
    expect(depWrites(w)).toEqual(["PATCH application/json-patch+json", `PATCH ${APPLY}`]);
    expect(entriesOf(w)).toEqual([`${FIELD_MANAGER}/Apply`, "kubectl-edit/Update"]);
  });

  test("an object written between the read and the handover (a 422 on its resourceVersion) is read and handed over again", async () => {
    const w = portChanged();
    let patches = 0;
    w.api.answer = (a) => {
      // The Deployment controller writes the object between our read and our first handover patch.
      if (a.path !== DEP_PATH || a.contentType !== "application/json-patch+json" || ++patches > 1) return undefined;
      const now = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as KubeObject;
      w.api.put(DEPLOYMENT_RESOURCE, { ...now, metadata: { ...now.metadata, resourceVersion: "999" } });
      return undefined;
    };
    const pass = w.reconcile();
    await w.clock.settle();
    expect(w.clock.nextTimerAt()).toBe(START + 50); // the wait before the second attempt
    await w.clock.advance(50);
    await pass;
    expect(w.api.actions.filter((a) => a.method === "GET" && a.path === DEP_PATH)).toHaveLength(2);
    expect(depWrites(w)).toEqual([
      "PATCH application/json-patch+json", // tests the resourceVersion read first: a 422
      "PATCH application/json-patch+json",
      `PATCH ${APPLY}`,
    ]);
    expect(entriesOf(w)).toEqual([`${FIELD_MANAGER}/Apply`]);
  });

  test("an object that changes under every handover (a rollout's status writes): five tries over 750 ms, then a Conflict", async () => {
    const w = portChanged();
    let version = 1000;
    w.api.answer = (a) => {
      if (a.path !== DEP_PATH || a.contentType !== "application/json-patch+json") return undefined;
      const now = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as KubeObject;
      w.api.put(DEPLOYMENT_RESOURCE, { ...now, metadata: { ...now.metadata, resourceVersion: String(++version) } });
      return undefined;
    };
    const pass = w.reconcile().catch((e: unknown) => e);
    const waits: number[] = [];
    for (let at = w.clock.now(), i = 0; i < 4; i++) {
      await w.clock.settle();
      const next = w.clock.nextTimerAt() as number;
      waits.push(next - at);
      await w.clock.advance(next - at);
      at = next;
    }
    const err = await pass;
    expect(waits).toEqual([50, 100, 200, 400]);
    expect(depWrites(w)).toEqual(Array(5).fill("PATCH application/json-patch+json")); // never applied blind
    expect(w.api.actions.filter((a) => a.method === "GET" && a.path === DEP_PATH)).toHaveLength(6);
    expect((err as KubeError).reason).toBe("Conflict");
    expect((err as KubeError).code).toBe(422); // what the API server answered; the reason is what it meant here
    expect((err as KubeError).message).toBe(
      "Deployment default/test-app-deployment changed between each of our 5 reads and the handover that tested it",
    );
  });

  test("a 422 on the handover while the object stayed as read is not our test failing: thrown as it came, once", async () => {
    const w = portChanged();
    w.api.answer = (a) =>
      a.path === DEP_PATH && a.contentType === "application/json-patch+json"
        ? { code: 422, message: "metadata.managedFields: Invalid value" }
        : undefined;
    const pass = w.reconcile().catch((e: unknown) => e);
    await w.clock.advance(50);
    const err = await pass;
    expect(depWrites(w)).toEqual(["PATCH application/json-patch+json"]);
    expect(w.api.actions.filter((a) => a.method === "GET" && a.path === DEP_PATH)).toHaveLength(2);
    expect((err as KubeError).reason).toBe("Invalid");
    expect((err as KubeError).message).toContain("metadata.managedFields: Invalid value");
  });

  test("reshaped before the cache showed our create (the pass sees what the create returned): still handed over", async () => {
    // The chaos soak's app-018: a Deployment re-created, its WebApp's port changed seconds later while the watch
    // lagged; the remembered create carried no managedFields, the handover was skipped, and the old port stayed.
    const w = world();
    w.stored(testApp());
    await w.reconcile();
    expect(w.deployments.size).toBe(0); // the cache has not seen the create
    const app = w.api.object(WEBAPP_RESOURCE, "default", "test-app") as WebAppObject;
    w.stored({ ...testApp({ port: 8080 }), metadata: { ...app.metadata, generation: 2 } });
    const before = w.api.actions.length;
    await w.reconcile();
    const onDeployment = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH);
    expect(onDeployment.map((a) => `${a.method} ${a.contentType ?? ""}`.trim())).toEqual([
      "GET",
      "PATCH application/json-patch+json",
      `PATCH ${APPLY}`,
    ]);
    expect(entriesOf(w)).toEqual([`${FIELD_MANAGER}/Apply`]);
  });

  test("deleted before the cache showed our create: created again in the same pass, not failing until the memory expires", async () => {
    // The chaos soak's app-031: created while the watch re-listed, deleted before the cache ever showed it; every
    // pass converged from the remembered create, failed on the API server's 404 and backed off to 1000 s.
    const w = world();
    w.stored(testApp());
    await w.reconcile();
    await w.api.client.delete(DEPLOYMENT_RESOURCE, "test-app-deployment", "default");
    expect(w.deployments.size).toBe(0); // the cache never showed the create, nor the delete
    const app = w.api.object(WEBAPP_RESOURCE, "default", "test-app") as WebAppObject;
    w.stored({ ...testApp({ port: 8080 }), metadata: { ...app.metadata, generation: 2 } });
    const before = w.api.actions.length;
    await w.reconcile();
    const onDeployment = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH || a.path === DEPS);
    expect(onDeployment.map((a) => `${a.method} ${a.path === DEPS ? "(create)" : ""}`.trim())).toEqual([
      "GET",
      "POST (create)",
    ]);
    const live = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment");
    expect(JSON.stringify(live?.spec)).toContain('"containerPort":8080');
  });

  /** The Deployment with its container's ports replaced by these (TCP). */
  const withPorts = (dep: KubeObject, ports: number[]): KubeObject => {
    const d = structuredClone(dep) as Record<string, any>;
    d.spec.template.spec.containers[0].ports = ports.map((p) => ({ containerPort: p, protocol: "TCP" }));
    return d as KubeObject;
  };

  test("an old port left beside the intent's under our Update entry is handed over and pruned, once", async () => {
    // The chaos soak's app-036: ports [8080, 80] where the WebApp wants 80, 8080 still under the Update entry our
    // create recorded. Nothing differed from the intent, so no pass ever applied again and 8080 stayed for good.
    const w = world();
    const stuck = withPorts(liveDeployment(testApp()), [8080, 80]);
    const entries = [
      { manager: FIELD_MANAGER, operation: "Apply" },
      { manager: FIELD_MANAGER, operation: "Update" },
    ];
    const dep = w.cached(withEntries(stuck, entries));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    await w.reconcile();
    expect(depWrites(w)).toEqual(["PATCH application/json-patch+json", `PATCH ${APPLY}`]);
    expect(entriesOf(w)).toEqual([`${FIELD_MANAGER}/Apply`]);
    expect(w.events.map((e) => e.message)).toEqual([
      "Deployment test-app-deployment updated (fields our create set that the intent no longer has)",
    ]);

    // The cache catches up (the fake API server's apply replaces lists: the port is gone, as a real prune leaves it).
    w.childrenCached();
    const before = w.api.actions.length;
    await w.reconcile();
    expect(w.api.actions.slice(before).filter((a) => a.path === DEP_PATH)).toEqual([]);
  });

  test("a port beside the intent's that the apply keeps (someone else's) is handed over once, with no Updated event", async () => {
    // The API server prunes only what we own: model its answer keeping kubectl's port 9090.
    const keepsTheirs = (client: KubeClient): KubeClient => ({
      ...client,
      apply: async <T>(...args: Parameters<KubeClient["apply"]>) =>
        withPorts((await client.apply<KubeObject>(...args)) as KubeObject, [80, 9090]) as T,
    });
    const w = world({ wrap: keepsTheirs });
    const dep = w.cached(withPorts(createdByUs(liveDeployment(testApp())), [80, 9090]));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    await w.reconcile();
    expect(depWrites(w)).toEqual(["PATCH application/json-patch+json", `PATCH ${APPLY}`]);
    expect(w.events).toEqual([]);
  });

  test("a port beside the intent's on a child without our Update entry is someone else's: nothing read or written", async () => {
    const w = world();
    const theirs = withPorts(liveDeployment(testApp()), [80, 9090]);
    const entries = [
      { manager: FIELD_MANAGER, operation: "Apply" },
      { manager: "kubectl-edit", operation: "Update" },
    ];
    const dep = w.cached(withEntries(theirs, entries));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    await w.reconcile();
    expect(w.api.actions).toEqual([]);
  });

  test("a cache still showing an entry already handed over costs one read and no write", async () => {
    const w = world();
    const stale = withPorts(createdByUs(liveDeployment(testApp())), [80, 9090]);
    const dep = w.cached(stale);
    w.api.put(DEPLOYMENT_RESOURCE, withEntries(stale, []));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    await w.reconcile();
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`)).toEqual([`GET ${DEP_PATH}`]);
  });

  test("changed in place (a new image): applied at once, no handover needed", async () => {
    const w = world();
    const dep = w.cached(createdByUs(liveDeployment(testApp())));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp({ image: "nginx:1.27" }), dep, svc));
    await w.reconcile();
    expect(depWrites(w)).toEqual([`PATCH ${APPLY}`]);
  });
});

describe("a child this process wrote, gone from the cache", () => {
  /** The requests to the Services collection (creates) of one more pass. */
  const serviceCreatesOfNextPass = async (w: ReturnType<typeof world>): Promise<string[]> => {
    const before = w.api.actions.length;
    await w.reconcile();
    return w.api.actions
      .slice(before)
      .filter((a) => a.path === SVCS)
      .map((a) => a.method);
  };

  test("an updated Service the cache then lost (deleted while the watch was down) is created again at once", async () => {
    // The chaos soak's app-038: its Service was updated against a cache the re-list had not refreshed, and was gone in
    // the re-list; the remembered update stood in for it for 30 s, and then no event was left to reconcile it.
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    const edited = structuredClone(liveService(testApp())) as Record<string, any>;
    edited.spec.ports[0].targetPort = 1; // someone's edit, applied back below
    const svc = w.cached(edited as KubeObject);
    w.stored(withStatus(testApp(), dep, liveService(testApp())));
    await w.reconcile();
    expect(w.writes().filter((a) => a.path === SVC_PATH)).toHaveLength(1); // applied back
    await w.api.client.delete(SERVICE_RESOURCE, "test-app-svc", "default");
    w.services.delete(`default/${svc.metadata.name}`); // the re-list's delete
    expect(await serviceCreatesOfNextPass(w)).toEqual(["POST"]);
  });

  test("a created Service the watch delivered, and its deletion, before the next pass is created again in that pass, and the WebApp is never Ready without it", async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    w.stored(withStatus(testApp(), dep, liveService(testApp())));
    await w.reconcile(); // creates the Service (the create answered)
    const created = w.api.object(SERVICE_RESOURCE, "default", "test-app-svc") as KubeObject;
    w.watched("add", created);
    await w.api.client.delete(SERVICE_RESOURCE, "test-app-svc", "default");
    w.watched("delete", created);
    expect(await serviceCreatesOfNextPass(w)).toEqual(["POST"]);
    for (const a of w.statusWrites()) {
      const ready = findCondition((a.body as { status?: WebApp["status"] })?.status?.conditions, "Ready");
      expect(ready?.status).not.toBe("True");
    }
  });

  test("a Service the watch deleted while the pass ran (after it read the cache) is not counted in a Ready status", async () => {
    let w: ReturnType<typeof world> | undefined;
    w = world({
      wrap: (client) => ({
        ...client,
        list: async (rt, o) => {
          const svc = w?.services.get("default/test-app-svc");
          if (svc) w?.watched("delete", svc); // deleted while the pass reads the pods (its reported crash is over)
          return client.list(rt, o);
        },
      }),
    });
    const dep = w.cached(liveDeployment(testApp()));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    const crashed = podProblems([{ pod: "test-app-1", reason: "CrashLoopBackOff", message: "back-off restarting" }]);
    w.stored({
      ...testApp(),
      status: computeStatus(testApp(), { Deployment: dep, Service: svc }, crashed, START - 60_000),
    });
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    expect(w.statusWrites()).toEqual([]); // Ready would have been news, written at once: not with the Service gone
    await w.reconcile(); // the pass the deletion queued creates it again, and reports it as being created
    expect(w.writes().map((a) => `${a.method} ${a.path}`)).toContain(`POST ${SVCS}`);
    for (const a of w.statusWrites())
      expect(findCondition((a.body as { status?: WebApp["status"] })?.status?.conditions, "Ready")?.status).not.toBe(
        "True",
      );
  });

  test("the same when the events came before the create's answer (remembered after the watch saw it go)", async () => {
    const w = world({
      wrap: (client) => ({
        ...client,
        create: async (rt, obj, o) => {
          const made = await client.create(rt, obj, o);
          if (obj.kind === "Service") {
            w.watched("add", made);
            await client.delete(SERVICE_RESOURCE, "test-app-svc", "default");
            w.watched("delete", made);
          }
          return made;
        },
      }),
    });
    const dep = w.cached(liveDeployment(testApp()));
    w.stored(withStatus(testApp(), dep, liveService(testApp())));
    await w.reconcile();
    expect(await serviceCreatesOfNextPass(w)).toEqual(["POST"]);
  });

  test("a created Service deleted while no watch event came is looked at again once the memory of it expires", async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp()));
    w.stored(withStatus(testApp(), dep, liveService(testApp())));
    await w.reconcile(); // creates the Service; the cache never shows it
    await w.api.client.delete(SERVICE_RESOURCE, "test-app-svc", "default");
    // A pass before the memory expires cannot tell (no event came): it reports the Service as being created, not
    // as existing, and asks to be run again by then (here sooner: it is not Ready).
    expect(await w.reconcile()).toEqual(requeueAfter(POD_CHECK_AFTER_MS));
    const last = w.statusWrites().at(-1)?.body as { status?: WebApp["status"] };
    expect(findCondition(last?.status?.conditions, "Available")).toMatchObject({ reason: "ServiceCreating" });
    await w.clock.advance(WRITTEN_TTL_MS);
    expect(await serviceCreatesOfNextPass(w)).toEqual(["POST"]);
  });
});

describe("under a mutating admission policy (image pinned to a digest, a pod-template label added)", () => {
  const DIGEST = `sha256:${"0".repeat(64)}`;
  /** What an image-verifying policy does to every write of a Deployment (idempotent, as admission must be). */
  const pin = (obj: KubeObject): KubeObject => {
    if (obj.kind !== "Deployment") return obj;
    const d = structuredClone(obj) as Record<string, any>;
    for (const c of d.spec.template.spec.containers) if (!c.image.includes("@")) c.image = `${c.image}@${DIGEST}`;
    d.spec.template.metadata.labels = { ...d.spec.template.metadata.labels, "policy.example.com/verified": "true" };
    return d as KubeObject;
  };
  /** The Deployment controller having rolled out what is stored, seen by the cache. */
  const rolledOut = (w: ReturnType<typeof world>): void => {
    const d = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as Record<string, any>;
    const n = d.spec.replicas;
    const status = {
      observedGeneration: d.metadata.generation,
      ...{ replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n },
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
        { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
      ],
    };
    const stored = w.api.put(DEPLOYMENT_RESOURCE, { ...d, status } as unknown as KubeObject);
    w.deployments.set("default/test-app-deployment", stored);
  };
  const image = (w: ReturnType<typeof world>) =>
    (w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as Record<string, any>).spec.template.spec
      .containers[0].image;
  const ready = (w: ReturnType<typeof world>) => findCondition(w.webapps.get(KEY)?.status?.conditions, "Ready");
  /** Passes until one writes nothing and asks for no pass at once, the caches catching up after each. */
  async function settle(w: ReturnType<typeof world>): Promise<void> {
    for (let i = 0; i < 6; i++) {
      const before = w.writes().length;
      const outcome = await w.reconcile();
      w.childrenCached();
      w.resync();
      if (w.writes().length === before && outcome.kind !== "requeue") return;
    }
    throw new Error("the passes did not settle");
  }
  /** A new WebApp under the policy, converged and rolled out. */
  async function converged(): Promise<ReturnType<typeof world>> {
    const w = world();
    w.api.admit = pin;
    w.stored(testApp());
    await settle(w);
    rolledOut(w);
    await settle(w);
    return w;
  }

  test("a WebApp turns Ready, and further passes, a restart or a new leader write nothing", async () => {
    const w = await converged();
    expect(image(w)).toBe(`nginx:1.25@${DIGEST}`);
    expect(ready(w)?.status).toBe("True");
    expect(w.webapps.get(KEY)?.status?.admitted).toEqual([
      {
        kind: "Deployment",
        path: "spec.template.spec.containers[app].image",
        sent: '"nginx:1.25"',
        stored: `"nginx:1.25@${DIGEST}"`,
      },
    ]);
    const writes = w.writes().length;
    const events = w.events.length;
    for (let i = 0; i < 3; i++) expect(await w.reconcile()).toEqual(done());
    w.restart();
    expect(await w.reconcile()).toEqual(done());
    expect(w.writes().length).toBe(writes);
    expect(w.events.length).toBe(events);
  });

  test("someone's scale is reverted (Scaled, the pinned image not taken for drift), and a new image rolls out to Ready", async () => {
    const w = await converged();
    const applies = () => w.writes().filter((a) => a.path === DEP_PATH && a.contentType === APPLY).length;
    expect(applies()).toBe(0);
    const scaled = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as Record<string, any>;
    w.cached(
      w.api.put(DEPLOYMENT_RESOURCE, { ...scaled, spec: { ...scaled.spec, replicas: 5 } } as unknown as KubeObject),
    );
    await w.reconcile();
    expect(applies()).toBe(1);
    expect(w.events.at(-1)).toMatchObject({
      reason: "Scaled",
      message: "Deployment test-app-deployment updated to 3 replicas",
    });
    await settle(w);
    rolledOut(w);
    await settle(w);
    expect(ready(w)?.status).toBe("True");

    w.stored({ ...testApp({ image: "nginx:1.26" }), metadata: { ...testApp().metadata, generation: 2 } } as WebApp);
    w.webapps.set(KEY, { ...(w.api.object(WEBAPP_RESOURCE, "default", "test-app") as WebAppObject) });
    await settle(w);
    expect(image(w)).toBe(`nginx:1.26@${DIGEST}`);
    expect(ready(w)?.status).not.toBe("True"); // the Deployment controller has not observed it yet
    rolledOut(w);
    await settle(w);
    expect(ready(w)).toMatchObject({ status: "True", observedGeneration: 2 });
    expect(w.webapps.get(KEY)?.status?.admitted?.[0]?.sent).toBe('"nginx:1.26"');
    const writes = w.writes().length;
    expect(await w.reconcile()).toEqual(done());
    expect(w.writes().length).toBe(writes);
  });
});

describe("a Deployment someone scaled down", () => {
  test("is applied once, with force and the live uid as precondition, and a Scaled event; the pass it asks for writes the status", async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp(), 1));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    // It wrote a child: its status (progress only) is left to a pass at the back of the queue, which reads the
    // apply as the cache shows it.
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    expect(w.statusWrites()).toEqual([]);
    w.childrenCached();
    await w.reconcile();
    expect(w.statusWrites()).toHaveLength(1);

    const onDeployment = w.writes().filter((a) => a.path === DEP_PATH);
    expect(onDeployment).toHaveLength(1);
    const [apply] = onDeployment;
    expect(apply).toMatchObject({
      method: "PATCH",
      contentType: APPLY,
      query: { fieldManager: FIELD_MANAGER, force: "true" },
    });
    expect(apply?.body).toMatchObject({
      metadata: { name: "test-app-deployment", uid: "uid-dep" },
      spec: { replicas: 3 },
    });
    expect(w.writes().filter((a) => a.path === SVC_PATH)).toEqual([]);
    expect(w.events).toContainEqual({
      on: "WebApp/test-app",
      type: "Normal",
      reason: "Scaled",
      message: "Deployment test-app-deployment updated to 3 replicas",
    });
  });

  test("scaled down again before the pass it asked for: that pass applies again and writes the status, asking for none", async () => {
    const w = world();
    const dep = w.cached(liveDeployment(testApp(), 1));
    const svc = w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc));
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    w.cached(liveDeployment(testApp(), 1)); // someone else's controller scales it back
    const outcome = await w.reconcile();
    expect(outcome.kind).not.toBe("requeue"); // no pass right after: a fight costs a write per event, not a loop
    expect(w.writes().filter((a) => a.path === DEP_PATH)).toHaveLength(2);
    expect(w.statusWrites()).toHaveLength(1);
  });

  test("replaced since the cache saw it: the apply's uid precondition fails, the new one is read whole and converged", async () => {
    const w = world();
    const cachedDep = w.cached(liveDeployment(testApp(), 1));
    w.api.put(DEPLOYMENT_RESOURCE, { ...cachedDep, metadata: { ...cachedDep.metadata, uid: "uid-new" } });
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(testApp());
    const before = w.api.actions.length;
    await w.reconcile();
    const onDeployment = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH);
    const uidOf = (a: { body: unknown }) => (a.body as KubeObject | undefined)?.metadata?.uid;
    // the apply to the cached one (refused), the read, the apply to the new one (compared with it)
    expect(onDeployment.map((a) => [a.method, uidOf(a)])).toEqual([
      ["PATCH", cachedDep.metadata.uid],
      ["GET", undefined],
      ["PATCH", "uid-new"],
    ]);
    const live = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment");
    expect([live?.metadata.uid, (live?.spec as { replicas?: number } | undefined)?.replicas]).toEqual(["uid-new", 3]);
    expect(degraded(w.statusWrites().at(-1))?.status).not.toBe("True");
  });

  test("deleted since the cache saw it (its event not seen yet): the apply is refused, the read finds none, created", async () => {
    const w = world();
    const cachedDep = w.cached(liveDeployment(testApp(), 1));
    await w.api.client.delete(DEPLOYMENT_RESOURCE, cachedDep.metadata.name ?? "", "default");
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(testApp());
    const before = w.api.actions.length;
    await w.reconcile();
    const onDeployment = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH || a.path === DEPS);
    expect(onDeployment.map((a) => `${a.method} ${a.path === DEPS ? "(create)" : ""}`.trim())).toEqual([
      "PATCH",
      "GET",
      "POST (create)",
    ]);
    const live = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment");
    expect((live?.spec as { replicas?: number } | undefined)?.replicas).toBe(3);
    expect(w.statusWrites().map((st) => degraded(st)?.status)).not.toContain("True");
  });

  test("deleted since, created again by the pass, the cache still behind: the next pass goes by our create, not the old one", async () => {
    // The chaos soak of 2026-12-07 (app-052): the pass after the re-creation converged from the cached old
    // Deployment, applied with its uid, and the API server refused it ("metadata.uid: field is immutable").
    const w = world();
    // resourceVersions are etcd revisions, increasing across objects: the old one's is below anything written next
    const dep = liveDeployment(testApp(), 1);
    const old = w.cached({ ...dep, metadata: { ...dep.metadata, resourceVersion: "50" } });
    await w.api.client.delete(DEPLOYMENT_RESOURCE, old.metadata.name ?? "", "default");
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(testApp());
    await w.reconcile();
    const created = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment");
    expect(created?.metadata.uid).not.toBe(old.metadata.uid);
    w.resync(); // a status write moved the WebApp; the Deployment's cache is still the old one
    const before = w.api.actions.length;
    await w.reconcile();
    const applies = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH && a.method === "PATCH");
    expect(applies.map((a) => (a.body as KubeObject).metadata?.uid)).not.toContain(old.metadata.uid);
    expect(w.statusWrites().map((st) => degraded(st)?.status)).not.toContain("True");
  });

  test("replaced since the cache saw it by someone else's: read whole, never written, reported", async () => {
    const w = world();
    const cachedDep = w.cached(liveDeployment(testApp(), 1));
    const { ownerReferences: _ours, ...theirs } = cachedDep.metadata;
    w.api.put(DEPLOYMENT_RESOURCE, { ...cachedDep, metadata: { ...theirs, uid: "uid-theirs" } });
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(testApp());
    await w.reconcile();
    const writes = w.writes().filter((a) => a.path === DEP_PATH);
    expect(writes.map((a) => (a.body as KubeObject).metadata.uid)).toEqual([cachedDep.metadata.uid]); // refused
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.metadata.uid).toBe("uid-theirs");
    expect(degraded(w.statusWrites().at(-1))?.reason).toBe("ResourceExists");
  });
});

describe("a same-named Deployment not controlled by the WebApp", () => {
  const foreign = (): KubeObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "test-app-deployment", namespace: "default", uid: "uid-theirs" },
    spec: { replicas: 7 },
  });

  /** Someone else's Deployment identical to ours but for the owner: server-side apply would see no conflicting field. */
  const identical = (): KubeObject => {
    const { ownerReferences: _none, ...metadata } = desiredDeployment(testApp() as WebApp).metadata;
    return { ...desiredDeployment(testApp() as WebApp), metadata: { ...metadata, uid: "uid-theirs" } };
  };

  test("is never written; the WebApp is Degraded ResourceExists with a Warning, and looked at again later", async () => {
    const w = world();
    w.cached(foreign()); // the cache holds every Deployment of the namespace (someone else's as metadata)
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeueAfter(RECHECK_MS));

    expect(w.api.actions.filter((a) => a.path.startsWith(DEP_PATH))).toEqual([]); // decided from the cache
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.spec).toEqual({ replicas: 7 });
    const [status] = w.statusWrites();
    expect(degraded(status)).toMatchObject({ status: "True", reason: "ResourceExists" });
    expect(degraded(status)?.message).toContain(
      "Deployment test-app-deployment exists and is not controlled by this WebApp",
    );
    expect(w.events.filter((e) => e.type === "Warning")).toEqual([
      { on: "WebApp/test-app", type: "Warning", reason: "ResourceExists", message: degraded(status)?.message ?? "" },
    ]);
  });

  for (const [what, theirs] of [
    ["identical to ours", identical],
    ["with another spec", foreign],
  ] as const)
    test(`not in the cache yet, ${what}: the create is refused (409 AlreadyExists); it is read and reported, never written`, async () => {
      const w = world();
      const before = w.api.put(DEPLOYMENT_RESOURCE, theirs()); // not in the cache yet
      w.stored(testApp());
      expect(await w.reconcile()).toEqual(requeueAfter(RECHECK_MS));

      const onDeployment = w.api.actions
        .filter((a) => a.path === DEP_PATH || a.path === DEPS)
        .map((a) => `${a.method} ${a.path}`);
      expect(onDeployment).toEqual([`POST ${DEPS}`, `GET ${DEP_PATH}`]); // the refused create, then the read
      expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")).toEqual(before);
      expect(degraded(w.statusWrites()[0])?.reason).toBe("ResourceExists");
      expect(w.events.map((e) => e.reason)).toEqual(["Created", "ResourceExists"]); // the Service was created
      expect(w.events[0]?.message).toBe(
        "Service test-app-svc created (port 80 -> 80); PodDisruptionBudget test-app-pdb created (max unavailable 1)",
      );
    });

  test("a refused create with nothing under the name is reported as the refusal and retried", async () => {
    const w = world();
    w.api.answer = (a) =>
      a.method === "POST" && a.path === DEPS
        ? { code: 422, message: "spec.template.spec.containers[0].image: Required value" }
        : undefined;
    w.stored(testApp());
    const err = await w.reconcile().catch((e: unknown) => e);
    expect((err as KubeError).reason).toBe("Invalid");
    expect(degraded(w.statusWrites()[0])).toMatchObject({ status: "True", reason: "ApplyFailed" });
  });

  test("is never written either when it carries our labels and sits in the cache", async () => {
    const w = world();
    const other = {
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      name: "other-app",
      uid: "uid-other",
      controller: true,
    };
    w.cached({
      ...liveDeployment(testApp(), 1),
      metadata: { ...liveDeployment(testApp()).metadata, ownerReferences: [other] },
    });
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeueAfter(RECHECK_MS));
    expect(w.writes().filter((a) => a.path.startsWith(DEP_PATH))).toEqual([]);
    expect(degraded(w.statusWrites()[0])?.reason).toBe("ResourceExists");
  });
});

describe("children left by a previous WebApp of the same name (deleted and created again)", () => {
  const previous = {
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    name: "test-app",
    uid: "uid-previous",
    controller: true,
    blockOwnerDeletion: true,
  };
  const leftOver = () => {
    const dep = liveDeployment(testApp(), 1);
    return { ...dep, metadata: { ...dep.metadata, ownerReferences: [previous] } };
  };

  test("are adopted by a JSON patch pinning the child's and the old owner's uid, once a GET confirms the WebApp, then converged", async () => {
    const w = world();
    w.cached(leftOver());
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeue(IN_TURN)); // its status is left to the pass after its writes
    const depWrites = w.writes().filter((a) => a.path === DEP_PATH);
    expect(depWrites.map((a) => a.contentType)).toEqual(["application/json-patch+json", APPLY]);
    expect(depWrites[0]?.body).toEqual([
      { op: "test", path: "/metadata/uid", value: "uid-dep" },
      { op: "test", path: "/metadata/ownerReferences/0/uid", value: "uid-previous" },
      { op: "replace", path: "/metadata/ownerReferences/0", value: { ...previous, uid: "uid-1" } },
    ]);
    const getWebApp = w.api.actions.findIndex((a) => a.method === "GET" && a.path === APP_PATH);
    expect(getWebApp).toBeGreaterThanOrEqual(0);
    expect(getWebApp).toBeLessThan(w.api.actions.indexOf(depWrites[0]!));
    const dep = w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment");
    expect(dep?.metadata.ownerReferences).toEqual([{ ...previous, uid: "uid-1" }]);
    expect((dep?.spec as { replicas: number } | undefined)?.replicas).toBe(3);
    expect(w.events.find((e) => e.reason === "Adopted")?.message).toBe(
      "Deployment test-app-deployment adopted from a deleted WebApp of the same name (uid uid-previous)",
    );
    w.childrenCached();
    expect(await w.reconcile()).toEqual(requeueAfter(POD_CHECK_AFTER_MS));
    expect(w.writes().filter((a) => a.path === DEP_PATH)).toHaveLength(2); // nothing more on the Deployment
    expect(degraded(w.statusWrites().at(-1))?.status).toBe("False");
  });

  test("not in the cache yet (the create conflicts) but found by the GET that follows: adopted the same way", async () => {
    const w = world();
    w.api.put(DEPLOYMENT_RESOURCE, leftOver());
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    const depWrites = w.writes().filter((a) => a.path === DEP_PATH || a.path === DEPS);
    // the refused create, the adoption, then the apply of the intent
    expect(depWrites.map((a) => `${a.method} ${a.contentType}`)).toEqual([
      `POST ${JSON_BODY}`,
      "PATCH application/json-patch+json",
      `PATCH ${APPLY}`,
    ]);
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.metadata.ownerReferences).toEqual([
      { ...previous, uid: "uid-1" },
    ]);
  });

  test("already adopted on the API server while the cache still shows the old owner: no patch, just the live child", async () => {
    const w = world();
    const stale = w.cached(leftOver());
    w.api.put(DEPLOYMENT_RESOURCE, {
      ...stale,
      metadata: { ...stale.metadata, ownerReferences: [{ ...previous, uid: "uid-1" }] },
    });
    w.stored(testApp());
    expect(await w.reconcile()).toEqual(requeue(IN_TURN));
    expect(
      w
        .writes()
        .filter((a) => a.path === DEP_PATH)
        .map((a) => a.contentType),
    ).toEqual([APPLY]);
  });

  test("gone from the API server while the cache still shows them (the garbage collector deleted them): created anew in that pass, nothing Degraded", async () => {
    const w = world();
    const stale = w.cached(leftOver());
    await w.api.client.delete(DEPLOYMENT_RESOURCE, stale.metadata.name ?? "", "default"); // its event not seen yet
    w.stored(testApp());
    const before = w.api.actions.length;
    await w.reconcile();
    const onDeployment = w.api.actions.slice(before).filter((a) => a.path === DEP_PATH || a.path === DEPS);
    expect(onDeployment.map((a) => `${a.method} ${a.path}`)).toEqual([`GET ${DEP_PATH}`, `POST ${DEPS}`]);
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.metadata.ownerReferences).toEqual([
      { ...previous, uid: "uid-1" },
    ]);
    expect(w.statusWrites().map((s) => degraded(s)?.status ?? "none")).not.toContain("True");
  });

  test("are left alone and reported when the cached WebApp is itself stale (the API server has a newer one)", async () => {
    const w = world();
    w.cached(leftOver());
    w.stored(testApp());
    w.api.put(WEBAPP_RESOURCE, { ...testApp(), metadata: { ...testApp().metadata, uid: "uid-newer" } });
    await w.reconcile();
    expect(w.writes().filter((a) => a.path === DEP_PATH)).toEqual([]);
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.metadata.ownerReferences).toEqual([
      previous,
    ]);
  });
});

describe("an invalid spec", () => {
  test("writes no child, only a Degraded InvalidSpec status naming the field, and is not retried", async () => {
    const w = world();
    w.stored(testApp({ replicas: 0 }));
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`)).toEqual([`PATCH ${APP_PATH}/status`]);
    const cond = degraded(w.statusWrites()[0]);
    expect(cond).toMatchObject({ status: "True", reason: "InvalidSpec" });
    expect(cond?.message).toContain("spec.replicas: must be at least 1 (got 0)");
    expect(w.events).toEqual([
      { on: "WebApp/test-app", type: "Warning", reason: "InvalidSpec", message: cond?.message ?? "" },
    ]);
  });

  test("reconciled again unchanged writes nothing and records no event", async () => {
    const w = world();
    w.stored(testApp({ replicas: 0 }));
    await w.reconcile();
    w.resync();
    const before = { actions: w.api.actions.length, events: w.events.length };
    await w.clock.advance(60_000);
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.length).toBe(before.actions);
    expect(w.events.length).toBe(before.events);
  });

  test("whose status changes otherwise (its pods became ready) gets the status written but no second Warning", async () => {
    const w = world();
    const app = testApp({ replicas: 0 });
    const valid = testApp();
    w.cached(liveDeployment(valid, 1));
    w.stored(app);
    await w.reconcile();
    w.resync();
    w.cached(liveDeployment(valid, 3));
    await w.reconcile();
    const writes = w.statusWrites();
    expect(writes).toHaveLength(2);
    expect(writes[1]?.body).toMatchObject({ status: { readyReplicas: 3 } });
    expect(degraded(writes[1])?.reason).toBe("InvalidSpec");
    expect(w.events.filter((e) => e.type === "Warning")).toHaveLength(1);
  });
});

describe("pods that cannot run", () => {
  const POD_PATH = "/api/v1/namespaces/default/pods";
  /** A pod of the WebApp's Deployment whose container waits for `reason`. */
  const pod = (name: string, waiting?: { reason: string; message: string }): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      labels: { app: "test-app", "managed-by": "webapp-operator" },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "ReplicaSet", name: "test-app-deployment-5d9", uid: "rs", controller: true },
      ],
    },
    status: {
      phase: waiting ? "Pending" : "Running",
      containerStatuses: [{ name: "app", state: waiting ? { waiting } : { running: {} } }],
    },
  });
  const pull = { reason: "ImagePullBackOff", message: 'Back-off pulling image "nginx:nope"' };
  /** A WebApp whose Deployment runs 1 of 3 pods, stored when its status was last written a minute ago. */
  /** A WebApp not Ready since `since` (its stored status written then), 1 of 3 pods available. */
  function stuck(since = START - 60_000) {
    const w = world();
    const dep = w.cached(liveDeployment(testApp(), 3));
    (dep.status as { availableReplicas: number; readyReplicas: number }).availableReplicas = 1;
    (dep.status as { availableReplicas: number; readyReplicas: number }).readyReplicas = 1;
    const svc = w.cached(liveService(testApp()));
    const pdb = w.cached(liveBudget(testApp()));
    w.stored(withStatus(testApp(), dep, svc, pdb, since));
    return w;
  }
  const podLists = (w: ReturnType<typeof world>) => w.api.actions.filter((a) => a.path === POD_PATH);
  const lastStatus = (w: ReturnType<typeof world>) =>
    (w.statusWrites().at(-1)?.body as { status?: WebApp["status"] } | undefined)?.status;

  test("are not read while a WebApp became not Ready less than POD_CHECK_AFTER_MS ago: it looks again then", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.childrenCached();
    const dep = w.cached(liveDeployment(testApp(), 3));
    (dep.status as { availableReplicas: number }).availableReplicas = 1;
    expect(await w.reconcile()).toEqual(requeueAfter(POD_CHECK_AFTER_MS));
    expect(podLists(w)).toEqual([]);
  });

  test("are neither read nor looked for on a timer while the Deployment reports none (a quota refuses them)", async () => {
    const w = stuck();
    const dep = w.cached(liveDeployment(testApp(), 3));
    dep.status = {
      observedGeneration: dep.metadata.generation,
      conditions: [
        { type: "Progressing", status: "True", reason: "NewReplicaSetCreated" },
        { type: "Available", status: "False", reason: "MinimumReplicasUnavailable" },
        { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: "exceeded quota: pods" },
      ],
    };
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, pod("test-app-a", pull));
    expect(await w.reconcile()).toEqual(done()); // its first pod changes status.replicas: an event, a pass
    expect(podLists(w)).toEqual([]);
    expect(findCondition(lastStatus(w)?.conditions, "Ready")).toMatchObject({ status: "False" });
    // Once it reports one, the pods are read again: the failure shows.
    (dep.status as { replicas: number }).replicas = 1;
    w.resync();
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    expect(podLists(w)).toHaveLength(1);
    expect(findCondition(lastStatus(w)?.conditions, "Stalled")).toMatchObject({ reason: "ImagePullBackOff" });
  });

  test("make a WebApp not Ready for longer Stalled with the pod's reason and message, with one Warning", async () => {
    const w = stuck();
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, pod("test-app-a", pull));
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, pod("test-app-b"));
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    expect(podLists(w).map((a) => a.query.labelSelector)).toEqual(["app=test-app,managed-by=webapp-operator"]);
    const status = lastStatus(w);
    const stalled = findCondition(status?.conditions, "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "ImagePullBackOff" });
    expect(stalled?.message).toBe(
      'pod test-app-a: container app ImagePullBackOff: Back-off pulling image "nginx:nope"; check spec.image (name, tag) and that the nodes can pull it',
    );
    expect(findCondition(status?.conditions, "Ready")).toMatchObject({ status: "False", reason: "ImagePullBackOff" });
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["ImagePullBackOff"]);
    w.resync();
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    expect(w.statusWrites()).toHaveLength(1);
    expect(w.events.filter((e) => e.type === "Warning")).toHaveLength(1);
  });

  test("a not-Ready status stamped by a clock ahead of this one (a previous leader's, an hour ahead): the pods are read now, not an hour later", async () => {
    const w = stuck(START + 3_600_000);
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, pod("test-app-a", pull));
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    expect(podLists(w)).toHaveLength(1);
    expect(findCondition(lastStatus(w)?.conditions, "Stalled")).toMatchObject({ reason: "ImagePullBackOff" });
  });

  test("the kubelet alternating ErrImagePull and ImagePullBackOff rewrites the message but sends no second Warning", async () => {
    const w = stuck();
    const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true } as const;
    w.api.put(PODS, pod("test-app-a", { reason: "ErrImagePull", message: "not found" }));
    await w.reconcile();
    w.resync();
    w.api.put(PODS, pod("test-app-a", pull));
    await w.reconcile();
    expect(w.statusWrites()).toHaveLength(2);
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["ImagePullBackOff"]);
    w.resync();
    w.api.put(PODS, pod("test-app-a", { reason: "CrashLoopBackOff", message: "back-off 10s" }));
    await w.reconcile();
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual([
      "ImagePullBackOff",
      "CrashLoopBackOff",
    ]);
  });

  test("a pod its readiness probe keeps unready: not Ready, Reconciling with the kubelet's words (one list of its events), not Stalled", async () => {
    const w = stuck();
    const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true } as const;
    const EVENTS = { group: "", version: "v1", plural: "events", kind: "Event", namespaced: true } as const;
    const unready = (name: string, startedAt: string): KubeObject => {
      const p = pod(name);
      p.spec = { containers: [{ name: "app", readinessProbe: { httpGet: { path: "/healthz", port: 8080 } } }] };
      p.status = {
        phase: "Running",
        containerStatuses: [{ name: "app", ready: false, state: { running: { startedAt } } }],
      };
      return p;
    };
    const unhealthy = (name: string, pod: string, message: string, at: string): KubeObject => ({
      apiVersion: "v1",
      kind: "Event",
      metadata: { name, namespace: "default" },
      involvedObject: { kind: "Pod", name: pod, namespace: "default", fieldPath: "spec.containers{app}" },
      reason: "Unhealthy",
      type: "Warning",
      message,
      lastTimestamp: at,
    });
    // Just started: the probe failed before the app listened, 2 s into the run on the kubelet's clock. Not a failure,
    // whatever the operator's clock says (here the node's is a day behind it).
    w.api.put(PODS, unready("test-app-a", "2019-12-31T00:00:00Z"));
    w.api.put(
      EVENTS,
      unhealthy("a.0", "test-app-a", "Readiness probe failed: connection refused", "2019-12-31T00:00:02Z"),
    );
    await w.reconcile();
    expect(w.api.actions.filter((a) => a.path.endsWith("/events")).length).toBe(1);
    expect(findCondition(lastStatus(w)?.conditions, "Degraded")?.status).not.toBe("True");

    w.resync();
    w.api.put(PODS, unready("test-app-a", "2020-01-01T00:00:00Z"));
    w.api.put(
      EVENTS,
      unhealthy(
        "a.1",
        "test-app-a",
        "Readiness probe failed: HTTP probe failed with statuscode: 500",
        "2020-01-01T00:00:10Z",
      ),
    );
    w.api.put(
      EVENTS,
      unhealthy(
        "a.2",
        "test-app-a",
        "Readiness probe failed: HTTP probe failed with statuscode: 404",
        "2020-01-01T00:01:00Z",
      ),
    );
    w.api.put(
      EVENTS,
      unhealthy("b.1", "test-app-b", "Readiness probe failed: connection refused", "2020-01-01T00:02:00Z"),
    );
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    const lists = w.api.actions.filter((a) => a.path === "/api/v1/namespaces/default/events" && a.method === "GET");
    expect(lists.map((a) => a.query.fieldSelector)).toEqual([
      "involvedObject.kind=Pod,involvedObject.name=test-app-a,reason=Unhealthy",
      "involvedObject.kind=Pod,involvedObject.name=test-app-a,reason=Unhealthy",
    ]);
    const status = lastStatus(w);
    const ready = findCondition(status?.conditions, "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "ProbeFailed" });
    expect(ready?.message).toContain(
      "pod test-app-a: container app: Readiness probe failed: HTTP probe failed with statuscode: 404; check spec.healthCheck",
    );
    expect(findCondition(status?.conditions, "Stalled")).toBeUndefined();
    expect(findCondition(status?.conditions, "Reconciling")).toMatchObject({ status: "True", reason: "ProbeFailed" });
    expect(findCondition(status?.conditions, "Degraded")).toMatchObject({ status: "True", reason: "ProbeFailed" });
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["ProbeFailed"]);
  });

  test("recovered (the pods run): Stalled is cleared", async () => {
    const w = stuck();
    const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true } as const;
    w.api.put(PODS, pod("test-app-a", pull));
    await w.reconcile();
    w.resync();
    w.api.put(PODS, pod("test-app-a"));
    await w.reconcile();
    const status = lastStatus(w);
    expect(findCondition(status?.conditions, "Stalled")).toBeUndefined();
    expect(findCondition(status?.conditions, "Reconciling")?.status).toBe("True");
  });

  test("a reported crash loop is not cleared when a restart makes the Deployment available for an instant", async () => {
    const w = stuck();
    const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true } as const;
    w.api.put(PODS, pod("test-app-a", { reason: "CrashLoopBackOff", message: "back-off 10s" }));
    await w.reconcile();
    w.resync();
    // The restarted container runs for a moment: its pod is Ready, so all 3 replicas are available.
    w.cached(liveDeployment(testApp(), 3));
    const restarted = pod("test-app-a");
    const startedAt = new Date(w.clock.now() - 1_000).toISOString();
    (restarted.status as { containerStatuses: unknown[] }).containerStatuses = [
      {
        name: "app",
        restartCount: 2,
        state: { running: { startedAt } },
        lastState: { terminated: { exitCode: 2, reason: "Error" } },
      },
    ];
    w.api.put(PODS, restarted);
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    const stalled = findCondition(lastStatus(w)?.conditions, "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "CrashLoopBackOff" });
    expect(stalled?.message).toContain("container app exited with code 2 (Error) after 2 restarts");
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["CrashLoopBackOff"]);
  });

  test("are not read by a pass already superseded by a newer queued one (its status is not written)", async () => {
    const w = stuck();
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, pod("test-app-a", pull));
    expect(await w.reconcile(true)).toEqual(requeueAfter(NOT_READY_RECHECK_MS));
    expect(podLists(w)).toEqual([]);
    expect(w.statusWrites()).toEqual([]);
  });

  test("of someone else (not controlled by one of our ReplicaSets) are not reported", async () => {
    const w = stuck();
    const foreign = pod("other", pull);
    foreign.metadata.ownerReferences = [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "other-5d9", uid: "x", controller: true },
    ];
    w.api.put({ group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true }, foreign);
    await w.reconcile();
    expect(podLists(w)).toHaveLength(1);
    expect(w.statusWrites()).toEqual([]); // still the stored status: Reconciling, not Stalled
    expect(w.events).toEqual([]);
  });
});

describe("a child write the API server refuses", () => {
  const cases = [
    {
      code: 403,
      message:
        'deployments.apps "test-app-deployment" is forbidden: User "system:serviceaccount:devctl:op" cannot create resource "deployments"',
      reason: "Forbidden",
      thrown: "Forbidden",
    },
    { code: 500, message: "etcdserver: request timed out", reason: "ApplyFailed", thrown: "Other" },
  ] as const;
  for (const c of cases) {
    test(`(${c.code}) is reported in the status as Degraded ${c.reason} with the API message, then thrown for a retry`, async () => {
      const w = world();
      w.stored(testApp());
      w.api.answer = (a) => (a.method === "POST" && a.path === DEPS ? { code: c.code, message: c.message } : undefined);
      const err = await w.reconcile().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeError);
      expect((err as KubeError).reason).toBe(c.thrown);

      const [status] = w.statusWrites();
      expect(status).toMatchObject({ method: "PATCH", contentType: MERGE });
      expect(degraded(status)).toMatchObject({ status: "True", reason: c.reason });
      expect(degraded(status)?.message).toContain(c.message);
      expect(w.events).toContainEqual(expect.objectContaining({ type: "Warning", reason: c.reason }));
    });
  }
});

describe("a WebApp with nothing to do", () => {
  test("gone from the cache: done, no actions", async () => {
    const w = world();
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions).toEqual([]);
  });

  test("being deleted: done, no actions", async () => {
    const w = world();
    w.stored({
      ...testApp(),
      metadata: {
        ...testApp().metadata,
        deletionTimestamp: "2024-05-01T11:00:00Z",
        finalizers: ["foregroundDeletion"],
      },
    });
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions).toEqual([]);
    expect(w.events).toEqual([]);
  });

  test("deleted while its status is written: the 404 is no error", async () => {
    const w = world();
    w.cached(liveDeployment(testApp()));
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.webapps.set(KEY, testApp()); // only the cache remembers it
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`)).toEqual([`PATCH ${APP_PATH}/status`]);
  });
});

describe("a WebApp the cache still holds but the API server no longer has", () => {
  test("gets its children created without asking, once more beside the check that finds it gone, then never", async () => {
    const w = world();
    w.webapps.set(KEY, testApp()); // deleted: only the lagging cache remembers it
    await w.created();
    expect(w.api.actions.filter((a) => a.method === "GET")).toEqual([]);
    expect(w.writes().filter((a) => [DEPS, SVCS, PDBS].includes(a.path))).toHaveLength(3);
    const collect = async () => {
      w.childrenCached(); // their add events
      await w.reconcile(); // the cache has shown them: it is what counts from now on
      for (const k of CHILD_KINDS)
        await w.api.client.delete(k.rt, k.name("test-app"), "default").catch(() => undefined); // the garbage collector
      w.childrenCached(); // their delete events reconcile the stale WebApp again
    };
    await collect();
    const before = w.api.actions.length;
    // A re-creation within CREATED_TTL_MS of a creation asks: the WebApp is gone, and its uid is remembered.
    expect(await w.reconcile()).toEqual(done());
    expect(
      w.api.actions
        .slice(before)
        .map((a) => `${a.method} ${a.path}`)
        .sort(),
    ).toEqual([`GET ${APP_PATH}`, `POST ${DEPS}`].sort()); // found gone: no Service created after it
    await collect(); // what it created beside the check is collected too
    const after = w.api.actions.length;
    for (const wait of [0, CREATED_TTL_MS - 1]) {
      await w.clock.advance(wait);
      expect(await w.reconcile()).toEqual(done()); // no create/delete loop with the collector: no request at all
    }
    expect(w.api.actions.length).toBe(after);
  });

  test("reconciled before (it has a status): the check beside the creates finds it gone, and nothing is asked or created again", async () => {
    const w = world();
    // Deleted: only the lagging cache remembers it, and the garbage collector removed its children.
    w.webapps.set(KEY, withStatus(testApp(), liveDeployment(testApp()), liveService(testApp())));
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`).sort()).toEqual(
      [`GET ${APP_PATH}`, `POST ${DEPS}`, `POST ${SVCS}`, `POST ${PDBS}`].sort(),
    );
    expect(w.events).toEqual([]); // what it created is the collector's, not announced
    const before = w.api.actions.length;
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.length).toBe(before);
  });

  test("a check that fails is retried: the create it ran beside is awaited first, and the uid is not taken for gone", async () => {
    let fail = true;
    const w = world({
      wrap: (client) => ({
        ...client,
        get: async (rt, name, ns, signal) => {
          if (fail && rt.kind === "WebApp") throw new Error("connection reset");
          return client.get(rt, name, ns, signal);
        },
      }),
    });
    w.stored(withStatus(testApp(), liveDeployment(testApp()), liveService(testApp())));
    await expect(w.reconcile()).rejects.toThrow("connection reset");
    expect(w.writes().filter((a) => a.path === DEPS || a.path === SVCS)).toHaveLength(2); // both answered
    fail = false;
    w.childrenCached();
    await w.reconcile();
    expect(w.api.actions.filter((a) => a.method === "GET" && a.path === APP_PATH)).toHaveLength(0);
    expect(w.statusWrites().length).toBeGreaterThan(0); // reconciled as the live WebApp it is
  });

  test("nor does one replaced by a new WebApp of the same name (another uid) get them created more than beside its check", async () => {
    const w = world();
    w.api.put(WEBAPP_RESOURCE, testApp({}, "uid-2"));
    w.webapps.set(KEY, testApp({}, "uid-1"));
    await w.reconcile();
    const before = w.writes().length;
    await w.clock.advance(WRITTEN_TTL_MS); // what it wrote is forgotten; the cache never showed it
    const asked = w.api.actions.length;
    expect(await w.reconcile()).toEqual(done());
    expect(w.api.actions.slice(asked)).toContainEqual(expect.objectContaining({ method: "GET", path: APP_PATH }));
    const after = w.writes().length;
    expect(after - before).toBeLessThanOrEqual(2); // the creates beside the check (409: the first ones exist)
    expect(await w.reconcile()).toEqual(done());
    expect(w.writes().length).toBe(after); // uid-1 is known gone
  });
});

describe("a status already superseded by a newer queued pass", () => {
  test("is not written while it only reports progress: the queued pass writes what it observes", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.childrenCached();
    expect(await w.reconcile(true)).toEqual(done()); // no pod yet: its first comes as an event
    expect(w.statusWrites()).toEqual([]); // Reconciling: the rollout has not started
    await w.reconcile(false);
    expect(w.statusWrites()).toHaveLength(1);
  });

  test("is written at once when it turns Stalled True, with its Warning (someone may be waiting for it)", async () => {
    const w = world();
    w.cached({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "test-app-deployment", namespace: "default", uid: "uid-theirs" },
    });
    w.stored(testApp());
    expect(await w.reconcile(true)).toEqual(requeueAfter(RECHECK_MS));
    expect(w.statusWrites()).toHaveLength(1);
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual(["ResourceExists"]);
  });

  test("is written at once when it turns Ready True", async () => {
    const w = world();
    w.cached(liveDeployment(testApp()));
    w.cached(liveService(testApp()));
    w.cached(liveBudget(testApp()));
    w.stored(testApp());
    await w.reconcile(true);
    const [status] = w.statusWrites();
    expect(findCondition((status?.body as { status?: WebApp["status"] })?.status?.conditions, "Ready")?.status).toBe(
      "True",
    );
  });

  test("is written when nothing newer is queued", async () => {
    const w = world();
    w.stored(testApp());
    await w.created();
    w.childrenCached();
    await w.reconcile(false);
    expect(w.statusWrites()).toHaveLength(1);
  });
});

describe("automatic rollback (spec.rollout.autoRollback, the operator's --auto-rollback)", () => {
  const PODS = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true } as const;
  const crashing: KubeObject = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "test-app-new",
      namespace: "default",
      labels: { app: "test-app", "managed-by": "webapp-operator" },
      ownerReferences: [
        { apiVersion: "apps/v1", kind: "ReplicaSet", name: "test-app-deployment-7c4", uid: "rs2", controller: true },
      ],
    },
    status: {
      phase: "Running",
      containerStatuses: [
        { name: "app", state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 10s restarting" } } },
      ],
    },
  };
  const image = (w: ReturnType<typeof world>) =>
    (w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment") as ReturnType<typeof desiredDeployment>).spec
      .template.spec.containers[0]?.image;
  const stored = (w: ReturnType<typeof world>) =>
    w.api.object(WEBAPP_RESOURCE, "default", "test-app") as unknown as WebApp;

  /** app:v1 Ready (revision 1), then the spec changed to app:v2, whose pods crash-loop: reported failed. */
  async function failingRollout(autoRollback: boolean) {
    const w = world({ autoRollback });
    const v1 = testApp({ image: "app:v1" });
    const dep = w.cached(liveDeployment(v1, 3));
    const svc = w.cached(liveService(v1));
    w.cached(liveBudget(v1));
    const ready = withStatus(v1, dep, svc);
    expect(ready.status?.rollouts?.map((r) => [r.revision, r.image, r.readyAt !== undefined])).toEqual([
      [1, "app:v1", true],
    ]);
    w.stored({ ...testApp({ image: "app:v2" }, "uid-1", 2), status: ready.status });
    expect(await w.reconcile()).toEqual(requeue(IN_TURN)); // applies app:v2, leaves the status to the next pass
    expect(image(w)).toBe("app:v2");
    w.childrenCached();
    await w.reconcile();
    w.resync();
    w.api.put(PODS, crashing);
    await w.clock.advance(POD_CHECK_AFTER_MS);
    await w.reconcile(); // reads the pods: Stalled CrashLoopBackOff, revision 2 failed
    w.resync();
    const failed = stored(w).status?.rollouts?.at(-1);
    expect([failed?.revision, failed?.image, failed?.reason]).toEqual([2, "app:v2", "CrashLoopBackOff"]);
    return w;
  }

  test("a revision failing for failureThreshold runs the last Ready image again and says RolledBack, counted once", async () => {
    const w = await failingRollout(true);
    await w.clock.advance(30_000);
    expect(await w.reconcile()).toEqual(requeueAfter(NOT_READY_RECHECK_MS)); // not confirmed yet: 30 s to go
    expect(image(w)).toBe("app:v2");
    await w.clock.advance(30_000);
    expect(await w.reconcile()).toEqual(requeue(IN_TURN)); // the rollback: app:v1 applied, status left
    expect(image(w)).toBe("app:v1");
    expect(w.rollbacks).toEqual([]);
    // The leader dies here; the next one decides the same from the stored status, writes nothing more and reports it.
    w.restart();
    w.childrenCached();
    const writes = w.writes().length;
    await w.reconcile();
    expect(
      w
        .writes()
        .slice(writes)
        .map((a) => a.path),
    ).toEqual([`${APP_PATH}/status`]);
    w.resync();
    const status = stored(w).status;
    expect(findCondition(status?.conditions, "Stalled")).toMatchObject({ status: "True", reason: "RolledBack" });
    expect(findCondition(status?.conditions, "Ready")).toMatchObject({ status: "False", reason: "RolledBack" });
    expect(status?.rollouts?.at(-1)).toMatchObject({ revision: 2, reason: "CrashLoopBackOff" });
    expect(status?.rollouts?.at(-1)?.rolledBackAt).toBeDefined();
    expect(status?.lastReadyRevision).toBe(1);
    expect(w.rollbacks).toEqual(["test-app"]);
    expect(w.events.filter((e) => e.type === "Warning").map((e) => e.reason)).toEqual([
      "CrashLoopBackOff",
      "RolledBack",
    ]);
    // The crashing pods are gone: it holds, with no write and no second count.
    w.api.put(PODS, {
      ...crashing,
      status: { phase: "Running", containerStatuses: [{ name: "app", state: { running: {} } }] },
    });
    await w.clock.advance(600_000);
    const before = w.writes().length;
    const actions = w.api.actions.length;
    expect(await w.reconcile()).toEqual(done()); // settled: no pod read, no timer, until something changes
    expect(w.api.actions.slice(actions).filter((a) => a.path.endsWith("/pods"))).toEqual([]);
    expect(
      w
        .writes()
        .slice(before)
        .filter((a) => a.path !== `${APP_PATH}/status`),
    ).toEqual([]);
    expect(image(w)).toBe("app:v1");
    expect(w.rollbacks).toEqual(["test-app"]);
    // A new spec rolls forward, as revision 3.
    w.stored({ ...testApp({ image: "app:v3" }, "uid-1", 3), status: stored(w).status });
    await w.reconcile();
    expect(image(w)).toBe("app:v3");
  });

  test("a new leader on a node an hour behind rolls back on time: it stamps and compares on the API server's clock", async () => {
    const w = await failingRollout(true);
    await w.clock.advance(30_000);
    // The leader dies. The next one runs on a node whose clock is an hour behind the API server's (w.clock).
    const HOUR = 3_600_000;
    const behind: Clock = {
      now: () => w.clock.now() - HOUR,
      setTimeout: (fn, ms) => w.clock.setTimeout(fn, ms),
      clearTimeout: (t) => w.clock.clearTimeout(t),
      sleep: (ms, signal) => w.clock.sleep(ms, signal),
    };
    await w.clock.advance(31_000); // past failedAt + failureThreshold, on the API server's clock, by 1 s
    // On its own clock, failedAt is an hour ahead: no rollback for another hour (as before server-time.ts).
    w.restart(behind);
    w.childrenCached();
    await w.reconcile();
    expect(image(w)).toBe("app:v2");
    // On the API server's clock, read from one answer's Date header (operator/manager.ts wires every answer's).
    const time = new ServerTime();
    time.observe(new Date(w.clock.now()).toUTCString(), behind.now(), behind.now());
    w.restart(serverTimeClock(behind, time));
    w.childrenCached();
    await w.reconcile();
    expect(image(w)).toBe("app:v1");
    w.childrenCached();
    await w.reconcile(); // the status the rollback left to the next pass
    w.resync();
    const rolledBackAt = Date.parse(stored(w).status?.rollouts?.at(-1)?.rolledBackAt ?? "");
    expect(Math.abs(rolledBackAt - w.clock.now())).toBeLessThan(1_000); // stamped in the API server's time
  });

  test("without autoRollback a failed revision keeps running, as before", async () => {
    const w = await failingRollout(false);
    await w.clock.advance(3_600_000);
    await w.reconcile();
    expect(image(w)).toBe("app:v2");
    expect(w.rollbacks).toEqual([]);
  });
});
