import { describe, expect, test } from "bun:test";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import type { EventSource } from "../runtime/source.ts";
import { createFakeApiServer } from "./_fake-apiserver.ts";
import { testApp } from "./_test-fixtures.ts";
import { desiredDeployment, desiredService } from "./desired.ts";
import { createOrphanCollector, goneOwner, ORPHAN_GRACE_MS, ORPHAN_SWEEP_MS } from "./orphans.ts";

const DEP_PATH = "/apis/apps/v1/namespaces/default/deployments/test-app-deployment";

/** A child of the WebApp `testApp(uid)` as the API server stores it. */
function childOf(uid: string, kind: "Deployment" | "Service" = "Deployment"): KubeObject {
  const app = testApp({}, uid);
  const intent = kind === "Deployment" ? desiredDeployment(app) : desiredService(app);
  return { ...intent, metadata: { ...intent.metadata, uid: `child-of-${uid}-${kind}` } } as KubeObject;
}

const source = (items: () => KubeObject[], synced = () => true): EventSource<KubeObject> => ({
  onEvent: () => () => {},
  hasSynced: synced,
  list: items,
});

/** The collector over a fake API server: `webapps` and `deployments` are what the caches hold. */
function world() {
  const api = createFakeApiServer();
  const clock = createFakeClock(1_000_000);
  const webapps: KubeObject[] = [];
  const deployments: KubeObject[] = [];
  const events: string[] = [];
  const logs: string[] = [];
  let synced = true;
  const recorder: EventRecorder = {
    event: (obj, type, reason, message) =>
      void events.push(`${obj.kind}/${obj.metadata.name} ${type} ${reason}: ${message}`),
    flush: async () => {},
  };
  const logger = {
    debug() {},
    info: (m: string) => void logs.push(m),
    warn: (m: string) => void logs.push(m),
    error() {},
  };
  const collector = createOrphanCollector({
    client: api.client,
    webapps: source(
      () => webapps,
      () => synced,
    ),
    children: [
      { rt: DEPLOYMENT_RESOURCE, source: source(() => deployments) },
      { rt: SERVICE_RESOURCE, source: source(() => []) },
    ],
    recorder,
    clock,
    logger,
  });
  return {
    api,
    clock,
    webapps,
    deployments,
    events,
    logs,
    collector,
    unsynced: () => void (synced = false),
    /** A child stored and cached. */
    child(obj: KubeObject): KubeObject {
      const live = api.put(DEPLOYMENT_RESOURCE, obj);
      deployments.push(live);
      return live;
    },
    deletes: () => api.actions.filter((a) => a.method === "DELETE"),
    /** One sweep, then the grace period, then another. */
    async twoSweeps() {
      const first = await collector.sweep();
      await clock.advance(ORPHAN_GRACE_MS);
      return [first, await collector.sweep()];
    },
  };
}

describe("which children are orphans", () => {
  test("a child controlled by a WebApp whose uid no live WebApp has is one; its owner reference is returned", () => {
    const child = childOf("gone");
    expect(goneOwner(child, new Set(["other"]))).toMatchObject({ kind: "WebApp", name: "test-app", uid: "gone" });
    expect(goneOwner(child, new Set(["gone"]))).toBeUndefined();
  });

  test("a child without a controller, controlled by another kind or group, or being deleted is never one", () => {
    const child = childOf("gone");
    const ref = child.metadata.ownerReferences![0]!;
    const withRefs = (refs: (typeof ref)[]) => ({ ...child, metadata: { ...child.metadata, ownerReferences: refs } });
    const none = new Set<string>();
    expect(goneOwner(withRefs([]), none)).toBeUndefined();
    expect(goneOwner(withRefs([{ ...ref, controller: false }]), none)).toBeUndefined();
    expect(goneOwner(withRefs([{ ...ref, kind: "ReplicaSet" }]), none)).toBeUndefined();
    expect(goneOwner(withRefs([{ ...ref, apiVersion: "example.org/v1" }]), none)).toBeUndefined();
    const deleting = { ...child, metadata: { ...child.metadata, deletionTimestamp: "2026-12-01T00:00:00Z" } };
    expect(goneOwner(deleting, none)).toBeUndefined();
  });

  test("a child of a gone WebApp without our managed-by label (someone else's, now cached too) is never one", () => {
    const child = childOf("gone");
    const labelled = (labels: Record<string, string> | undefined) => ({
      ...child,
      metadata: { ...child.metadata, labels },
    });
    const none = new Set<string>();
    expect(goneOwner(labelled(undefined), none)).toBeUndefined();
    expect(goneOwner(labelled({ app: "test-app" }), none)).toBeUndefined();
    expect(goneOwner(labelled({ app: "test-app", "managed-by": "someone-else" }), none)).toBeUndefined();
    expect(goneOwner(labelled({ "managed-by": "webapp-operator" }), none)?.uid).toBe("gone");
  });
});

