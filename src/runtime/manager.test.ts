import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createLeaderElector, type LeaseSpec } from "./leader-election.ts";
import type { Logger } from "./logger.ts";
import { Manager, type Runnable } from "./manager.ts";
import { createFakeKube } from "./_fake-kube.ts";
import { KubeError } from "../kube/errors.ts";
import type { KubeClient } from "../kube/types.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** A runnable that records when it starts and stops; `drain` runs after its signal aborts, before it stops. */
function probe(
  name: string,
  log: string[],
  opts: { leader?: boolean; drain?: () => Promise<void>; fail?: Error } = {},
): Runnable {
  return {
    description: name,
    needLeaderElection: opts.leader ?? false,
    start: async (signal) => {
      log.push(`start ${name}`);
      if (opts.fail) throw opts.fail;
      await new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener("abort", () => r())));
      await opts.drain?.();
      log.push(`stop ${name}`);
    },
  };
}

describe("manager", () => {
  test("every-replica runnables start at once, leader runnables once leading, and shutdown drains leaders first", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const elector = createLeaderElector(
      kube,
      { leaseName: "l", namespace: "n", identity: "a" },
      { clock, logger: quiet, random: () => 0 },
    );
    const log: string[] = [];
    const m = new Manager({ logger: quiet, elector, identity: "a" })
      .add(probe("cache", log))
      .add(probe("controller", log, { leader: true, drain: () => clock.sleep(3_000) }))
      .add(probe("server", log));
    const stop = new AbortController();
    const done = m.run(stop.signal);
    expect(log).toEqual(["start cache", "start server"]);
    await clock.settle();
    expect(log).toEqual(["start cache", "start server", "start controller"]);
    stop.abort();
    await clock.advance(3_000);
    expect(await done).toEqual({ kind: "stopped" });
    expect(log.slice(3)).toEqual(["stop controller", "stop cache", "stop server"]);
    expect([...kube.objects.values()].map((o) => (o.spec as LeaseSpec).holderIdentity)).toEqual([""]);
  });

  test("a lost lease ends the leader runnables and the run says lost", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const cut = { on: false };
    const view: KubeClient = {
      ...kube,
      get: (...a) => (cut.on ? Promise.reject(new KubeError("Unreachable", "cut off", 0)) : kube.get(...a)),
      replace: (...a) => (cut.on ? Promise.reject(new KubeError("Unreachable", "cut off", 0)) : kube.replace(...a)),
    };
    const elector = createLeaderElector(
      view,
      { leaseName: "l", namespace: "n", identity: "a" },
      { clock, logger: quiet, random: () => 0 },
    );
    const log: string[] = [];
    const m = new Manager({ logger: quiet, elector }).add(probe("controller", log, { leader: true }));
    const done = m.run(new AbortController().signal);
    await clock.settle();
    cut.on = true;
    await clock.advance(13_000);
    expect(await done).toEqual({ kind: "lost" });
    expect(log).toEqual(["start controller", "stop controller"]);
  });

  test("without an elector leader runnables start at once; one that fails stops the others and the run says failed", async () => {
    const log: string[] = [];
    const boom = new Error("controller crashed");
    const m = new Manager({ logger: quiet })
      .add(probe("cache", log))
      .add(probe("first", log, { leader: true }))
      .add(probe("second", log, { leader: true, fail: boom }));
    expect(await m.run(new AbortController().signal)).toEqual({ kind: "failed", cause: boom });
    expect(log).toEqual(["start cache", "start first", "start second", "stop first", "stop cache"]);
  });

  test("an every-replica runnable that fails is logged and does not stop the others", async () => {
    const errors: string[] = [];
    const log: string[] = [];
    const m = new Manager({ logger: { ...quiet, error: (msg) => void errors.push(msg) } })
      .add(probe("cache", log, { fail: new Error("no route") }))
      .add(probe("controller", log, { leader: true }));
    const stop = new AbortController();
    const done = m.run(stop.signal);
    await Bun.sleep(0);
    expect(errors).toEqual(["cache stopped with an error: no route"]);
    stop.abort();
    expect(await done).toEqual({ kind: "stopped" });
    expect(log).toEqual(["start cache", "start controller", "stop controller"]);
  });

  test("runnables cannot be added once running, and run cannot be called twice", async () => {
    const m = new Manager({ logger: quiet });
    const stop = new AbortController();
    stop.abort();
    expect(await m.run(stop.signal)).toEqual({ kind: "stopped" });
    expect(() => m.add(probe("late", []))).toThrow(/cannot add late while running/);
    await expect(m.run(stop.signal)).rejects.toThrow(/run called twice/);
  });
});
