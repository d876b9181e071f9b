import { describe, expect, test } from "bun:test";
import { KubeError, type KubeErrorReason } from "../kube/errors.ts";
import type { KubeObject } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import { CREATED_TTL_MS, WEBAPP_MEMORY_TTL_MS, WebAppMemory, WRITTEN_TTL_MS, WrittenChildren } from "./expectations.ts";

const obj = (uid: string, resourceVersion: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "web",
    namespace: "default",
    uid,
    resourceVersion,
    ownerReferences: [{ apiVersion: "apps.example.com/v1", kind: "WebApp", name: "web", uid: "w1", controller: true }],
    managedFields: [{ manager: "webapp-operator", operation: "Update", fieldsV1: { "f:spec": {} } }],
  },
});

describe("written children", () => {
  test("a creation stands in for a cache that has nothing under its key yet, shaped as the cache keeps ours", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "10"), true);
    const found = w.resolve("default/web", undefined);
    expect(found?.metadata.uid).toBe("u1");
    // The ownership handover reads who wrote it and how; the field sets are dropped, as in the cache.
    expect(found?.metadata.managedFields).toEqual([{ manager: "webapp-operator", operation: "Update" }]);
  });

  test("an update the cache has nothing for is not stood in for: the object was deleted since", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "20"), false);
    expect(w.resolve("default/web", undefined)).toBeUndefined();
    expect(w.size).toBe(0);
  });

  test("an update of a creation the cache has not shown yet still stands in for it", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "10"), true);
    w.remember("default/web", obj("u1", "11"), false);
    expect(w.resolve("default/web", undefined)?.metadata.resourceVersion).toBe("11");
    w.remember("default/web", obj("u2", "12"), false); // another object: an update of what the cache had
    expect(w.resolve("default/web", undefined)).toBeUndefined();
  });

  test("stand in for an older version of the same object in the cache (our update is not there yet)", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "20"), true);
    expect(w.resolve("default/web", obj("u1", "10"))?.metadata.resourceVersion).toBe("20");
    expect(w.size).toBe(1);
  });

  test("give way to the cache once it shows the same version or a newer one, and are dropped", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "20"), true);
    const cached = obj("u1", "20");
    expect(w.resolve("default/web", cached)).toBe(cached);
    expect(w.size).toBe(0);
    expect(w.resolve("default/web", undefined)).toBeUndefined();
  });

  test("give way to a cached object with another uid and a newer resourceVersion (replaced since)", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "20"), true);
    expect(w.resolve("default/web", obj("u2", "25"))?.metadata.uid).toBe("u2");
    expect(w.size).toBe(0);
  });

  test("a creation stands over a cached object with another uid and an older resourceVersion (the one it replaced)", () => {
    // Our create replaced an object the cache still shows, its deletion not seen yet (a watch waiting to re-list):
    // converging from that one applies its uid to ours, which the API server refuses ("field is immutable").
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u2", "20"), true);
    expect(w.resolve("default/web", obj("u1", "5"))?.metadata.uid).toBe("u2");
    expect(w.size).toBe(1);
  });

  test("an update of ours gives way to a cached object with another uid, whatever its resourceVersion, as before", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u2", "20"), false);
    expect(w.resolve("default/web", obj("u1", "5"))?.metadata.uid).toBe("u1");
    expect(w.size).toBe(0);
  });

  test("give way to the cache when resourceVersions are not integers (cannot tell which is newer)", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember("default/web", obj("u1", "b"), true);
    expect(w.resolve("default/web", obj("u1", "a"))?.metadata.resourceVersion).toBe("a");
  });

  test("are forgotten after their time to live: the cache's answer counts again", async () => {
    const clock = createFakeClock();
    const w = new WrittenChildren(clock, 30_000);
    w.remember("default/web", obj("u1", "10"), true);
    await clock.advance(30_000);
    expect(w.resolve("default/web", undefined)).toBeUndefined();
  });

  test("are forgotten when the API server answers NotFound or Conflict about them, and kept on other errors", () => {
    const w = new WrittenChildren(createFakeClock());
    const fail = (reason: KubeErrorReason, code: number) => new KubeError(reason, reason, code);
    for (const [reason, code] of [
      ["NotFound", 404],
      ["Conflict", 409],
    ] as const) {
      w.remember("default/web", obj("u1", "10"), true);
      expect(w.contradicted("default/web", fail(reason, code))).toBe(true);
      expect(w.resolve("default/web", undefined)).toBeUndefined();
      expect(w.contradicted("default/web", fail(reason, code))).toBe(false); // nothing left to forget
    }
    w.remember("default/web", obj("u1", "10"), true);
    expect(w.contradicted("default/web", fail("Other", 500))).toBe(false);
    expect(w.contradicted("default/web", fail("Unreachable", 0))).toBe(false);
    expect(w.resolve("default/web", undefined)?.metadata.uid).toBe("u1");
  });
});

