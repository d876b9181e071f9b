import { expect, test } from "bun:test";
import type { Section } from "./_context.ts";
import {
  addRequests,
  parseMetrics,
  REQUESTS_QUIET_MS,
  requestsByMethod,
  requestsOnceQuiet,
  requestsSince,
  total,
} from "./_operator.ts";
import { hotFunctions } from "./_profile.ts";
import { ANALYSIS_END, ANALYSIS_START, STALE_MARK, cpuRows, render, type RunInfo } from "./_report.ts";

const info: RunInfo = {
  date: "2026-01-01T00:00:00Z",
  machine: { cores: 2, memory: "24 GiB", cpu: "AMD EPYC", kernel: "6.1" },
  versions: { bun: "1.4.5", kubernetes: "v1.36.3", devctl: "0.1.0 (commit abc)" },
  cluster: "local",
  command: "npm run bench",
  loadBefore: "1 1 1",
  loadAfter: "2 2 2",
  machineBusy: 0.5,
  durationSeconds: 60,
};
const section: Section = {
  id: "heal",
  title: "4. Heal latency",
  goal: "p99 < 1 s",
  verdict: "met",
  headline: "p99 40 ms",
  tables: [{ head: ["a", "b"], rows: [["x", "1"]] }],
  notes: ["a note"],
};

test("a rerun keeps the hand-written analysis of the previous report and refreshes everything else", () => {
  const previous = `old numbers\n${ANALYSIS_START}\nThe API server is the bottleneck.\n${ANALYSIS_END}\nmore old numbers`;
  const md = render(info, [section], previous);
  expect(md).toContain("The API server is the bottleneck.");
  expect(md).not.toContain("old numbers");
  expect(md).toContain("| [4. Heal latency](#4-heal-latency) | p99 < 1 s | p99 40 ms | **met** |");
  expect(md).toContain("- a note");
});

test("the kept analysis is marked stale when figures it quotes from the previous tables changed, and stays so", () => {
  const analysis = `${ANALYSIS_START}\nHeal p99 is 72 ms, far below 1 s; 10,000 WebApps cost 266.5 MiB.\n${ANALYSIS_END}`;
  const same = render(info, [{ ...section, headline: "p99 72 ms" }], `| p99 72 ms |\n${analysis}`);
  expect(same).not.toContain(STALE_MARK);
  const rerun = render(info, [section], `| p99 72 ms | 266.5 MiB |\n${analysis}`);
  expect(rerun).toContain(
    `${ANALYSIS_START}\n${STALE_MARK} the figures this analysis quotes changed in a rerun (no longer in the tables: 72, 266.5).`,
  );
  expect(rerun).toContain("Heal p99 is 72 ms");
  // Figures the old tables never showed (from separate runs) do not make it stale; a stale mark is kept.
  const again = render(info, [{ ...section, headline: "p99 72 ms" }], rerun);
  expect(again.split(STALE_MARK).length).toBe(2);
});

test("the report names the machine, the versions and how busy the machine was", () => {
  const md = render(info, [section], undefined);
  expect(md).toContain("2 cores (AMD EPYC), 24 GiB memory");
  expect(md).toContain("Bun 1.4.5, Kubernetes v1.36.3");
  expect(md).toContain("50% busy");
});

test("CPU rows attribute what the named processes did not use to the rest of the machine", () => {
  const rows = cpuRows({
    wallSeconds: 10,
    byProcess: { operator: 1, "kube-apiserver": 9 },
    machineBusy: 15,
    machineCapacity: 20,
  });
  expect(rows[0]).toEqual(["kube-apiserver", "9.00", "0.90"]);
  expect(rows[2]).toEqual(["everything else on the machine", "5.00", "0.50"]);
  expect(rows[3]?.[2]).toContain("75% busy");
});

test("metrics text is summed per family and label, and requests per method", () => {
  const m = parseMetrics(
    [
      "# HELP rest_client_requests_total x",
      'rest_client_requests_total{code="200",method="GET",host="h"} 7',
      'rest_client_requests_total{code="201",method="PATCH",host="h"} 2',
      'rest_client_requests_total{code="409",method="PATCH",host="h"} 1',
      'controller_runtime_reconcile_total{controller="webapp",result="success"} 5',
      "process_resident_memory_bytes 1.5e+07",
    ].join("\n"),
  );
  expect(requestsByMethod(m)).toEqual({ GET: 7, PATCH: 3 });
  expect(total(m, "rest_client_requests_total", { code: "409" })).toBe(1);
  expect(total(m, "process_resident_memory_bytes")).toBe(15_000_000);
});

