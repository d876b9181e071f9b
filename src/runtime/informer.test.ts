import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createInformer, mergeInformers, type SourceEvent } from "./informer.ts";
import { CONTROLLER_INDEX, controllerIndex } from "./store.ts";
import type { Logger } from "./logger.ts";
import { createFakeKube, WatchScript } from "./_fake-kube.ts";
import type { KubeList, KubeObject, ResourceType } from "../kube/types.ts";

const RT: ResourceType = { group: "", version: "v1", plural: "services", kind: "Service", namespaced: true };
const obj = (name: string, rv: string, ns = "ns", owner?: string): KubeObject => ({
  metadata: {
    name,
    namespace: ns,
    resourceVersion: rv,
    ownerReferences: owner
      ? [{ apiVersion: "x/v1", kind: "WebApp", name: "w", uid: owner, controller: true }]
      : undefined,
  },
});
const page = (items: KubeObject[], rv: string): KubeList => ({ metadata: { resourceVersion: rv }, items });
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const summary = (e: SourceEvent<KubeObject>) =>
  `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`;

function setup(namespace?: string) {
  const clock = createFakeClock(0);
  const kube = createFakeKube(() => clock.now());
  const errors: string[] = [];
  const logger: Logger = { ...quiet, error: (m) => void errors.push(m) };
  const informer = createInformer<KubeObject>(kube, RT, { clock, logger, namespace, random: () => 0 });
  const seen: string[] = [];
  informer.onEvent((e) => void seen.push(summary(e)));
  const ctl = new AbortController();
  return { clock, kube, informer, seen, errors, ctl };
}

