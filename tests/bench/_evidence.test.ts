import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { counters, delta, describeEvidence, longestStall, outliers, startRecorder } from "./_evidence.ts";
import { parseMetrics, SCRAPED_FAMILIES } from "./_operator.ts";

const metrics = (reconciles: number, errors: number, retries: number, conflicts: number) =>
  parseMetrics(
    [
      `controller_runtime_reconcile_total{controller="webapp",result="success"} ${reconciles}`,
      `controller_runtime_reconcile_total{controller="webapp",result="error"} ${errors}`,
      `controller_runtime_reconcile_total{controller="webapp",result="requeue_after"} 3`,
      `controller_runtime_reconcile_errors_total{controller="webapp"} ${errors}`,
      `workqueue_retries_total{name="webapp"} ${retries}`,
      `workqueue_depth{name="webapp"} 7`,
      `workqueue_longest_running_processor_seconds{name="webapp"} 29.5`,
      `rest_client_requests_total{code="200",method="GET",host="h"} 100`,
      `rest_client_requests_total{code="409",method="PATCH",host="h"} ${conflicts}`,
      `rest_client_request_duration_seconds_bucket{verb="GET",host="h",le="1"} 98`,
      `rest_client_request_duration_seconds_bucket{verb="GET",host="h",le="+Inf"} ${100 + conflicts}`,
      `rest_client_request_duration_seconds_count{verb="GET",host="h"} ${100 + conflicts}`,
    ].join("\n"),
  );

test("counters read errors, retries, depth, the longest-running reconcile and requests by status code", () => {
  expect(counters(metrics(10, 2, 5, 1))).toEqual({
    reconciles: 15,
    requeueAfter: 3,
    errors: 2,
    retries: 5,
    depth: 7,
    longestRunning: 29.5,
    requestsByCode: { "200": 100, "409": 1 },
    slowRequests: 3,
  });
  expect(counters(new Map()).errors).toBe(0);
});

test("the delta of two readings names the requests that did not succeed, and only those that grew", () => {
  const d = delta(counters(metrics(10, 2, 5, 1)), counters(metrics(20, 4, 9, 4)));
  expect(d).toEqual({
    reconciles: 12,
    requeueAfter: 0,
    errors: 2,
    retries: 4,
    failedRequests: { "409": 3 },
    slowRequests: 3,
  });
});

test("the longest stall is the longest stretch in which the reconcile count did not move", () => {
  const at = (t: number, reconciles: number) => ({ t, c: { ...counters(new Map()), reconciles } });
  expect(longestStall([at(0, 0), at(1000, 5), at(2000, 5), at(3000, 5), at(4000, 9), at(5000, 9)])).toBe(2000);
  expect(longestStall([at(0, 1), at(1000, 2)])).toBe(0);
  expect(longestStall([])).toBe(0);
});

test("a run is an outlier above 1.3x the median of the other runs of its group, and needs two others", () => {
  const run = (label: string, ms: number, group = "devctl") => ({ label, ms, file: `${label}.log`, group });
  const found = outliers([run("r1", 75_900), run("r2", 44_000), run("r3", 50_200), run("g1", 90_000, "peer")]);
  expect(found).toEqual([{ label: "r1", ms: 75_900, othersMedian: 47_100, file: "r1.log" }]);
  expect(outliers([run("r1", 75_900), run("r2", 44_000)])).toEqual([]);
  expect(outliers([run("r1", 61_000), run("r2", 47_000), run("r3", 47_000)])).toEqual([]);
});

test("the recorder writes a JSON line per sample and sums up what changed over the run", async () => {
  const dir = mkdtempSync(join(tmpdir(), "evidence-test-"));
  const files = { log: join(dir, "run.log"), metrics: join(dir, "run.metrics.jsonl") };
  let reconciles = 0;
  const rec = await startRecorder(
    async () => metrics(reconciles, 0, reconciles, 0),
    files,
    () => 0,
    20,
  );
  reconciles = 5;
  await Bun.sleep(70);
  reconciles = 9;
  const e = await rec.stop();
  expect(e).toMatchObject({ ...files, errors: 0, retries: 9, failedRequests: {}, maxDepth: 7, maxRunningS: 29.5 });
  const lines = readFileSync(files.metrics, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  rmSync(dir, { recursive: true, force: true });
  expect(lines[0]).toMatchObject({ phase: "before", reconciles: 3 });
  expect(lines.at(-1)).toMatchObject({ phase: "after", reconciles: 12 });
  expect(lines.length).toBeGreaterThanOrEqual(3);
  expect(describeEvidence(e)).toContain(
    "9 reconciles (0 asked to look again later), 0 reconcile errors, 9 queue retries",
  );
});

test("every metric family the benchmark reads is one it asks the operator for (SCRAPED_FAMILIES)", () => {
  const sources = new Bun.Glob("**/*.ts").scanSync({ cwd: import.meta.dir });
  const read = new Set<string>();
  for (const file of sources) {
    if (file.endsWith(".test.ts")) continue;
    const text = readFileSync(join(import.meta.dir, file), "utf8");
    for (const m of text.matchAll(/"((?:controller_runtime|workqueue|rest_client|leader_election|process)_[a-z_]+)"/g))
      read.add((m[1] as string).replace(/_(bucket|count|sum)$/, ""));
  }
  expect(read.size).toBeGreaterThan(5);
  expect([...read].filter((f) => !(SCRAPED_FAMILIES as readonly string[]).includes(f))).toEqual([]);
});
