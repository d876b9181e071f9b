import { describe, expect, test } from "bun:test";
import { buildManifests } from "./manifests.ts";
import {
  containerResources,
  DEFAULT_MEMORY,
  MEASURED,
  memoryFor,
  memoryProblem,
  PEAK_HEADROOM,
  type MemoryFootprint,
} from "./resources.ts";
import { quantityValue } from "../api/quantity.ts";

/**
 * The memory figures BENCHMARKS.md recorded (sections "3. Memory" and "8. Production shape", the larger of the two
 * shapes' readings), read from the file itself.
 */
async function benchmarkedFootprint(): Promise<MemoryFootprint & { webapps: number }> {
  const text = await Bun.file(new URL("../../BENCHMARKS.md", import.meta.url)).text();
  const section = text.split(/^## /m).find((s) => s.startsWith("3. Memory"));
  if (!section) throw new Error('BENCHMARKS.md has no section "## 3. Memory"');
  const goal = /with ([\d,]+) WebApps cached/.exec(section);
  if (!goal) throw new Error('BENCHMARKS.md section 3 states no "with N WebApps cached" goal');
  const webapps = Number(goal[1]!.replace(/,/g, ""));
  const rows = [...section.matchAll(/^\| (\d+) \| ([^|]+) \| ([\d.]+) MiB/gm)].map((m) => ({
    webapps: Number(m[1]),
    state: m[2]!,
    mib: Number(m[3]),
  }));
  const atScale = rows.filter((r) => r.webapps === webapps);
  const peak = atScale.find((r) => r.state.includes("peak"));
  const steady = atScale.filter((r) => r !== peak);
  // Section 8 reads the same at that scale for production-shaped WebApps: the heavier shape sizes the operator.
  const production = text.split(/^## /m).find((s) => s.startsWith("8. Production shape"));
  const productionRss = (reading: string) => {
    const row = production?.split("\n").find((l) => l.startsWith(`| ${reading}`));
    const mib = row ? /\| [\d.]+ MiB \| ([\d.]+) MiB \|/.exec(row)?.[1] : undefined;
    if (mib === undefined) throw new Error(`BENCHMARKS.md section 8 has no production-shaped "${reading}" reading`);
    return Number(mib);
  };
  const productionPeak = productionRss("the operator working through them: peak");
  const productionSteady = ["the same process, 5 s after its queue drained", "fresh start, 5 s after its first pass"];
  // The idle footprint is the largest idle reading: 5 s after ready devctl has just given back start-up's code
  // pages, and it maps back what it runs (the reading 120 s after ready).
  const idleRows = rows.filter((r) => r.webapps === 0 && r.state.includes("idle"));
  const idle = idleRows.sort((a, b) => b.mib - a.mib)[0];
  if (!peak || !steady.length || !idle)
    throw new Error(
      `BENCHMARKS.md section 3 lacks the idle, peak or steady rows at ${webapps}: ${JSON.stringify(rows)}`,
    );
  return {
    webapps,
    idleMiB: idle.mib,
    peakMiB: Math.max(peak.mib, productionPeak),
    steadyMiB: Math.max(...steady.map((r) => r.mib), ...productionSteady.map(productionRss)),
  };
}

describe("the operator's memory", () => {
  test("request and limit follow the footprint BENCHMARKS.md recorded at the scale of its memory goal", async () => {
    const measured = await benchmarkedFootprint();
    expect(measured).toEqual({ ...MEASURED });
    const want = memoryFor(measured);
    const dep = buildManifests({ namespace: "ns", image: "i", replicas: 2 }).find(
      (o) => o.kind === "Deployment",
    ) as any;
    expect(dep.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: "50m", memory: want.request },
      limits: { memory: want.limit },
    });
    // Room for the peak, and the request covers the steady state at that scale.
    expect(quantityValue(want.limit)!).toBeGreaterThanOrEqual(measured.peakMiB * PEAK_HEADROOM * 2 ** 20);
    expect(quantityValue(want.request)!).toBeGreaterThanOrEqual(measured.steadyMiB * 2 ** 20);
  });

  test("at today's figures that is a 224Mi request and a 384Mi limit", () => {
    expect(DEFAULT_MEMORY).toEqual({ request: "224Mi", limit: "384Mi" });
  });

  test("users set their own request and limit", () => {
    const dep = buildManifests({
      namespace: "ns",
      image: "i",
      replicas: 1,
      memoryRequest: "128Mi",
      memoryLimit: "1Gi",
    }).find((o) => o.kind === "Deployment") as any;
    expect(dep.spec.template.spec.containers[0].resources).toEqual({
      requests: { cpu: "50m", memory: "128Mi" },
      limits: { memory: "1Gi" },
    });
  });

  test("setting only one of the two keeps the pair valid", () => {
    expect(containerResources({ limit: "128Mi" })).toEqual({
      requests: { cpu: "50m", memory: "128Mi" },
      limits: { memory: "128Mi" },
    });
    expect(containerResources({ limit: "1Gi" }).requests.memory).toBe(DEFAULT_MEMORY.request);
    expect(containerResources({ request: "1Gi" }).limits.memory).toBe("1Gi");
    expect(containerResources({ request: "100Mi" }).limits.memory).toBe(DEFAULT_MEMORY.limit);
  });

  test("a request above the limit, a limit below the idle footprint and a non-quantity are refused", () => {
    expect(memoryProblem(containerResources({ request: "1Gi", limit: "512Mi" }))).toBe(
      "memory request 1Gi is above the limit 512Mi; Kubernetes refuses that",
    );
    expect(memoryProblem(containerResources({ request: "16Mi", limit: "32Mi" }))).toContain(
      `memory limit 32Mi is below the operator's idle footprint (${MEASURED.idleMiB} MiB`,
    );
    expect(memoryProblem(containerResources({ limit: "lots" }))).toContain('memory limit "lots" is not a quantity');
    expect(memoryProblem(containerResources({ request: "1Gi", limit: "2G" }))).toBeUndefined();
    expect(memoryProblem(containerResources())).toBeUndefined();
  });
});