describe("the orphan collector", () => {
  test("deletes an orphan seen for the grace period, once a GET finds no WebApp of its owner's name: with a uid precondition, an event and a log line", async () => {
    const w = world();
    const child = w.child(childOf("gone"));
    const [first, second] = await w.twoSweeps();
    expect(first).toEqual([{ kind: "waiting", child: "Deployment default/test-app-deployment" }]);
    expect(second).toEqual([
      { kind: "deleted", child: "Deployment default/test-app-deployment", owner: "test-app (uid gone)" },
    ]);
    expect(w.api.actions.map((a) => `${a.method} ${a.path}`)).toEqual([
      "GET /apis/apps.example.com/v1/namespaces/default/webapps/test-app",
      `DELETE ${DEP_PATH}`,
    ]);
    expect(w.deletes()[0]?.body).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      preconditions: { uid: child.metadata.uid, resourceVersion: child.metadata.resourceVersion },
      propagationPolicy: "Background",
    });
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")).toBeUndefined();
    expect(w.events).toEqual([
      expect.stringMatching(
        /^Deployment\/test-app-deployment Normal OrphanDeleted: deleted Deployment default\/test-app-deployment: its controller WebApp test-app \(uid gone\) no longer exists/,
      ),
    ]);
    expect(w.logs).toEqual([expect.stringContaining("deleted Deployment default/test-app-deployment")]);
  });

  test("never deletes a child that changed after the cache showed it (adopted a moment ago): its resourceVersion precondition fails", async () => {
    const w = world();
    const child = w.child(childOf("gone"));
    // Between the sweep's look and its DELETE, a WebApp of the owner's name adopted the child (the cache lags).
    const adopted = { ...child, metadata: { ...child.metadata, resourceVersion: "9999" } };
    w.api.answer = (a) => {
      if (a.method === "DELETE") w.api.put(DEPLOYMENT_RESOURCE, adopted);
      return undefined;
    };
    const [, second] = await w.twoSweeps();
    expect(second).toEqual([{ kind: "changed", child: "Deployment default/test-app-deployment" }]);
    expect(w.api.object(DEPLOYMENT_RESOURCE, "default", "test-app-deployment")?.metadata.resourceVersion).toBe("9999");
    expect(w.events).toEqual([]);
  });

  test("leaves a child whose owner name belongs to a re-created WebApp (adoption's case) or whose owner the cache has not seen yet", async () => {
    const w = world();
    w.child(childOf("gone"));
    w.api.put(WEBAPP_RESOURCE, testApp({}, "new-incarnation"));
    expect((await w.twoSweeps())[1]).toEqual([{ kind: "re-created", child: "Deployment default/test-app-deployment" }]);
    const lagging = world();
    lagging.child(childOf("not-cached-yet"));
    lagging.api.put(WEBAPP_RESOURCE, testApp({}, "not-cached-yet"));
    expect((await lagging.twoSweeps())[1]).toEqual([
      { kind: "owner-exists", child: "Deployment default/test-app-deployment" },
    ]);
    expect([...w.deletes(), ...lagging.deletes()]).toEqual([]);
  });

  test("never touches a child of a live WebApp, and nothing before every cache has synced", async () => {
    const w = world();
    w.webapps.push(w.api.put(WEBAPP_RESOURCE, testApp({}, "live")) as unknown as KubeObject);
    w.child(childOf("live"));
    expect(await w.twoSweeps()).toEqual([[], []]);
    const early = world();
    early.child(childOf("gone"));
    early.unsynced();
    expect(await early.twoSweeps()).toEqual([[], []]);
    expect([...w.api.actions, ...early.api.actions]).toEqual([]);
  });

  test("leaves someone else's unlabelled objects in the caches alone, even when a gone WebApp controls them", async () => {
    const w = world();
    const foreign = childOf("gone");
    w.child({ ...foreign, metadata: { ...foreign.metadata, labels: { app: "test-app" } } });
    w.child({ ...childOf("other-gone"), metadata: { name: "unowned", namespace: "default", uid: "u-unowned" } });
    expect(await w.twoSweeps()).toEqual([[], []]);
    expect(w.api.actions).toEqual([]);
  });

  test("a child replaced meanwhile (the uid precondition fails with 409) is left alone, with no event", async () => {
    const w = world();
    w.child(childOf("gone"));
    w.api.answer = (a) =>
      a.method === "DELETE" ? { code: 409, message: "Precondition failed: UID in precondition" } : undefined;
    expect((await w.twoSweeps())[1]).toEqual([{ kind: "changed", child: "Deployment default/test-app-deployment" }]);
    expect(w.events).toEqual([]);
  });

  test("a child that stops being an orphan starts its grace period again when it becomes one", async () => {
    const w = world();
    w.child(childOf("gone"));
    await w.collector.sweep();
    const adopted = w.deployments.splice(0, 1);
    await w.clock.advance(ORPHAN_GRACE_MS);
    expect(await w.collector.sweep()).toEqual([]);
    w.deployments.push(...adopted);
    expect(await w.collector.sweep()).toEqual([{ kind: "waiting", child: "Deployment default/test-app-deployment" }]);
    expect(w.deletes()).toEqual([]);
  });

  test("run() sweeps every interval until its signal aborts, and a failed sweep does not stop it", async () => {
    const w = world();
    w.child(childOf("gone"));
    w.api.answer = (a) => (a.method === "GET" ? { code: 500, message: "etcd is down" } : undefined);
    const stop = new AbortController();
    const running = w.collector.run(stop.signal);
    await w.clock.advance(ORPHAN_GRACE_MS + ORPHAN_SWEEP_MS);
    expect(w.logs).toEqual([expect.stringContaining("collecting orphaned children failed")]);
    w.api.answer = undefined;
    await w.clock.advance(ORPHAN_SWEEP_MS);
    expect(w.deletes().length).toBe(1);
    stop.abort();
    await running;
  });
});