test("requests are counted once the operator has stopped sending, so late Events count too", async () => {
  const counts = [3, 3, 5, 9, 9, 9, 9, 9, 9, 9, 9, 9, 12];
  let scrapes = 0;
  const scrape = async () =>
    parseMetrics(`rest_client_requests_total{code="201",method="POST",host="h"} ${counts[Math.min(scrapes++, 12)]}`);
  const started = performance.now();
  expect(await requestsOnceQuiet(scrape)).toEqual({ POST: 9 });
  expect(performance.now() - started).toBeGreaterThanOrEqual(REQUESTS_QUIET_MS);
});

test("a bun --cpu-prof-md profile yields its hot functions with source paths shortened to src/", () => {
  const md = [
    "| Duration | Samples | Interval | Functions |",
    "|----------|---------|----------|----------|",
    "| 96.34s | 2812 | 1.0ms | 552 |",
    "",
    "## Hot Functions (Self Time)",
    "",
    "| Self% | Self | Total% | Total | Function | Location |",
    "|------:|-----:|-------:|------:|----------|----------|",
    "| 30.7% | 29.66s | 30.7% | 29.66s | `fetch` | `[native code]` |",
    "| 1.0% | 964.9ms | 1.0% | 964.9ms | `async json` | `/work/main/src/kube/transport.ts:102` |",
    "",
  ].join("\n");
  const p = hotFunctions(md, 5);
  expect(p.summary).toBe("96.34s, 2812, 1.0ms, 552");
  expect(p.rows).toEqual([
    ["30.7%", "29.66s", "`fetch`", "`[native code]`"],
    ["1.0%", "964.9ms", "`async json`", "`src/kube/transport.ts:102`"],
  ]);
});

test("the issue's goals follow the summary in the issue's order: convergence, memory, heal, update, restart", () => {
  const g = (name: string) => ({
    name,
    bound: "devctl / Go ≤ 1.0",
    devctl: "1",
    peer: "2",
    ratio: "0.50",
    verdict: "met" as const,
  });
  const md = render(
    info,
    [
      { ...section, id: "convergence", title: "1. Convergence", goals: [g("convergence of 1,000")] },
      { ...section, id: "steady", title: "2. Steady state", goals: [g("restart writes")] },
      { ...section, id: "memory", title: "3. Memory", goals: [g("RSS idle")] },
      { ...section, goals: [g("heal p99")] },
    ],
    undefined,
  );
  const rows = md.split("\n").filter((l) => l.startsWith("| ") && l.includes("devctl / Go ≤"));
  expect(rows.map((r) => r.split(" | ")[0])).toEqual([
    "| convergence of 1,000",
    "| RSS idle",
    "| heal p99",
    "| restart writes",
  ]);
  expect(md.indexOf("Goals of issue #11")).toBeGreaterThan(md.indexOf("| scenario | goal |"));
  expect(md.indexOf("Goals of issue #11")).toBeLessThan(md.indexOf(ANALYSIS_START));
});

test("requests per method are what the operator sent between the two scrapes, sorted by method", () => {
  const before = { GET: 12, PATCH: 3 };
  const after = { PATCH: 8, GET: 13, POST: 2 };
  expect(requestsSince(before, after)).toEqual({ GET: 1, PATCH: 5, POST: 2 });
  expect(Object.keys(requestsSince(before, after))).toEqual(["GET", "PATCH", "POST"]);
});

test("a method the operator did not use during the trials counts zero, and no scrape at all gives no methods", () => {
  expect(requestsSince({ PUT: 4 }, { PUT: 4 })).toEqual({ PUT: 0 });
  expect(requestsSince({}, {})).toEqual({});
});

test("requests of the parts add up per method, sorted by method", () => {
  expect(addRequests({ POST: 2, GET: 1 }, { PATCH: 1, GET: 3 })).toEqual({ GET: 4, PATCH: 1, POST: 2 });
  expect(Object.keys(addRequests({ POST: 1 }, { GET: 1 }))).toEqual(["GET", "POST"]);
});