describe("written children told of the watch's events", () => {
  const KEY = "default/web";
  test("a creation the watch delivered is forgotten: an empty cache after it means deleted", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember(KEY, obj("u1", "5"), true);
    w.observed(obj("u1", "5"), false);
    expect(w.resolve(KEY, undefined)).toBeUndefined();
    expect(w.size).toBe(0);
  });

  test("a creation the watch delivered as deleted is never stood in for, whichever came first, answer or events", () => {
    const answerFirst = new WrittenChildren(createFakeClock());
    answerFirst.remember(KEY, obj("u1", "5"), true);
    answerFirst.observed(obj("u1", "5"), false);
    answerFirst.observed(obj("u1", "6"), true);
    expect(answerFirst.resolve(KEY, undefined)).toBeUndefined();
    const eventsFirst = new WrittenChildren(createFakeClock());
    eventsFirst.observed(obj("u1", "5"), false);
    eventsFirst.observed(obj("u1", "6"), true);
    eventsFirst.remember(KEY, obj("u1", "5"), true);
    expect(eventsFirst.resolve(KEY, undefined)).toBeUndefined();
  });

  test("an event older than our write, or of another object under the name, keeps the write", () => {
    const w = new WrittenChildren(createFakeClock());
    w.remember(KEY, obj("u1", "7"), false);
    w.observed(obj("u1", "6"), false);
    w.observed(obj("u0", "9"), true);
    expect(w.resolve(KEY, obj("u1", "6"))?.metadata.resourceVersion).toBe("7");
  });
});

describe("the WebApps' records", () => {
  test("say a child was created, or a status left, only within that field's own time", async () => {
    const clock = createFakeClock();
    const m = new WebAppMemory(clock);
    m.created("w1");
    m.set("w1", { statusLeftAt: clock.now() });
    await clock.advance(WRITTEN_TTL_MS - 1);
    expect([m.createdRecently("w1"), m.statusLeft("w1")]).toEqual([true, true]);
    await clock.advance(1);
    expect([m.createdRecently("w1"), m.statusLeft("w1")]).toEqual([true, false]);
    await clock.advance(CREATED_TTL_MS - WRITTEN_TTL_MS);
    expect(m.createdRecently("w1")).toBe(false);
    expect(m.get("w1").createdAt).toBeDefined(); // the record itself lives on, for its other fields
  });

  test("live WEBAPP_MEMORY_TTL_MS after their last change; a pass that changes nothing does not keep one alive", async () => {
    const clock = createFakeClock();
    const m = new WebAppMemory(clock);
    const admitted = [{ kind: "Deployment", path: "spec.replicas", sent: "3", stored: "2" }];
    m.set("w1", { admitted });
    await clock.advance(WEBAPP_MEMORY_TTL_MS - 1);
    m.set("w1", { statusLeftAt: undefined, othersNext: undefined }); // what every pass sets when nothing happened
    expect(m.get("w1").admitted).toEqual(admitted);
    await clock.advance(1);
    expect(m.get("w1")).toEqual({});
  });

  test("clear a field with undefined, and drop a record left with none; a WebApp without a uid has none", () => {
    const m = new WebAppMemory(createFakeClock());
    m.set("w1", { gone: true });
    m.set("w1", { gone: undefined });
    expect(m.get("w1")).toEqual({});
    m.set(undefined, { gone: true });
    m.created(undefined);
    expect([m.get(undefined), m.createdRecently(undefined)]).toEqual([{}, false]);
  });
});
