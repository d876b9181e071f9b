import { expect, test } from "bun:test";
import type { Context } from "../_context.ts";
import type { CpuUsage } from "../_proc.ts";
import { type ConvergenceRun, charts, convergenceReport, medianOf, type Repeat } from "./_convergence-report.ts";
import { repeatOrder } from "./convergence.ts";

const usage: CpuUsage = { wallSeconds: 10, byProcess: { operator: 1 }, machineBusy: 5, machineCapacity: 20 };
const run = (impl: "devctl" | "peer", availableMs: number, requests = 5000): ConvergenceRun => ({
  impl,
  availableMs,
  childrenMs: availableMs / 2,
  createMs: 1,
  op: usage,
  rss: 64 * 2 ** 20,
  requests: { GET: requests },
  namespace: "ns",
  curve: [
    [0, 0],
    [availableMs, 1000],
  ],
  rssCurve: [
    [0, 60 * 2 ** 20],
    [availableMs, 64 * 2 ** 20],
  ],
});
const repeat = (devctl: number, peer: number, floor: number): Repeat => ({
  floor: { writtenMs: floor / 2, availableMs: floor, usage, namespace: "f", curve: [[floor, 1000]] },
  ops: { devctl: run("devctl", devctl), peer: run("peer", peer, 4000) },
});
const ctx = {
  impls: ["devctl", "peer"],
  opts: { repeats: 3, concurrency: 4, clientConcurrency: 16 },
} as unknown as Context;

test("operators alternate between repeats, and the fixture repeat ends with the floor and then devctl", () => {
  expect(repeatOrder(["devctl", "peer"], 1, false)).toEqual(["floor", "devctl", "peer"]);
  expect(repeatOrder(["devctl", "peer"], 2, false)).toEqual(["floor", "peer", "devctl"]);
  expect(repeatOrder(["devctl", "peer"], 3, true)).toEqual(["peer", "floor", "devctl"]);
  expect(repeatOrder(["devctl"], 1, true)).toEqual(["floor", "devctl"]);
});

test("ratios are medians of per-repeat ratios, and the goal is 0.9x the Go peer at every N", () => {
  // per-repeat devctl/Go: 0.5, 2.0, 0.8 -> median 0.8 (the ratio of medians would be 50/50 = 1.0)
  const runs = new Map([[1000, [repeat(50, 100, 40), repeat(100, 50, 40), repeat(40, 50, 40)]]]);
  expect(medianOf(runs.get(1000) ?? [], (r) => (r.ops.devctl?.availableMs ?? 0) / (r.ops.peer?.availableMs ?? 1))).toBe(
    0.8,
  );
  const s = convergenceReport(ctx, runs, [], true);
  expect(s.verdict).toBe("met");
  expect(s.tables[0]?.rows[0]).toContain("**0.80**");
  const slow = convergenceReport(ctx, new Map([[1000, [repeat(95, 100, 40)]]]), [], true);
  expect(slow.verdict).toBe("missed");
  const cost = s.tables[1]?.rows.find((r) => r[1] === "API requests per WebApp");
  expect(cost).toEqual(["1000", "API requests per WebApp", "5.00", "4.00", "**1.25**"]);
});

test("without the peer there is no goal and no Go column", () => {
  const only = { ...ctx, impls: ["devctl"] } as unknown as Context;
  const r: Repeat = { floor: repeat(1, 1, 1).floor, ops: { devctl: run("devctl", 50) } };
  const s = convergenceReport(only, new Map([[100, [r]]]), [], true);
  expect(s.verdict).toBe("no goal");
  expect(s.tables[0]?.head.some((h) => h.includes("Go"))).toBe(false);
});

test("charts: a convergence curve per N with devctl, the peer and the floor, and RSS for the largest N", () => {
  const runs = new Map([
    [100, [repeat(10, 20, 5)]],
    [1000, [repeat(50, 100, 40)]],
  ]);
  const c = charts(runs, ["devctl", "peer"]);
  expect(c.map((x) => x.file)).toEqual([
    "bench-convergence-100.svg",
    "bench-convergence-1000.svg",
    "bench-rss-1000.svg",
  ]);
  for (const name of ["devctl", "Go peer", "floor (Deployments Available)"])
    expect(c[1]?.svg).toContain(`data-name="${name}"`);
  // RSS from 60 to 64 MiB: the axis runs to 100 MiB in steps of 20 MiB
  expect(c[2]?.svg).toContain(">100 MiB</text>");
  expect(c[2]?.svg).toContain(">20 MiB</text>");
});
