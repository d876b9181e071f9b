import { expect, test } from "bun:test";
import {
  describeKinds,
  type ProductionInputs,
  productionFigures,
  productionReport,
  type SteadyFigures,
} from "./_production-report.ts";

const MiB = 2 ** 20;
const steady: SteadyFigures = {
  settledMs: 1500,
  readyMs: 300,
  resyncS: 20,
  startup: { GET: 12 },
  startupReconciles: 100,
  resync: { GET: 0 },
  resyncReconciles: 130,
  windowMs: 24_000,
  errors: 0,
};
const inputs = (over: Partial<ProductionInputs> = {}): ProductionInputs => ({
  n: 100,
  hpa: false,
  children: {
    seed: [
      { kind: "Deployment", count: 100 },
      { kind: "Service", count: 100 },
    ],
    production: [
      { kind: "Deployment", count: 100 },
      { kind: "Service", count: 100 },
      { kind: "PodDisruptionBudget", count: 100 },
      { kind: "Ingress", count: 100 },
    ],
  },
  seed: {
    runs: [
      { availableMs: 50_000, requests: { POST: 210, PATCH: 100 } },
      { availableMs: 40_000, requests: { POST: 212, PATCH: 102 } },
      { availableMs: 60_000, requests: { POST: 214, PATCH: 104 } },
    ],
    here: false,
  },
  production: { availableMs: 90_000, childrenMs: 30_000, requests: { POST: 412, PATCH: 110 }, rss: 80 * MiB },
  steady,
  large: {
    n: 10_000,
    seed: { drained: 170 * MiB, fresh: 160 * MiB, peak: 220 * MiB },
    production: { drained: 190 * MiB, fresh: 204 * MiB, peak: 260 * MiB, readyMs: 7000, createMs: 200_000 },
  },
  errors: [],
  example: "{}",
  ...over,
});

test("requests per extra child are the added requests per WebApp over the added children per WebApp", () => {
  const f = productionFigures(inputs());
  expect(f.seedRequests).toBeCloseTo(3.14); // median of 3.10, 3.14, 3.18
  expect(f.requests).toBeCloseTo(5.22);
  expect(f.extraChildren).toBe(2);
  expect(f.perExtraChild).toBeCloseTo(1.04);
  expect(f.seedMs).toBe(50_000);
  expect(f.restartWrites).toBe(0);
});

test("RSS is judged on the larger of the drained and the fresh-start readings of each shape", () => {
  const f = productionFigures(inputs());
  expect(f.seedRss).toBe(170 * MiB);
  expect(f.rss).toBe(204 * MiB);
  expect(f.rssRatio).toBeCloseTo(1.2);
});

test("the section is met when all three goals are, and names each verdict in its goals table", () => {
  const s = productionReport(inputs());
  expect(s.verdict).toBe("met");
  expect(s.failed).toBeUndefined();
  const goals = s.tables[0]?.rows ?? [];
  expect(goals.find((r) => r[0]?.includes("per extra child"))?.slice(3)).toEqual(["**1.04**", "≤ 1.2", "**met**"]);
  expect(goals.find((r) => r[0]?.includes("steady state"))?.at(-1)).toBe("**met**");
  expect(goals.find((r) => r[0]?.includes("RSS"))?.slice(3)).toEqual(["**1.20×**", "≤ 1.3×", "**met**"]);
  expect(s.headline).toContain("1.04 requests per extra child");
});

test("one request in steady state, or too many per extra child, misses the goal", () => {
  expect(productionReport(inputs({ steady: { ...steady, resync: { PATCH: 1 } } })).verdict).toBe("missed");
  const heavy = inputs({
    production: { availableMs: 1, childrenMs: 1, requests: { POST: 412, PATCH: 200 }, rss: 1 },
  });
  expect(productionFigures(heavy).perExtraChild).toBeCloseTo(1.49);
  expect(productionReport(heavy).verdict).toBe("missed");
  expect(
    productionReport(
      inputs({
        large: {
          n: 10_000,
          seed: { drained: 100, fresh: 100 },
          production: { drained: 140, fresh: 1, readyMs: 1, createMs: 1 },
        },
      }),
    ).verdict,
  ).toBe("missed");
});

test("a part that failed is not measured, never met, and the section says why", () => {
  const { steady: _, ...rest } = inputs({ errors: ["convergence or steady state: timed out"] });
  const s = productionReport({ ...rest, production: undefined } as ProductionInputs);
  expect(s.verdict).toBe("not measured");
  expect(s.failed).toBe(true);
  expect(s.notes.at(-1)).toBe("Not measured: convergence or steady state: timed out");
  expect(s.headline).toContain("n/a requests per extra child");
});

test("kinds only some WebApps want are shown with their count per WebApp", () => {
  const kinds = [
    { kind: "Deployment", count: 4 },
    { kind: "HorizontalPodAutoscaler", count: 2 },
  ];
  expect(describeKinds(kinds, 4)).toBe("Deployment, HorizontalPodAutoscaler (0.50)");
});
