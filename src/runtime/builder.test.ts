import { describe, expect, test } from "bun:test";
import type { KubeObject, OwnerReference } from "../kube/types.ts";
import { fakeSource, recordingLogger } from "./_fake-source.ts";
import { controllerBuilder } from "./builder.ts";
import { createFakeClock } from "./clock.ts";
import type { WatchOptions } from "./controller.ts";
import { done } from "./reconcile.ts";
import { controllerOwnerKey, enqueueForOwner, groupOf } from "./source.ts";

const WEBAPP = { group: "platform.example.com", kind: "WebApp" };

function owner(name: string, extra: Partial<OwnerReference> = {}): OwnerReference {
  return {
    apiVersion: "platform.example.com/v1",
    kind: "WebApp",
    name,
    uid: `uid-${name}`,
    controller: true,
    ...extra,
  };
}
function obj(namespace: string, name: string, ownerReferences?: OwnerReference[]): KubeObject {
  return { metadata: { namespace, name, ...(ownerReferences ? { ownerReferences } : {}) } };
}

function setup() {
  const clock = createFakeClock();
  const seen: string[] = [];
  const webapps = fakeSource<KubeObject>([obj("ns", "a"), obj("ns", "b")]);
  const deployments = fakeSource<KubeObject>();
  const configMaps = fakeSource<KubeObject>();
  const ctrl = controllerBuilder()
    .for(webapps, WEBAPP)
    .owns(deployments)
    .watches(configMaps, (cm) =>
      cm.metadata.labels?.app ? [`${cm.metadata.namespace}/${cm.metadata.labels.app}`] : [],
    )
    .build({
      name: "webapp",
      clock,
      logger: recordingLogger(),
      reconcile: async (req) => (seen.push(req.key), done()),
      resync: { random: () => 0.5 },
    });
  return { clock, seen, webapps, deployments, configMaps, ctrl };
}

/** A controller for WebApps owning Deployments whose events have `priority`; not started, no resync. */
function withOwnsPriority(priority: NonNullable<WatchOptions<KubeObject>["priority"]>) {
  const clock = createFakeClock();
  const seen: string[] = [];
  const webapps = fakeSource<KubeObject>();
  const deployments = fakeSource<KubeObject>();
  const ctrl = controllerBuilder()
    .for(webapps, WEBAPP)
    .owns(deployments, { priority })
    .build({
      name: "webapp",
      clock,
      logger: recordingLogger(),
      reconcile: async (req) => (seen.push(req.key), done()),
      resync: false,
    });
  return { clock, seen, webapps, deployments, ctrl };
}

