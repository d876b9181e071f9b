import { expect, test } from "bun:test";
import type { Context } from "../_context.ts";
import type { CpuUsage } from "../_proc.ts";
import {
  type ConvergenceRun,
  charts,
  convergenceGoals,
  convergenceReport,
  medianOf,
  type Repeat,
} from "./_convergence-report.ts";
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
  evidence: {
    log: `/tmp/ev/${impl}-${availableMs}.log`,
    metrics: `/tmp/ev/${impl}-${availableMs}.metrics.jsonl`,
    reconciles: 2000,
    requeueAfter: 1000,
    errors: 0,
    retries: 1000,
    failedRequests: {},
    slowRequests: 0,
    longestStallMs: 1000,
    maxDepth: 12,
    maxRunningS: 0.2,
  },
});
const repeat = (devctl: number, peer: number, floor: number): Repeat => ({
  floor: { writtenMs: floor / 2, availableMs: floor, usage, namespace: "f", curve: [[floor, 1000]] },
  ops: { devctl: run("devctl", devctl), peer: run("peer", peer, 4000) },
});
const ctx = {
  impls: ["devctl", "peer"],
  evidenceDir: "/tmp/ev",
  opts: { repeats: 3, concurrency: 4, clientConcurrency: 16 },
} as unknown as Context;

test("operators alternate between repeats, and the fixture repeat ends with devctl, whose cluster is kept", () => {
  expect(repeatOrder(["devctl", "peer"], 1, false)).toEqual(["floor", "minimal", "devctl", "peer"]);
  expect(repeatOrder(["devctl", "peer"], 2, false)).toEqual(["floor", "minimal", "peer", "devctl"]);
  expect(repeatOrder(["devctl", "peer"], 3, true)).toEqual(["floor", "minimal", "peer", "devctl"]);
  expect(repeatOrder(["devctl"], 1, true)).toEqual(["floor", "minimal", "devctl"]);
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

test("the goals: time at every N and beside the hog (<= 0.9x), requests and CPU per WebApp at the largest N (<= 1.0x)", () => {
  const runs = new Map([
    [100, [repeat(8, 10, 5), repeat(9, 10, 5), repeat(8, 10, 5)]],
    [1000, [repeat(50, 40, 30), repeat(44, 40, 30), repeat(48, 40, 30)]],
  ]);
  const busy = {
    n: 1000,
    list: [repeat(88, 70, 1), repeat(60, 70, 1), repeat(70, 70, 1)].map((r) => ({ ops: r.ops })),
  };
  const goals = convergenceGoals(runs, busy);
  expect(goals.map((g) => [g.name, g.ratio, g.verdict])).toEqual([
    ["convergence of 100 WebApps → all Available", "0.80", "met"],
    ["convergence of 1,000 WebApps → all Available", "1.20", "missed"],
    ["the same for 1,000 beside a CPU hog (busy machine)", "1.00", "missed"],
    ["API requests per WebApp while converging 1,000", "1.25", "missed"],
    ["operator CPU ms per WebApp while converging 1,000", "1.00", "met"],
  ]);
  const s = convergenceReport(ctx, runs, [], true, busy);
  expect(s.goals).toEqual(goals);
  expect(s.verdict).toBe("missed");
  expect(s.headline).toContain("N=1000 beside a CPU hog: 70 ms, 1.00× Go");
  const busyTable = s.tables.find((t) => t.caption?.includes("CPU hog"));
  expect(busyTable?.rows.map((r) => r.slice(0, 2))).toEqual([
    ["devctl", "70 ms (60 ms–88 ms, n=3)"],
    ["Go peer", "70 ms (70 ms–70 ms, n=3)"],
  ]);
});

test("every run's evidence is listed with its log, and a run 1.3x slower than its others is named in the notes", () => {
  const runs = new Map([[1000, [repeat(75_900, 43_300, 30), repeat(44_000, 41_800, 30), repeat(50_200, 40_200, 30)]]]);
  const s = convergenceReport(ctx, runs, [], true);
  const evidence = s.tables.find((t) => t.head.includes("log"));
  expect(evidence?.rows.length).toBe(6);
  expect(evidence?.rows[0]).toEqual([
    "N=1000, repeat 1",
    "devctl",
    "2000 reconciles (1000 asked to look again later), 0 reconcile errors, 1000 queue retries, every answer 2xx, 0 requests slower than 1 s, longest stretch without a reconcile 1000 ms, max queue depth 12, longest single reconcile 0.2 s",
    "`/tmp/ev/devctl-75900.log`",
    "75.9 s",
  ]);
  expect(s.notes.some((n) => n.includes("wrote its whole output to a file in /tmp/ev"))).toBe(true);
  expect(s.notes.filter((n) => n.startsWith("Outlier"))).toEqual([
    "Outlier: N=1000, repeat 1, devctl took 75.9 s, more than 1.3× the median of the others (47.1 s); its log is /tmp/ev/devctl-75900.log.",
  ]);
});

test("the minimal operator gets its own table (minimal / Go beside 0.9x Go), its CPU table and a curve in the chart", () => {
  const withMinimal = (devctl: number, peer: number, floor: number, minimal: number): Repeat => ({
    ...repeat(devctl, peer, floor),
    minimal: { writtenMs: minimal / 2, availableMs: minimal, usage, namespace: "i", curve: [[minimal, 1000]] },
  });
  const runs = new Map([
    [1000, [withMinimal(50_000, 48_000, 40_000, 46_000), withMinimal(52_000, 50_000, 41_000, 44_000)]],
  ]);
  const s = convergenceReport(ctx, runs, [], true);
  const t = s.tables.find((x) => x.head.includes("minimal operator: all Available"));
  // per repeat minimal / Go: 0.958, 0.88 -> median 0.92; devctl / minimal: 1.087, 1.18 -> 1.13
  expect(t?.rows).toEqual([["1000", "45.0 s (44.0 s–46.0 s, n=2)", "1.11", "1.13", "**0.92**", "44.1 s"]]);
  expect(s.tables.some((x) => x.caption?.startsWith("The same for the minimal operator (44.0 s wall"))).toBe(true);
  expect(charts(runs, ["devctl", "peer"])[0]?.svg).toContain('data-name="minimal operator"');
  // Without minimal runs there is no such table.
  const plain = convergenceReport(ctx, new Map([[1000, [repeat(50, 40, 30)]]]), [], true);
  expect(plain.tables.some((x) => x.head.includes("minimal operator: all Available"))).toBe(false);
});