describe("informer", () => {
  test("handlers are called after the store holds the change", async () => {
    const t = setup();
    const cachedAtCall: (string | undefined)[] = [];
    t.informer.onEvent(
      (e) => void cachedAtCall.push(t.informer.get(`ns/${e.object.metadata.name}`)?.metadata.resourceVersion),
    );
    const done = t.informer.start(t.ctl.signal);
    t.kube.answerList(page([obj("a", "1")], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    s.push({ type: "MODIFIED", object: obj("a", "11") }).push({ type: "DELETED", object: obj("a", "12") });
    await t.clock.settle();
    expect(t.seen).toEqual(["add a@1", "update a@11", "delete a@12"]);
    expect(cachedAtCall).toEqual(["1", "11", undefined]);
    t.ctl.abort();
    await done;
  });

  test("hasSynced turns true after the first list, and waitForSync resolves then", async () => {
    const t = setup();
    const waiting = t.informer.waitForSync(new AbortController().signal);
    const done = t.informer.start(t.ctl.signal);
    expect(t.informer.hasSynced()).toBe(false);
    t.kube.answerList(page([obj("a", "1"), obj("b", "1")], "10"));
    expect(await waiting).toBe(true);
    expect(t.informer.hasSynced()).toBe(true);
    expect(t.informer.list()).toHaveLength(2);
    t.ctl.abort();
    await done;
  });

  test("waitForSync resolves false when its signal aborts first", async () => {
    const t = setup();
    const ctl = new AbortController();
    const waiting = t.informer.waitForSync(ctl.signal);
    ctl.abort();
    expect(await waiting).toBe(false);
  });

  test("a re-list after a 410 delivers the deletes missed during the gap, and only real changes", async () => {
    const t = setup();
    const done = t.informer.start(t.ctl.signal);
    t.kube.answerList(page([obj("a", "1"), obj("b", "2")], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    s.push({ type: "ERROR", object: { code: 410, reason: "Expired", message: "too old" } });
    await t.clock.advance(800);
    t.kube.answerList(page([obj("a", "1"), obj("c", "30")], "40"));
    t.kube.answerWatch(new WatchScript());
    await t.clock.settle();
    expect(t.seen).toEqual(["add a@1", "add b@2", "add c@30", "delete b@2"]);
    expect(
      t.informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(["a", "c"]);
    expect(t.informer.hasSynced()).toBe(true);
    t.ctl.abort();
    await done;
  });

  test("a handler registered after sync is first told about every cached object", async () => {
    const t = setup();
    const done = t.informer.start(t.ctl.signal);
    t.kube.answerList(page([obj("a", "1"), obj("b", "1")], "10"));
    await t.informer.waitForSync(t.ctl.signal);
    const late: string[] = [];
    const off = t.informer.onEvent((e) => void late.push(summary(e)));
    expect(late.sort()).toEqual(["add a@1", "add b@1"]);
    off();
    t.ctl.abort();
    await done;
  });

  test("a throwing handler is logged and the other handlers still run; an unsubscribed one is not called", async () => {
    const t = setup();
    t.informer.onEvent(() => {
      throw new Error("bad handler");
    });
    const gone: string[] = [];
    const off = t.informer.onEvent((e) => void gone.push(summary(e)));
    off();
    const done = t.informer.start(t.ctl.signal);
    t.kube.answerList(page([obj("a", "1")], "10"));
    await t.informer.waitForSync(t.ctl.signal);
    expect(t.seen).toEqual(["add a@1"]);
    expect(gone).toEqual([]);
    expect(t.errors.some((m) => m.includes("bad handler"))).toBe(true);
    t.ctl.abort();
    await done;
  });

  test("the controller-owner index finds the children of an owner", async () => {
    const t = setup();
    t.informer.addIndex(CONTROLLER_INDEX, controllerIndex);
    const done = t.informer.start(t.ctl.signal);
    t.kube.answerList(page([obj("a", "1", "ns", "owner-1"), obj("b", "1", "ns", "owner-2")], "10"));
    await t.informer.waitForSync(t.ctl.signal);
    expect(t.informer.byIndex(CONTROLLER_INDEX, "owner-1").map((o) => o.metadata.name)).toEqual(["a"]);
    t.ctl.abort();
    await done;
  });

  test("informers merged over two namespaces are synced only when both are, and deliver both", async () => {
    const clock = createFakeClock(0);
    const kubeA = createFakeKube(() => clock.now());
    const kubeB = createFakeKube(() => clock.now());
    const a = createInformer<KubeObject>(kubeA, RT, { clock, logger: quiet, namespace: "a" });
    const b = createInformer<KubeObject>(kubeB, RT, { clock, logger: quiet, namespace: "b" });
    const m = mergeInformers([a, b]);
    const seen: string[] = [];
    m.onEvent((e) => void seen.push(`${e.object.metadata.namespace}/${e.object.metadata.name}`));
    const ctl = new AbortController();
    const done = m.start(ctl.signal);
    kubeA.answerList(page([obj("x", "1", "a")], "10"));
    await clock.settle();
    expect(kubeA.calls[0]!.args.namespace).toBe("a");
    expect(m.hasSynced()).toBe(false);
    kubeB.answerList(page([obj("y", "1", "b")], "10"));
    expect(await m.waitForSync(ctl.signal)).toBe(true);
    expect(seen.sort()).toEqual(["a/x", "b/y"]);
    expect(m.get("b/y")?.metadata.name).toBe("y");
    // A swap reaches the namespace's own store, and no handler hears of it.
    const y = m.get("b/y") as KubeObject;
    const slim = { metadata: y.metadata };
    expect(m.swap(y, slim)).toBe(true);
    expect(b.get("b/y")).toBe(slim);
    expect(m.swap(y, { metadata: y.metadata })).toBe(false); // no longer the instance stored
    expect(seen).toHaveLength(2);
    ctl.abort();
    await done;
  });

  test("a transform shapes every object before the store and the handlers see it: list pages, events, re-lists", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const transformed: string[] = [];
    const transform = (o: KubeObject): KubeObject => {
      transformed.push(`${o.metadata.name}@${o.metadata.resourceVersion}`);
      return { kind: o.kind, metadata: { ...o.metadata, labels: { shaped: "yes" } } };
    };
    const informer = createInformer<KubeObject>(kube, RT, { clock, logger: quiet, pageSize: 1, transform });
    const seen: string[] = [];
    informer.onEvent((e) => {
      const old = e.type === "update" ? ` old:${e.old?.metadata.labels?.shaped}` : "";
      seen.push(`${summary(e)} ${e.object.kind} ${e.object.metadata.labels?.shaped}${old}`);
    });
    const ctl = new AbortController();
    const done = informer.start(ctl.signal);
    const fat = (name: string, rv: string) => ({ ...obj(name, rv), spec: { big: "x".repeat(100) } });
    kube.answerList({ metadata: { resourceVersion: "10", continue: "p2" }, items: [fat("a", "1")] });
    kube.answerList(page([fat("b", "2")], "10"));
    const s = new WatchScript();
    kube.answerWatch(s);
    s.push({ type: "ADDED", object: fat("c", "11") });
    s.push({ type: "MODIFIED", object: fat("a", "12") });
    s.push({ type: "DELETED", object: fat("b", "13") });
    s.push({ type: "ERROR", object: { code: 410, reason: "Expired", message: "too old" } });
    await clock.advance(800);
    kube.answerList(page([fat("a", "12"), fat("d", "20")], "30"));
    kube.answerWatch(new WatchScript());
    await clock.settle();
    expect(transformed).toEqual(["a@1", "b@2", "c@11", "a@12", "b@13", "a@12", "d@20"]);
    expect(seen).toEqual([
      "add a@1 Service yes",
      "add b@2 Service yes",
      "add c@11 Service yes",
      "update a@12 Service yes old:yes",
      "delete b@13 Service yes",
      "add d@20 Service yes",
      "delete c@11 Service yes",
    ]);
    for (const o of informer.list()) expect(o.spec).toBeUndefined();
    expect(informer.get("ns/d")?.metadata.labels).toEqual({ shaped: "yes" });
    ctl.abort();
    await done;
  });
});