describe("controller builder", () => {
  test("for() with a predicate enqueues only the events it keeps", async () => {
    const clock = createFakeClock();
    const seen: string[] = [];
    const webapps = fakeSource<KubeObject>();
    const ctrl = controllerBuilder()
      .for(webapps, WEBAPP, (e) => e.object.metadata.name !== "dropped")
      .build({
        name: "webapp",
        clock,
        logger: recordingLogger(),
        reconcile: async (req) => (seen.push(req.key), done()),
        resync: false,
      });
    await ctrl.start();
    webapps.emit({ type: "add", object: obj("ns", "dropped") });
    webapps.emit({ type: "add", object: obj("ns", "kept") });
    await clock.settle();
    expect(seen).toEqual(["ns/kept"]);
    await ctrl.stop();
  });

  test("owns() with a priority hands its keys out before keys the for() kind queued earlier", async () => {
    const t = withOwnsPriority(1);
    t.webapps.emit({ type: "add", object: obj("ns", "a") });
    t.webapps.emit({ type: "add", object: obj("ns", "b") });
    t.deployments.emit({ type: "add", object: obj("ns", "b-web", [owner("b")]) });
    t.deployments.emit({ type: "add", object: obj("ns", "c-web", [owner("c")]) });
    await t.ctrl.start();
    await t.clock.settle();
    expect(t.seen).toEqual(["ns/b", "ns/c", "ns/a"]);
    await t.ctrl.stop();
  });

  test("owns() with a priority per event gives each event's keys its own priority", async () => {
    const t = withOwnsPriority((e) => (e.type === "delete" ? 1 : 0));
    t.webapps.emit({ type: "add", object: obj("ns", "a") });
    t.deployments.emit({ type: "add", object: obj("ns", "b-web", [owner("b")]) });
    t.deployments.emit({ type: "delete", object: obj("ns", "c-web", [owner("c")]) });
    await t.ctrl.start();
    await t.clock.settle();
    expect(t.seen).toEqual(["ns/c", "ns/a", "ns/b"]);
    await t.ctrl.stop();
  });

  test("for() enqueues the object's own key", async () => {
    const t = setup();
    await t.ctrl.start();
    t.webapps.emit({ type: "add", object: obj("ns", "a") });
    await t.clock.settle();
    expect(t.seen).toEqual(["ns/a"]);
    await t.ctrl.stop();
  });

  test("owns() maps a child to its controller owner's key, including on delete", async () => {
    const t = setup();
    await t.ctrl.start();
    t.deployments.emit({
      type: "update",
      object: obj("ns", "a-web", [owner("a")]),
      old: obj("ns", "a-web", [owner("a")]),
    });
    await t.clock.settle();
    t.deployments.emit({ type: "delete", object: obj("ns", "b-web", [owner("b")]) });
    await t.clock.settle();
    expect(t.seen).toEqual(["ns/a", "ns/b"]);
    await t.ctrl.stop();
  });

  test("owns() ignores children whose controller owner is another kind, or who only have non-controller owners", async () => {
    const t = setup();
    await t.ctrl.start();
    t.deployments.emit({ type: "add", object: obj("ns", "x", [owner("a", { kind: "Other" })]) });
    t.deployments.emit({ type: "add", object: obj("ns", "y", [owner("a", { apiVersion: "other.example.com/v1" })]) });
    t.deployments.emit({ type: "add", object: obj("ns", "z", [owner("a", { controller: false })]) });
    t.deployments.emit({ type: "add", object: obj("ns", "w") });
    await t.clock.settle();
    expect(t.seen).toEqual([]);
    await t.ctrl.stop();
  });

  test("watches() enqueues the keys its map function returns", async () => {
    const t = setup();
    await t.ctrl.start();
    t.configMaps.emit({ type: "add", object: { metadata: { namespace: "ns", name: "cfg", labels: { app: "b" } } } });
    t.configMaps.emit({ type: "add", object: { metadata: { namespace: "ns", name: "unrelated" } } });
    await t.clock.settle();
    expect(t.seen).toEqual(["ns/b"]);
    await t.ctrl.stop();
  });

  test("the for() source's objects are all resynced every 10 h", async () => {
    const t = setup();
    await t.ctrl.start();
    await t.clock.advance(10 * 3_600_000);
    expect(t.seen).toEqual(["ns/a", "ns/b"]);
    await t.ctrl.stop();
  });

  test("build() without for() says what is missing", () => {
    expect(() =>
      controllerBuilder().build({ name: "x", logger: recordingLogger(), reconcile: async () => done() }),
    ).toThrow(/call for\(source, kind\) before build\(\)/);
  });
});

describe("owner mapping", () => {
  test("an update whose controller owner changed enqueues both owners", () => {
    const keys: string[] = [];
    enqueueForOwner(WEBAPP)(
      { type: "update", old: obj("ns", "d", [owner("old")]), object: obj("ns", "d", [owner("new")]) },
      (k) => keys.push(k),
    );
    expect(keys).toEqual(["ns/old", "ns/new"]);
  });

  test("a cluster-scoped owner's key is its name alone", () => {
    expect(controllerOwnerKey(obj("ns", "d", [owner("a")]), { ...WEBAPP, namespaced: false })).toBe("a");
  });

  test("owner references match on group and kind, whatever the version", () => {
    expect(
      controllerOwnerKey(obj("ns", "d", [owner("a", { apiVersion: "platform.example.com/v2beta1" })]), WEBAPP),
    ).toBe("ns/a");
    expect(groupOf("v1")).toBe("");
    expect(groupOf("apps/v1")).toBe("apps");
  });
});
