import { describe, expect, test } from "bun:test";
import { createFakeClock } from "./clock.ts";
import { createController } from "./controller.ts";
import { type LogContext, logContext, reconcileContext, withLogContext } from "./logger.ts";
import { createRuntimeMetrics } from "./metrics.ts";
import { done } from "./reconcile.ts";

describe("log context", () => {
  test("fields added by withLogContext are seen after awaits, nest, and end with the work", async () => {
    const seen: (LogContext | undefined)[] = [];
    await withLogContext({ controller: "c" }, async () => {
      await Bun.sleep(1);
      await withLogContext({ name: "n" }, async () => {
        await Promise.resolve();
        seen.push(logContext());
      });
      seen.push(logContext());
    });
    seen.push(logContext());
    expect(seen).toEqual([{ controller: "c", name: "n" }, { controller: "c" }, undefined]);
  });

  test("a reconcile context splits the key and has a fresh reconcileID", () => {
    const a = reconcileContext("webapp", "team-a/web");
    expect(a).toMatchObject({ controller: "webapp", namespace: "team-a", name: "web" });
    expect(a.reconcileID).toMatch(/^[0-9a-f-]{36}$/);
    expect(reconcileContext("webapp", "team-a/web").reconcileID).not.toBe(a.reconcileID);
    expect(reconcileContext("nodes", "node-1")).toMatchObject({ name: "node-1" });
  });

  test("every line a reconcile writes, in the reconciler and in the controller, has one reconcileID", async () => {
    const clock = createFakeClock();
    const lines: LogContext[] = [];
    const logger = {
      debug: () => lines.push({ ...logContext() }),
      info: () => lines.push({ ...logContext() }),
      warn: () => lines.push({ ...logContext() }),
      error: () => lines.push({ ...logContext() }),
    };
    const ctrl = createController({
      name: "webapp",
      clock,
      metrics: createRuntimeMetrics({ process: false }),
      logger,
      reconcile: async () => {
        logger.info();
        await clock.sleep(1);
        logger.info();
        return done();
      },
    });
    ctrl.enqueue("team-a/web");
    ctrl.enqueue("team-b/api");
    await ctrl.start();
    await clock.advance(100);
    await ctrl.stop();
    const perReconcile = lines.filter((l) => l.reconcileID);
    // two lines from the reconciler, one debug "reconciled" line from the controller, per key
    expect(perReconcile.length).toBe(6);
    const ids = new Map<string, Set<string>>();
    for (const l of perReconcile)
      ids.set(l.name as string, (ids.get(l.name as string) ?? new Set()).add(l.reconcileID as string));
    expect([...ids.keys()].sort()).toEqual(["api", "web"]);
    expect([...ids.values()].map((s) => s.size)).toEqual([1, 1]);
    expect(perReconcile.every((l) => l.controller === "webapp")).toBe(true);
  });
});
