import { describe, expect, test } from "bun:test";
import { CONTROLLER_INDEX, controllerIndex, NAMESPACE_INDEX, createStore, namespaceIndex, objectKey } from "./store.ts";
import type { KubeObject } from "../kube/types.ts";

const obj = (ns: string | undefined, name: string, rv: string, owner?: string): KubeObject => ({
  metadata: {
    name,
    namespace: ns,
    resourceVersion: rv,
    ownerReferences: owner ? [{ apiVersion: "v1", kind: "X", name: "o", uid: owner, controller: true }] : undefined,
  },
  spec: { n: rv },
});

/** A store with the namespace and controller indexes. */
function indexedStore() {
  const s = createStore();
  s.addIndex(NAMESPACE_INDEX, namespaceIndex);
  s.addIndex(CONTROLLER_INDEX, controllerIndex);
  return s;
}

describe("store", () => {
  test("objects are keyed namespace/name, or name when cluster-scoped", () => {
    expect(objectKey(obj("ns", "a", "1"))).toBe("ns/a");
    expect(objectKey(obj(undefined, "node1", "1"))).toBe("node1");
  });

  test("apply reports add, then update only when the resourceVersion changed", () => {
    const s = createStore();
    expect(s.apply(obj("ns", "a", "1"))?.type).toBe("add");
    expect(s.apply(obj("ns", "a", "1"))).toBeUndefined();
    const d = s.apply(obj("ns", "a", "2"));
    expect(d?.type).toBe("update");
    expect(d?.type === "update" && d.old.metadata.resourceVersion).toBe("1");
    expect(s.get("ns/a")?.metadata.resourceVersion).toBe("2");
  });

  test("a re-list is a full replace whose diff deletes what is missing and updates only changed versions", () => {
    const s = indexedStore();
    s.replace([obj("ns", "a", "1"), obj("ns", "b", "1"), obj("ns", "c", "1")]);
    const deltas = s.replace([obj("ns", "a", "1"), obj("ns", "b", "5"), obj("ns", "d", "1")]);
    expect(deltas.map((d) => `${d.type} ${objectKey(d.object)}`).sort()).toEqual([
      "add ns/d",
      "delete ns/c",
      "update ns/b",
    ]);
    expect(s.list().map(objectKey).sort()).toEqual(["ns/a", "ns/b", "ns/d"]);
    expect(s.size).toBe(3);
    expect(s.byIndex(NAMESPACE_INDEX, "ns").map(objectKey).sort()).toEqual(["ns/a", "ns/b", "ns/d"]);
  });

  test("an empty re-list deletes everything", () => {
    const s = indexedStore();
    s.replace([obj("ns", "a", "1"), obj(undefined, "n", "1")]);
    expect(s.replace([]).map((d) => d.type)).toEqual(["delete", "delete"]);
    expect(s.size).toBe(0);
    expect(s.byIndex(NAMESPACE_INDEX, "ns")).toEqual([]);
  });

  test("the namespace and controller-owner indexes follow updates and deletes", () => {
    const s = indexedStore();
    s.apply(obj("ns", "a", "1", "u1"));
    s.apply(obj("ns", "b", "1", "u1"));
    s.apply(obj("other", "c", "1", "u2"));
    expect(s.byIndex(CONTROLLER_INDEX, "u1").map(objectKey).sort()).toEqual(["ns/a", "ns/b"]);
    s.apply(obj("ns", "b", "2", "u2")); // the controller changed
    expect(s.byIndex(CONTROLLER_INDEX, "u1").map(objectKey)).toEqual(["ns/a"]);
    expect(s.byIndex(CONTROLLER_INDEX, "u2").map(objectKey).sort()).toEqual(["ns/b", "other/c"]);
    s.delete(obj("ns", "a", "3", "u1"));
    expect(s.byIndex(CONTROLLER_INDEX, "u1")).toEqual([]);
    expect(s.byIndex(NAMESPACE_INDEX, "other").map(objectKey)).toEqual(["other/c"]);
  });

  test("an owner reference that is not the controller is not indexed", () => {
    const s = indexedStore();
    const o = obj("ns", "a", "1");
    o.metadata.ownerReferences = [{ apiVersion: "v1", kind: "X", name: "o", uid: "u9" }];
    s.apply(o);
    expect(s.byIndex(CONTROLLER_INDEX, "u9")).toEqual([]);
  });

  test("an index added later covers the objects already stored, and may give several values", () => {
    const s = createStore();
    s.apply({ metadata: { name: "a", namespace: "ns", resourceVersion: "1", labels: { app: "x", tier: "web" } } });
    s.addIndex("labels", (o) => Object.entries(o.metadata.labels ?? {}).map(([k, v]) => `${k}=${v}`));
    expect(s.byIndex("labels", "tier=web").map(objectKey)).toEqual(["ns/a"]);
    expect(s.byIndex("labels", "app=x").map(objectKey)).toEqual(["ns/a"]);
    expect(() => s.addIndex("labels", () => [])).toThrow(/already exists/);
    expect(() => s.byIndex("nope", "x")).toThrow(/no index named "nope"/);
  });

  test("a store has no index until one is added (the operator looks nothing up by index)", () => {
    const s = createStore();
    s.apply(obj("ns", "a", "1", "u1"));
    expect(() => s.byIndex(NAMESPACE_INDEX, "ns")).toThrow(/no index named "namespace" \(known: \)/);
    expect(() => s.byIndex(CONTROLLER_INDEX, "u1")).toThrow(/no index named "controller"/);
  });

  test("swap stores another representation of the very object stored, at its version, and tells nobody", () => {
    const s = indexedStore();
    const stored = s.apply(obj("ns", "a", "1", "u1"))?.object as KubeObject;
    const slim = { metadata: stored.metadata };
    expect(s.swap(stored, slim)).toBe(true);
    expect(s.get("ns/a")).toBe(slim);
    expect(Object.isFrozen(slim)).toBe(true);
    expect(s.byIndex(CONTROLLER_INDEX, "u1")).toEqual([slim]);
    // Nothing moved for the watch: the same version again is no change, a newer one an update from the slim one.
    expect(s.apply(obj("ns", "a", "1", "u1"))).toBeUndefined();
    const d = s.apply(obj("ns", "a", "2", "u1"));
    expect(d?.type === "update" && d.old).toBe(slim);
  });

  test("swap does nothing once the store holds another instance or when the versions differ", () => {
    const s = createStore();
    const first = s.apply(obj("ns", "a", "1"))?.object as KubeObject;
    const second = s.apply(obj("ns", "a", "2"))?.object as KubeObject;
    expect(s.swap(first, { metadata: first.metadata })).toBe(false); // a newer version came meanwhile
    expect(s.swap(second, obj("ns", "a", "3"))).toBe(false); // not the same version
    expect(s.swap(obj("ns", "b", "1"), obj("ns", "b", "1"))).toBe(false); // nothing stored there
    expect(s.get("ns/a")).toBe(second);
    expect(s.get("ns/b")).toBeUndefined();
  });

  test("a delete reports the final state received and the stored object as old", () => {
    const s = createStore();
    s.apply(obj("ns", "a", "1"));
    const d = s.delete(obj("ns", "a", "9"));
    expect(d.object.metadata.resourceVersion).toBe("9");
    expect(d.old?.metadata.resourceVersion).toBe("1");
    expect(s.get("ns/a")).toBeUndefined();
  });

  test("by default an object, its metadata, spec and status are frozen, and what lies deeper is not", () => {
    const s = createStore();
    s.apply({ ...obj("ns", "a", "1"), spec: { n: "1", list: [{ x: 1 }] }, status: { c: [] } });
    const got = s.get("ns/a")!;
    const spec = got.spec as { n: string; list: { x: number }[] };
    expect(Object.isFrozen(got) && Object.isFrozen(got.metadata) && Object.isFrozen(spec)).toBe(true);
    expect(Object.isFrozen(got.status)).toBe(true);
    expect(() => {
      (got.metadata as { name: string }).name = "x";
    }).toThrow();
    expect(() => {
      spec.n = "x";
    }).toThrow();
    expect(Object.isFrozen(spec.list)).toBe(false);
    expect(Object.isFrozen(spec.list[0])).toBe(false);
  });

  test("freeze deep freezes every nested value; freeze none leaves objects as they are", () => {
    const deep = createStore({ freeze: "deep" });
    deep.apply({ ...obj("ns", "a", "1"), spec: { list: [{ x: 1 }] } });
    const spec = deep.get("ns/a")!.spec as { list: { x: number }[] };
    expect(Object.isFrozen(spec.list) && Object.isFrozen(spec.list[0])).toBe(true);
    const none = createStore({ freeze: "none" });
    none.apply(obj("ns", "a", "1"));
    expect(Object.isFrozen(none.get("ns/a"))).toBe(false);
  });

  test("a deleted object is handed out frozen too", () => {
    const s = createStore();
    s.apply(obj("ns", "a", "1"));
    expect(Object.isFrozen(s.delete(obj("ns", "a", "2")).object.metadata)).toBe(true);
  });
});
