import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import type { ControllerOptions } from "./controller.ts";
import { createController } from "./controller.ts";
import { createRuntimeMetrics } from "./metrics.ts";
import type { Outcome, Request } from "./reconcile.ts";
import { done, ReconcileTimeoutError, requeue, requeueAfter, TerminalError } from "./reconcile.ts";
import { fakeSource, recordingLogger } from "./_fake-source.ts";

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

type Reconcile = (req: Request, signal: AbortSignal) => Promise<Outcome>;

function setup(reconcile: Reconcile, opts: Partial<ControllerOptions> = {}) {
  const clock = createFakeClock();
  const metrics = createRuntimeMetrics({ process: false });
  const logger = recordingLogger();
  const ctrl = createController({ name: "t", reconcile, clock, metrics, logger, ...opts });
  /** The value of one series in the exposition, e.g. 'controller_runtime_reconcile_errors_total{controller="t"}'. */
  const value = (series: string): number => {
    const line = metrics
      .expose()
      .split("\n")
      .find((l) => l.startsWith(`${series} `));
    return Number(line?.slice(series.length + 1));
  };
  const total = (result: string) => value(`controller_runtime_reconcile_total{controller="t",result="${result}"}`);
  return { clock, metrics, logger, ctrl, value, total };
}

describe("controller: outcomes", () => {
  test("a failing key is retried after exactly 5, 10 and 20 ms, and its backoff resets once it succeeds", async () => {
    const calls: number[] = [];
    let failures = 3;
    const t = setup(async () => {
      calls.push(t.clock.now());
      if (failures-- > 0) throw new Error("conflict");
      return done();
    });
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.advance(1_000);
    expect(calls).toEqual([0, 5, 15, 35]);
    expect(t.total("error")).toBe(3);
    expect(t.total("success")).toBe(1);
    expect(t.value('controller_runtime_reconcile_errors_total{controller="t"}')).toBe(3);
    expect(t.logger.lines.filter((l) => l.startsWith("error:"))[2]).toContain(
      "(attempt 3); retrying in 20 ms: conflict",
    );
    failures = 1;
    t.ctrl.enqueue("ns/a");
    await t.clock.advance(1_000);
    expect(calls.slice(4)).toEqual([1_000, 1_005]); // back to 5 ms, not 40
    await t.ctrl.stop();
  });

  test("a terminal error is not retried", async () => {
    let calls = 0;
    const t = setup(async () => {
      calls++;
      throw new TerminalError("spec.image is empty; set it");
    });
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.advance(60_000);
    expect(calls).toBe(1);
    expect(t.value('controller_runtime_terminal_reconcile_errors_total{controller="t"}')).toBe(1);
    expect(t.value('controller_runtime_reconcile_errors_total{controller="t"}')).toBe(1);
    expect(t.total("error")).toBe(1);
    expect(t.clock.pendingTimers()).toBe(0);
    expect(t.logger.lines.at(-1)).toContain("will not be retried until it changes: spec.image is empty; set it");
    await t.ctrl.stop();
  });

  test("requeueAfter looks at the key again after exactly that long", async () => {
    const calls: number[] = [];
    const t = setup(async () => {
      calls.push(t.clock.now());
      return calls.length < 3 ? requeueAfter(60_000) : done();
    });
    t.ctrl.enqueue("a");
    await t.ctrl.start();
    await t.clock.advance(600_000);
    expect(calls).toEqual([0, 60_000, 120_000]);
    expect(t.total("requeue_after")).toBe(2);
    expect(t.total("success")).toBe(1);
    await t.ctrl.stop();
  });

  test("requeue(-1) runs the key again at once, behind keys of priority 0 queued after it", async () => {
    const order: string[] = [];
    const t = setup(
      async (req) => {
        order.push(req.key);
        if (req.key === "x") t.ctrl.enqueue("b"); // queued after "new" asked to run again
        return req.key === "new" && order.length === 1 ? requeue(-1) : done();
      },
      { concurrency: 1 },
    );
    t.ctrl.enqueue("new");
    t.ctrl.enqueue("x");
    await t.ctrl.start();
    await t.clock.settle();
    expect(order).toEqual(["new", "x", "b", "new"]);
    expect(t.total("requeue")).toBe(1);
    expect(t.total("success")).toBe(3);
    await t.ctrl.stop();
  });

  test("a crash in the reconciler counts as a panic, is retried, and does not stop the controller", async () => {
    let calls = 0;
    const t = setup(async () => {
      calls++;
      if (calls === 1) void (undefined as unknown as { x: number }).x; // TypeError
      if (calls === 2) return { kind: "nope" } as unknown as Outcome;
      return done();
    });
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.advance(100);
    expect(calls).toBe(3);
    expect(t.value('controller_runtime_reconcile_panics_total{controller="t"}')).toBe(2);
    expect(t.total("error")).toBe(2);
    expect(t.total("success")).toBe(1);
    expect(
      t.logger.lines.some((l) =>
        l.includes('reconcile returned {"kind":"nope"}; return done(), requeueAfter(ms) or requeue(priority)'),
      ),
    ).toBe(true);
    await t.ctrl.stop();
  });

  test("a reconcile exceeding its timeout has its signal aborted and counts as an error", async () => {
    const reasons: unknown[] = [];
    let calls = 0;
    const t = setup(
      (_req, signal) => {
        calls++;
        if (calls > 1) return Promise.resolve(done());
        return new Promise((resolve) =>
          signal.addEventListener("abort", () => {
            reasons.push(signal.reason);
            resolve(done()); // even a "done" after the timeout counts as an error
          }),
        );
      },
      { reconcileTimeoutMs: 1_000 },
    );
    t.ctrl.enqueue("ns/slow");
    await t.ctrl.start();
    await t.clock.advance(999);
    expect(reasons).toEqual([]);
    await t.clock.advance(1);
    expect(reasons[0]).toBeInstanceOf(ReconcileTimeoutError);
    expect(t.total("error")).toBe(1);
    await t.clock.advance(5);
    expect(calls).toBe(2);
    expect(t.total("success")).toBe(1);
    await t.ctrl.stop();
  });

  test("the request carries the namespace and name of the key", async () => {
    const seen: Request[] = [];
    const t = setup(async (req) => (seen.push(req), done()));
    t.ctrl.enqueue("ns/a");
    t.ctrl.enqueue("cluster-thing");
    await t.ctrl.start();
    await t.clock.settle();
    expect(seen.map(({ key, namespace, name }) => ({ key, namespace, name }))).toEqual([
      { key: "ns/a", namespace: "ns", name: "a" },
      { key: "cluster-thing", namespace: undefined, name: "cluster-thing" },
    ]);
    await t.ctrl.stop();
  });
});

