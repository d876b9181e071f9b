import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createBackoff } from "./backoff.ts";
import type { Logger } from "./logger.ts";
import { createWatcher, type WatcherEvent, type WatcherOptions } from "./watcher.ts";
import { createFakeKube, WatchScript } from "./_fake-kube.ts";
import { KubeError } from "../kube/errors.ts";
import type { KubeList, KubeObject, ResourceType } from "../kube/types.ts";

const RT: ResourceType = { group: "apps", version: "v1", plural: "deployments", kind: "Deployment", namespaced: true };

const obj = (name: string, rv: string): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "ns", resourceVersion: rv },
});
const page = (items: KubeObject[], rv: string, cont?: string): KubeList => ({
  metadata: { resourceVersion: rv, continue: cont },
  items,
});
const gone = () => new KubeError("Gone", "too old resource version", 410);

function recordingLogger() {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (msg: string) => void lines.push({ level, msg });
  const logger: Logger = { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
  return { logger, lines };
}

function setup(extra: Partial<WatcherOptions> = {}) {
  const clock = createFakeClock(0);
  const kube = createFakeKube(() => clock.now());
  const { logger, lines } = recordingLogger();
  const random = () => 0;
  const watcher = createWatcher(kube, RT, {
    clock,
    logger,
    random,
    backoff: createBackoff({ clock, random }),
    ...extra,
  });
  const events: WatcherEvent<KubeObject>[] = [];
  const ctl = new AbortController();
  const done = watcher.run(ctl.signal, (e) => void events.push(e));
  const calls = (m: string) => kube.calls.filter((c) => c.method === m);
  const stop = async () => {
    ctl.abort();
    await done;
  };
  return { clock, kube, watcher, events, lines, calls, stop, ctl, done };
}

describe("watcher", () => {
  test("the initial list is read in pages of 500 and delivered as one init-done, then watched from its resourceVersion", async () => {
    const t = setup();
    t.kube.answerList(page([{ metadata: { name: "a", namespace: "ns", resourceVersion: "5" } }], "10", "tok"));
    t.kube.answerList(page([obj("b", "7")], "10"));
    await t.clock.settle();
    expect(t.calls("list").map((c) => [c.args.limit, c.args.continue])).toEqual([
      [500, undefined],
      [500, "tok"],
    ]);
    expect(t.events).toHaveLength(1);
    const init = t.events[0]!;
    expect(init.type).toBe("init-done");
    if (init.type !== "init-done") throw new Error("unreachable");
    expect(init.resourceVersion).toBe("10");
    expect(init.objects.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    // LIST items lack apiVersion/kind; the watcher restores them.
    expect(init.objects[0]).toMatchObject({ apiVersion: "apps/v1", kind: "Deployment" });
    const w = t.calls("watch")[0]!;
    expect(w.args).toMatchObject({ resourceVersion: "10", allowWatchBookmarks: true });
    expect(w.args.timeoutSeconds).toBeGreaterThanOrEqual(261);
    expect(w.args.timeoutSeconds).toBeLessThanOrEqual(290);
    await t.stop();
  });

  test("watch events are delivered as apply and delete, and a bookmark only moves the resume point", async () => {
    const t = setup();
    t.kube.answerList(page([], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    s.push({ type: "ADDED", object: obj("a", "11") })
      .push({ type: "MODIFIED", object: obj("a", "12") })
      .push({ type: "DELETED", object: obj("a", "13") })
      .push({ type: "BOOKMARK", object: { metadata: { resourceVersion: "20" } } });
    await t.clock.advance(5_000);
    s.end();
    await t.clock.settle();
    expect(t.events.map((e) => e.type)).toEqual(["init-done", "apply", "apply", "delete"]);
    expect(t.calls("watch").map((c) => c.args.resourceVersion)).toEqual(["10", "20"]);
    expect(t.calls("list")).toHaveLength(1);
    await t.stop();
  });

  test("a clean close by the server re-watches at once from the last resourceVersion seen, without a new list", async () => {
    const t = setup();
    t.kube.answerList(page([], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    s.push({ type: "ADDED", object: obj("a", "15") });
    await t.clock.advance(60_000);
    s.end();
    await t.clock.settle();
    const watches = t.calls("watch");
    expect(watches.map((c) => c.args.resourceVersion)).toEqual(["10", "15"]);
    expect(watches[1]!.at).toBe(60_000);
    // A routine close is not a failure: readiness does not flap while the re-watch is in flight.
    expect(t.watcher.isStale()).toBe(false);
    expect(t.lines.filter((l) => l.level !== "debug")).toEqual([]);
    await t.stop();
  });

  test("an ERROR event with code 410 leads to a fresh list after one backoff step, and its init-done replaces the state", async () => {
    const t = setup();
    t.kube.answerList(page([obj("a", "5")], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    s.push({
      type: "ERROR",
      object: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 10 (50)" },
    });
    await t.clock.settle();
    expect(s.aborted).toBe(true);
    expect(t.watcher.isStale()).toBe(true);
    expect(t.calls("list")).toHaveLength(1);
    await t.clock.advance(800);
    expect(t.calls("list").map((c) => c.at)).toEqual([0, 800]);
    t.kube.answerList(page([obj("b", "55")], "60"));
    t.kube.answerWatch(new WatchScript());
    await t.clock.settle();
    const last = t.events.at(-1)!;
    expect(last.type === "init-done" && last.objects.map((o) => o.metadata.name)).toEqual(["b"]);
    expect(t.calls("watch").at(-1)!.args.resourceVersion).toBe("60");
    expect(t.lines.filter((l) => l.level === "warn")).toEqual([]);
    await t.stop();
  });

  test("an HTTP 410 when opening the watch leads to a fresh list", async () => {
    const t = setup();
    t.kube.answerList(page([], "10"));
    t.kube.answerWatch(gone());
    await t.clock.advance(800);
    expect(t.calls("list")).toHaveLength(2);
    t.kube.answerList(page([], "70"));
    await t.clock.settle();
    expect(t.events.map((e) => e.type)).toEqual(["init-done", "init-done"]);
    expect(t.calls("watch").map((c) => c.args.resourceVersion)).toEqual(["10", "70"]);
    await t.stop();
  });

  test("an expired continue token restarts the list from its first page", async () => {
    const t = setup();
    t.kube.answerList(page([obj("a", "1")], "10", "tok"));
    t.kube.answerList(gone());
    await t.clock.advance(800);
    t.kube.answerList(page([obj("a", "1"), obj("b", "2")], "12"));
    await t.clock.settle();
    expect(t.calls("list").map((c) => c.args.continue)).toEqual([undefined, "tok", undefined]);
    expect(t.events).toHaveLength(1);
    const init = t.events[0]!;
    expect(init.type === "init-done" && init.objects.length).toBe(2);
    await t.stop();
  });

  test("a stream silent for longer than inactivityMs is aborted and re-watched from the last resourceVersion, stale meanwhile", async () => {
    const t = setup({ inactivityMs: 90_000 });
    t.kube.answerList(page([], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    await t.clock.advance(60_000);
    s.push({ type: "BOOKMARK", object: { metadata: { resourceVersion: "33" } } });
    await t.clock.advance(89_999); // 89.999 s after the bookmark: still alive
    expect(s.aborted).toBe(false);
    expect(t.watcher.isStale()).toBe(false);
    expect(t.watcher.lastEventAt).toBe(60_000);
    await t.clock.advance(1);
    expect(s.aborted).toBe(true);
    expect(t.watcher.isStale()).toBe(true);
    const watches = t.calls("watch");
    expect(watches.map((c) => [c.args.resourceVersion, c.at])).toEqual([
      ["10", 0],
      ["33", 150_000],
    ]);
    t.kube.answerWatch(new WatchScript());
    await t.clock.settle();
    expect(t.watcher.isStale()).toBe(false);
    await t.stop();
  });

  test("other errors are retried forever with delays that double from 800 ms and stop growing at 30 s", async () => {
    const t = setup();
    for (let i = 0; i < 10; i++) t.kube.answerList(new KubeError("Unreachable", "connection refused", 0));
    await t.clock.advance(200_000);
    const at = t.calls("list").map((c) => c.at);
    const gaps = at.slice(1).map((x, i) => x - at[i]!);
    expect(gaps.slice(0, 9)).toEqual([800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]);
    expect(t.watcher.isStale()).toBe(true);
    await t.stop();
  });

  test("with jitter every delay stays between half its ceiling and the ceiling, and never above 30 s", async () => {
    const t = setup({ backoff: undefined, random: () => 0.999 });
    for (let i = 0; i < 12; i++) t.kube.answerList(new KubeError("Unreachable", "connection refused", 0));
    await t.clock.advance(400_000);
    const at = t.calls("list").map((c) => c.at);
    const gaps = at.slice(1).map((x, i) => x - at[i]!);
    expect(gaps.length).toBeGreaterThanOrEqual(11);
    gaps.forEach((g, i) => {
      const ceiling = Math.min(30_000, 800 * 2 ** i);
      expect(g).toBeGreaterThanOrEqual(Math.max(800, ceiling / 2));
      expect(g).toBeLessThanOrEqual(ceiling);
    });
    await t.stop();
  });

  test("a failure streak is logged once at warn with its cause, and its end once at info", async () => {
    const t = setup();
    for (let i = 0; i < 3; i++) t.kube.answerList(new KubeError("Unreachable", "ECONNREFUSED", 0));
    t.kube.answerList(page([], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    await t.clock.advance(10_000);
    s.push({ type: "ADDED", object: obj("a", "11") });
    await t.clock.settle();
    const warns = t.lines.filter((l) => l.level === "warn");
    expect(warns).toHaveLength(1);
    expect(warns[0]!.msg).toContain("ECONNREFUSED");
    expect(t.lines.filter((l) => l.level === "info" && l.msg.includes("recovered after 3"))).toHaveLength(1);
    await t.stop();
  });

  test("a watch closed within a second without any event is retried after a backoff, not at once", async () => {
    const t = setup();
    t.kube.answerList(page([], "10"));
    t.kube.answerWatch(new WatchScript().end());
    t.kube.answerWatch(new WatchScript().end());
    await t.clock.advance(3_000);
    expect(t.calls("watch").map((c) => c.at)).toEqual([0, 800, 2400]);
    await t.stop();
  });

  test("an event handler that throws is logged and the watch goes on", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const { logger, lines } = recordingLogger();
    const w = createWatcher(kube, RT, { clock, logger });
    const seen: string[] = [];
    const ctl = new AbortController();
    const done = w.run(ctl.signal, (e) => {
      seen.push(e.type);
      if (e.type === "init-done") throw new Error("boom");
    });
    kube.answerList(page([], "1"));
    const s = new WatchScript();
    kube.answerWatch(s);
    s.push({ type: "ADDED", object: obj("a", "2") });
    await clock.settle();
    expect(seen).toEqual(["init-done", "apply"]);
    expect(lines.some((l) => l.level === "error" && l.msg.includes("boom"))).toBe(true);
    ctl.abort();
    await done;
  });

  test("aborting the signal ends run() promptly and closes the open stream", async () => {
    const t = setup();
    t.kube.answerList(page([], "10"));
    const s = new WatchScript();
    t.kube.answerWatch(s);
    await t.clock.settle();
    expect(t.watcher.state).toBe("watching");
    await t.stop();
    expect(s.aborted).toBe(true);
    expect(t.watcher.state).toBe("empty");
    expect(t.clock.pendingTimers()).toBe(0);
  });

  test("aborting during a backoff wait ends run() without waiting for the delay", async () => {
    const t = setup();
    t.kube.answerList(new KubeError("Unreachable", "refused", 0));
    await t.clock.settle();
    expect(t.clock.nextTimerAt()).toBe(800);
    await t.stop();
    expect(t.calls("list")).toHaveLength(1);
  });
});
