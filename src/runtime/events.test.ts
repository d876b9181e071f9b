import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createEventRecorder, type EventRecorderOptions } from "./events.ts";
import { EVENTS as EVENT } from "../kube/resources.ts";
import type { Logger } from "./logger.ts";
import { createFakeKube, objKey } from "./_fake-kube.ts";
import { KubeError } from "../kube/errors.ts";
import type { KubeObject } from "../kube/types.ts";

const START = Date.UTC(2024, 4, 1, 12, 0, 0);
const app = (name = "web", uid = `uid-${name}`): KubeObject => ({
  apiVersion: "devctl.dev/v1alpha1",
  kind: "WebApp",
  metadata: { name, namespace: "shop", uid, resourceVersion: "42" },
});

function setup(extra: Partial<EventRecorderOptions> & { clock?: ReturnType<typeof createFakeClock> } = {}) {
  const clock = extra.clock ?? createFakeClock(START);
  const kube = createFakeKube(() => clock.now());
  const debug: string[] = [];
  const logger: Logger = { debug: (m) => void debug.push(m), info() {}, warn() {}, error() {} };
  const rec = createEventRecorder(kube, {
    clock,
    logger,
    component: "webapp-operator",
    reportingController: "devctl.dev/webapp-operator",
    reportingInstance: "pod-1",
    random: () => 0.5,
    ...extra,
  });
  const calls = (m: string) => kube.calls.filter((c) => c.method === m);
  return { clock, kube, rec, debug, calls };
}

describe("event recorder", () => {
  test("an event is created in the object's namespace with what kubectl describe shows", async () => {
    const t = setup();
    t.rec.event(app(), "Normal", "Created", "created Deployment shop/web");
    await t.rec.flush();
    const [create] = t.calls("create");
    expect(create!.rt).toBe(EVENT);
    const ev = create!.args.obj as KubeObject;
    expect(ev.metadata.name).toMatch(/^web\.[0-9a-f]{16}$/);
    expect(ev).toMatchObject({
      metadata: { namespace: "shop" },
      involvedObject: {
        apiVersion: "devctl.dev/v1alpha1",
        kind: "WebApp",
        name: "web",
        namespace: "shop",
        uid: "uid-web",
        resourceVersion: "42",
      },
      type: "Normal",
      reason: "Created",
      message: "created Deployment shop/web",
      source: { component: "webapp-operator", host: "pod-1" },
      reportingComponent: "devctl.dev/webapp-operator",
      reportingInstance: "pod-1",
      count: 1,
      firstTimestamp: "2024-05-01T12:00:00Z",
      lastTimestamp: "2024-05-01T12:00:00Z",
    });
  });

  test("identical repeats within 10 minutes patch count and lastTimestamp of the first Event", async () => {
    const t = setup();
    t.rec.event(app(), "Warning", "Failed", "image missing");
    await t.clock.advance(60_000);
    t.rec.event(app(), "Warning", "Failed", "image missing");
    await t.clock.advance(60_000);
    t.rec.event(app(), "Warning", "Failed", "image missing");
    await t.rec.flush();
    expect(t.calls("create")).toHaveLength(1);
    const name = (t.calls("create")[0]!.args.obj as KubeObject).metadata.name;
    expect(t.calls("patch").map((c) => [c.args.name, c.args.patch])).toEqual([
      [name, { count: 2, lastTimestamp: "2024-05-01T12:01:00Z" }],
      [name, { count: 3, lastTimestamp: "2024-05-01T12:02:00Z" }],
    ]);
    expect(t.kube.objects.get(objKey(EVENT, "shop", name))).toMatchObject({
      count: 3,
      firstTimestamp: "2024-05-01T12:00:00Z",
    });
  });

  test("repeats recorded back to back, before the first write finished, still aggregate", async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) t.rec.event(app(), "Warning", "Failed", "same");
    await t.rec.flush();
    expect(t.calls("create")).toHaveLength(1);
    expect(t.calls("patch").map((c) => (c.args.patch as { count: number }).count)).toEqual([2, 3]);
  });

  test("a repeat after the 10-minute window, or with another message, creates a new Event", async () => {
    const t = setup();
    t.rec.event(app(), "Warning", "Failed", "a");
    t.rec.event(app(), "Warning", "Failed", "b");
    await t.clock.advance(600_000);
    t.rec.event(app(), "Warning", "Failed", "a");
    await t.rec.flush();
    expect(t.calls("create").map((c) => (c.args.obj as { message: string }).message)).toEqual(["a", "b", "a"]);
    expect(t.calls("patch")).toHaveLength(0);
  });

  test("an aggregated Event that was deleted meanwhile is created again", async () => {
    const t = setup();
    t.rec.event(app(), "Normal", "Synced", "ok");
    await t.rec.flush();
    t.kube.objects.clear();
    t.rec.event(app(), "Normal", "Synced", "ok");
    await t.rec.flush();
    expect(t.calls("patch")).toHaveLength(1);
    expect(t.calls("create")).toHaveLength(2);
  });

  test("per object, a burst of 25 gets through, then one every 5 minutes", async () => {
    const t = setup();
    for (let i = 0; i < 40; i++) t.rec.event(app(), "Warning", "Failed", `attempt ${i}`);
    await t.rec.flush();
    expect(t.calls("create")).toHaveLength(25);
    t.rec.event(app("other"), "Warning", "Failed", "x"); // another object has its own bucket
    await t.clock.advance(299_000);
    t.rec.event(app(), "Warning", "Failed", "late 1");
    await t.clock.advance(1_000);
    t.rec.event(app(), "Warning", "Failed", "late 2");
    t.rec.event(app(), "Warning", "Failed", "late 3");
    await t.rec.flush();
    const messages = t.calls("create").map((c) => (c.args.obj as { message: string }).message);
    expect(messages.slice(25)).toEqual(["x", "late 2"]);
    expect(t.debug.filter((m) => m.includes("dropped by the rate limit"))).toHaveLength(15 + 2);
  });

  test("overall, no more than a burst of 100 events leaves at once, whatever the objects", async () => {
    const t = setup();
    for (let i = 0; i < 150; i++) t.rec.event(app(`o${i}`), "Normal", "Created", "x");
    await t.rec.flush();
    expect(t.calls("create")).toHaveLength(100);
    await t.clock.advance(10_000);
    for (let i = 150; i < 170; i++) t.rec.event(app(`o${i}`), "Normal", "Created", "x");
    await t.rec.flush();
    expect(t.calls("create")).toHaveLength(110);
  });

  test("a failing API never throws to the caller; the failure is logged at debug", async () => {
    const t = setup();
    t.kube.failWith = () => new KubeError("Forbidden", "cannot create events", 403);
    expect(() => t.rec.event(app(), "Normal", "Created", "x")).not.toThrow();
    await t.rec.flush();
    expect(t.debug.some((m) => m.includes("not recorded") && m.includes("cannot create events"))).toBe(true);
  });

  test("events about a cluster-scoped object go to the default namespace, long messages are cut", async () => {
    const t = setup();
    t.rec.event(
      { apiVersion: "v1", kind: "Node", metadata: { name: "n1", uid: "u" } },
      "Normal",
      "Seen",
      "m".repeat(2000),
    );
    await t.rec.flush();
    const ev = t.calls("create")[0]!.args.obj as KubeObject & { message: string };
    expect(ev.metadata.namespace).toBe("default");
    expect(ev.message).toHaveLength(1024);
    expect(ev.message.endsWith("...")).toBe(true);
  });
});