describe("controller: concurrency", () => {
  test("no more than `concurrency` reconciles run at once", async () => {
    let running = 0;
    let peak = 0;
    const gates: Array<() => void> = [];
    const t = setup(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => gates.push(r));
        running--;
        return done();
      },
      { concurrency: 2 },
    );
    for (const k of ["a", "b", "c", "d", "e"]) t.ctrl.enqueue(k);
    await t.ctrl.start();
    await t.clock.settle();
    expect(running).toBe(2);
    expect(t.value('controller_runtime_active_workers{controller="t"}')).toBe(2);
    expect(t.value('controller_runtime_max_concurrent_reconciles{controller="t"}')).toBe(2);
    while (gates.length) {
      gates.shift()?.();
      await t.clock.settle();
    }
    expect(peak).toBe(2);
    expect(t.total("success")).toBe(5);
    expect(t.value('controller_runtime_active_workers{controller="t"}')).toBe(0);
    await t.ctrl.stop();
  });

  test("the same key never runs twice at once; events during its run cause exactly one more run", async () => {
    const gate = deferred();
    let running = 0;
    let peak = 0;
    let calls = 0;
    const t = setup(
      async () => {
        calls++;
        running++;
        peak = Math.max(peak, running);
        if (calls === 1) await gate.promise;
        running--;
        return done();
      },
      { concurrency: 4 },
    );
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.settle();
    t.ctrl.enqueue("ns/a");
    t.ctrl.enqueue("ns/a");
    await t.clock.settle();
    expect(calls).toBe(1);
    gate.resolve();
    await t.clock.settle();
    expect(calls).toBe(2);
    expect(peak).toBe(1);
    await t.ctrl.stop();
  });
});

