/**
 * The operator container's resources, sized from its measured footprint (BENCHMARKS.md, "3. Memory" and
 * "8. Production shape").
 *
 * Properties:
 * - Sized for MEASURED.webapps WebApps, the scale the memory goal is stated at, of the heavier of the two shapes the
 *   benchmark measures there (seed-shaped in section 3, production-shaped in section 8: a WebApp that uses the
 *   optional fields has more and larger children): the memory request covers the steady RSS (the larger of the
 *   drained and the fresh-start readings), rounded up to REQUEST_STEP_MIB; the limit covers the peak while working
 *   through them times PEAK_HEADROOM, rounded up to LIMIT_STEP_MIB. Standbys keep the same warm caches as the
 *   leader, so every replica gets the same. src/install/resources.test.ts reads the figures from BENCHMARKS.md
 *   itself.
 * - No CPU limit: throttling a controller only delays reconciles.
 * - Users set their own with --memory-request / --memory-limit (Kubernetes quantities); memoryProblem()
 *   refuses a request above the limit and a limit below the idle footprint. Setting only one keeps
 *   the pair valid (containerResources).
 */
import { quantityValue } from "../api/quantity.ts";

/**
 * BENCHMARKS.md of 2026-12-06T20:53Z: RSS of dist/devctl, in MiB. Idle from section 3; steady and peak from section
 * 8, production-shaped (seed-shaped in section 3: 134.2 and 145.0).
 */
export const MEASURED = { webapps: 10_000, idleMiB: 35.2, steadyMiB: 196.4, peakMiB: 215.4 } as const;
/**
 * The peak follows when the collector runs during the first pass: at the same workload it was 176.2, 193.7,
 * 280.1, 195.0, 183.4, 237.6, 243.4, 216.3, 213.1, 227.4, 213.2, 231.8, 190.2 and 211.9 MiB in fourteen runs
 * (2026-12-01/05), and 202.4 MiB on 2026-12-06 (seed-shaped): up to 1.6 times the lowest. The limit allows for that.
 * (At 20:53Z the same day, with the runtime's heap growth lowered since, e05a3e1: 145.0 seed-shaped, 215.4
 * production-shaped.)
 */
export const PEAK_HEADROOM = 1.6;
export const REQUEST_STEP_MIB = 32;
export const LIMIT_STEP_MIB = 64;
export const CPU_REQUEST = "50m";

export interface MemoryFootprint {
  idleMiB: number;
  steadyMiB: number;
  peakMiB: number;
}

const roundUp = (mib: number, step: number) => Math.ceil(mib / step) * step;

export function memoryFor(f: MemoryFootprint): { request: string; limit: string } {
  return {
    request: `${roundUp(f.steadyMiB, REQUEST_STEP_MIB)}Mi`,
    limit: `${roundUp(f.peakMiB * PEAK_HEADROOM, LIMIT_STEP_MIB)}Mi`,
  };
}

export const DEFAULT_MEMORY = memoryFor(MEASURED);

export interface ContainerResources {
  requests: { cpu: string; memory: string };
  limits: { memory: string };
}

/**
 * One of the two given: the other is its default, moved so the pair stays valid (a lower limit
 * lowers the request to it, a higher request raises the limit to it).
 */
export function containerResources(memory: { request?: string; limit?: string } = {}): ContainerResources {
  const bytes = (q: string) => quantityValue(q) ?? Number.NaN;
  let request = memory.request ?? DEFAULT_MEMORY.request;
  let limit = memory.limit ?? DEFAULT_MEMORY.limit;
  if (memory.limit && !memory.request && bytes(limit) < bytes(request)) request = limit;
  if (memory.request && !memory.limit && bytes(request) > bytes(limit)) limit = request;
  return { requests: { cpu: CPU_REQUEST, memory: request }, limits: { memory: limit } };
}

const MIB = 2 ** 20;

/** Why a memory request/limit pair cannot run the operator; undefined when it can. */
export function memoryProblem(r: ContainerResources, idleMiB: number = MEASURED.idleMiB): string | undefined {
  const request = quantityValue(r.requests.memory);
  const limit = quantityValue(r.limits.memory);
  if (request === undefined) return `memory request "${r.requests.memory}" is not a quantity such as 256Mi or 1Gi`;
  if (limit === undefined) return `memory limit "${r.limits.memory}" is not a quantity such as 512Mi or 1Gi`;
  if (request > limit)
    return `memory request ${r.requests.memory} is above the limit ${r.limits.memory}; Kubernetes refuses that`;
  if (limit < idleMiB * MIB)
    return `memory limit ${r.limits.memory} is below the operator's idle footprint (${idleMiB} MiB, BENCHMARKS.md): it would be OOM-killed at start`;
  return undefined;
}