describe("controller: superseded requests", () => {
  test("a request is superseded once its key is enqueued again during the run, and the next run is not", async () => {
    const gate = deferred();
    const seen: boolean[][] = [];
    const t = setup(async (req) => {
      const run = [req.superseded()];
      seen.push(run);
      if (seen.length === 1) await gate.promise;
      run.push(req.superseded());
      return done();
    });
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.settle();
    t.ctrl.enqueue("ns/a");
    gate.resolve();
    await t.clock.settle();
    expect(seen).toEqual([
      [false, true],
      [false, false],
    ]);
    await t.ctrl.stop();
  });

  test("a request is not superseded when its key waits only for a later requeueAfter", async () => {
    const seen: boolean[] = [];
    const t = setup(async (req) => {
      seen.push(req.superseded());
      return seen.length === 1 ? requeueAfter(1_000) : done();
    });
    t.ctrl.enqueue("ns/a");
    await t.ctrl.start();
    await t.clock.advance(1_000);
    expect(seen).toEqual([false, false]);
    await t.ctrl.stop();
  });
});

describe("controller: lifecycle", () => {
  test("stop waits for in-flight reconciles and starts no new ones", async () => {
    const gate = deferred();
    const ran: string[] = [];
    let aborted = false;
    const t = setup(async (req, signal) => {
      ran.push(req.key);
      signal.addEventListener("abort", () => (aborted = true));
      await gate.promise;
      return done();
    });
    t.ctrl.enqueue("a");
    t.ctrl.enqueue("b");
    await t.ctrl.start();
    await t.clock.settle();
    let stopped = false;
    const stopping = t.ctrl.stop({ graceMs: 10_000 }).then(() => (stopped = true));
    await t.clock.advance(5_000);
    expect(t.ctrl.status()).toBe("stopping");
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(ran).toEqual(["a"]);
    expect(aborted).toBe(false);
    expect(t.ctrl.status()).toBe("stopped");
    t.ctrl.enqueue("c");
    await t.clock.advance(1_000);
    expect(ran).toEqual(["a"]);
  });

  test("a reconcile still running when the grace period ends is aborted and stop returns", async () => {
    let reason: unknown;
    const t = setup(
      (_req, signal) => new Promise<Outcome>(() => signal.addEventListener("abort", () => (reason = signal.reason))),
    );
    t.ctrl.enqueue("a");
    await t.ctrl.start();
    await t.clock.settle();
    let stopped = false;
    const stopping = t.ctrl.stop({ graceMs: 1_000 }).then(() => (stopped = true));
    await t.clock.advance(999);
    expect(stopped).toBe(false);
    await t.clock.advance(1);
    await stopping;
    expect(String(reason)).toContain('controller "t" is stopping');
    expect(
      t.logger.lines.some((l) => l.startsWith("warn:") && l.includes("still running after the 1000 ms grace period")),
    ).toBe(true);
  });

  test("start waits for watched sources to sync; events that arrive meanwhile are queued", async () => {
    const seen: string[] = [];
    const t = setup(async (req) => (seen.push(req.key), done()));
    const src = fakeSource<{ metadata: { name: string; namespace: string } }>([], false);
    t.ctrl.watch(src, (e, enqueue) => enqueue(`${e.object.metadata.namespace}/${e.object.metadata.name}`));
    let started = false;
    const starting = t.ctrl.start().then(() => (started = true));
    src.emit({ type: "add", object: { metadata: { namespace: "ns", name: "a" } } });
    await t.clock.advance(1_000);
    expect([started, seen, t.ctrl.status()]).toEqual([false, [], "syncing"]);
    src.setSynced(true);
    await t.clock.advance(100);
    await starting;
    expect(seen).toEqual(["ns/a"]);
    await t.ctrl.stop();
    expect(src.subscribers()).toBe(0);
  });

  test("start rejects with what to check when sources do not sync in time", async () => {
    const t = setup(async () => done(), { cacheSyncTimeoutMs: 5_000 });
    t.ctrl.watch(fakeSource([], false), () => {});
    const starting = t.ctrl.start();
    const outcome = starting.then(
      () => "started",
      (e: Error) => e.message,
    );
    await t.clock.advance(5_000);
    expect(await outcome).toContain(
      "did not sync within 5000 ms; check that the API server is reachable and that RBAC allows list and watch",
    );
    expect(t.ctrl.status()).toBe("stopped");
  });

  test("a handler that throws is logged and the event dropped; later events still flow", async () => {
    const seen: string[] = [];
    const t = setup(async (req) => (seen.push(req.key), done()));
    const src = fakeSource<string>();
    t.ctrl.watch(src, (e, enqueue) => {
      if (e.object === "bad") throw new Error("cannot map");
      enqueue(e.object);
    });
    await t.ctrl.start();
    src.emit({ type: "add", object: "bad" });
    src.emit({ type: "add", object: "good" });
    await t.clock.settle();
    expect(seen).toEqual(["good"]);
    expect(
      t.logger.lines.some((l) =>
        l.includes("an event handler failed on a add event; the event was dropped: cannot map"),
      ),
    ).toBe(true);
    await t.ctrl.stop();
  });

  test("resync enqueues every key every 10 h, jittered by up to 10%", async () => {
    const seen: string[] = [];
    const t = setup(async (req) => (seen.push(`${req.key}@${t.clock.now() / 3_600_000}h`), done()));
    const randoms = [0, 0.5, 1 - 1e-9];
    t.ctrl.resync(() => ["a", "b"], { random: () => randoms.shift() ?? 0.5 });
    await t.ctrl.start();
    await t.clock.advance(9 * 3_600_000 - 1);
    expect(seen).toEqual([]);
    await t.clock.advance(1);
    expect(seen).toEqual(["a@9h", "b@9h"]);
    await t.clock.advance(10 * 3_600_000);
    expect(seen.slice(2)).toEqual(["a@19h", "b@19h"]);
    await t.ctrl.stop();
    expect(t.clock.pendingTimers()).toBe(0);
  });

  test("run(signal) stops the controller when the signal aborts", async () => {
    const t = setup(async () => done());
    const ac = new AbortController();
    const running = t.ctrl.run(ac.signal, { graceMs: 100 });
    await t.clock.settle();
    expect(t.ctrl.status()).toBe("running");
    ac.abort();
    await running;
    expect(t.ctrl.status()).toBe("stopped");
  });

  test("a controller cannot be started twice", async () => {
    const t = setup(async () => done());
    await t.ctrl.start();
    await expect(t.ctrl.start()).rejects.toThrow(/already started/);
    await t.ctrl.stop();
  });
});

describe("controller: the event loop", () => {
  test("reconciles that finish without I/O (a first pass over a converged cluster) let timers and I/O run between them", async () => {
    let reconciled = 0;
    const t = setup(async () => {
      reconciled++;
      return done();
    });
    for (let i = 0; i < 2_000; i++) t.ctrl.enqueue(`ns/app-${i}`);
    let atFirstTurn: number | undefined;
    setImmediate(() => (atFirstTurn = reconciled)); // what a scrape, a probe or a lease renewal waits for
    await t.ctrl.start();
    while (reconciled < 2_000) await new Promise<void>((r) => setImmediate(r));
    expect(atFirstTurn).toBeLessThan(50);
    await t.ctrl.stop();
  });
});
