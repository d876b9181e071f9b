/**
 * Evidence kept for every measured operator run, so that an outlier can be explained afterwards: the
 * operator's own output (devctl logs to stderr, the Go peer too) in a file per run, its /metrics sampled
 * every second while the run goes on (a JSON line per sample in a second file), and the counters that
 * tell a stall apart (reconcile errors, workqueue retries, requests by status code) before and after.
 *
 * Properties:
 * - counters() reads the families both operators expose (controller-runtime's names, which devctl
 *   mirrors); a family an operator lacks counts 0.
 * - longestStall() is the longest stretch of the sampled timeline in which no reconcile finished: with
 *   keys waiting out a backoff or a worker hanging on a request, reconciles stop while the run is not done.
 * - outliers() flags a run that took more than `factor` (1.3) times the median of the other runs of the
 *   same operator and size (at least two others), naming its evidence. Pure, apart from the files the
 *   recorder writes.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { type Sample, total } from "./_operator.ts";
import { fmt, fmtMs, median } from "./_stats.ts";

export interface Counters {
  reconciles: number;
  /** Reconciles that asked to be looked at again later (devctl: a WebApp not Ready yet, see reconciler.ts). */
  requeueAfter: number;
  errors: number;
  retries: number;
  depth: number;
  /** Longest a worker has been inside one reconcile right now, seconds (a hanging request shows here). */
  longestRunning: number;
  requestsByCode: Record<string, number>;
  /** API requests that took more than 1 s to answer (rest_client_request_duration_seconds above its le="1" bucket). */
  slowRequests: number;
}

export function counters(m: Map<string, Sample[]>): Counters {
  const byCode: Record<string, number> = {};
  for (const s of m.get("rest_client_requests_total") ?? []) {
    const code = s.labels.code ?? "?";
    byCode[code] = (byCode[code] ?? 0) + s.value;
  }
  return {
    reconciles: total(m, "controller_runtime_reconcile_total"),
    requeueAfter: total(m, "controller_runtime_reconcile_total", { result: "requeue_after" }),
    errors: total(m, "controller_runtime_reconcile_errors_total"),
    retries: total(m, "workqueue_retries_total"),
    depth: total(m, "workqueue_depth"),
    longestRunning: total(m, "workqueue_longest_running_processor_seconds"),
    requestsByCode: byCode,
    slowRequests:
      total(m, "rest_client_request_duration_seconds_count") -
      total(m, "rest_client_request_duration_seconds_bucket", { le: "1" }),
  };
}

/** What changed between two readings: errors, retries, and requests that did not succeed (not 2xx). */
export function delta(
  a: Counters,
  b: Counters,
): Pick<Evidence, "reconciles" | "requeueAfter" | "errors" | "retries" | "failedRequests" | "slowRequests"> {
  const failedRequests: Record<string, number> = {};
  for (const [code, v] of Object.entries(b.requestsByCode)) {
    const d = v - (a.requestsByCode[code] ?? 0);
    if (d > 0 && !code.startsWith("2")) failedRequests[code] = d;
  }
  return {
    reconciles: b.reconciles - a.reconciles,
    requeueAfter: b.requeueAfter - a.requeueAfter,
    errors: b.errors - a.errors,
    retries: b.retries - a.retries,
    failedRequests,
    slowRequests: b.slowRequests - a.slowRequests,
  };
}

export interface TimelinePoint {
  /** ms since t0 */
  t: number;
  c: Counters;
}

/** The longest stretch (ms) between two samples over which the reconcile count did not move. */
export function longestStall(timeline: readonly TimelinePoint[]): number {
  let longest = 0;
  let since: TimelinePoint | undefined;
  for (const p of timeline) {
    if (!since || p.c.reconciles !== since.c.reconciles) since = p;
    else longest = Math.max(longest, p.t - since.t);
  }
  return longest;
}

export interface Evidence {
  log: string;
  metrics: string;
  reconciles: number;
  requeueAfter: number;
  errors: number;
  retries: number;
  failedRequests: Record<string, number>;
  slowRequests: number;
  longestStallMs: number;
  /** Highest workqueue depth and longest-running reconcile seen in the samples. */
  maxDepth: number;
  maxRunningS: number;
}

/** "2000 reconciles (0 requeued after a delay), 0 reconcile errors, 1000 queue retries, no failed request, ..." */
export function describeEvidence(e: Evidence): string {
  const failed = Object.entries(e.failedRequests)
    .map(([c, v]) => `${v}× ${c}`)
    .join(", ");
  return (
    `${e.reconciles} reconciles (${e.requeueAfter} asked to look again later), ${e.errors} reconcile errors, ${e.retries} queue retries, ${failed ? `non-2xx answers ${failed}` : "every answer 2xx"}, ` +
    `${e.slowRequests} requests slower than 1 s, ` +
    `longest stretch without a reconcile ${fmtMs(e.longestStallMs)}, max queue depth ${e.maxDepth}, ` +
    `longest single reconcile ${fmt(e.maxRunningS, 1)} s`
  );
}

export interface Outlier {
  label: string;
  ms: number;
  othersMedian: number;
  file: string;
}

/** Runs slower than `factor` × the median of the others in their group (needs two others). */
export function outliers(
  groups: readonly { label: string; ms: number; file: string; group: string }[],
  factor = 1.3,
): Outlier[] {
  return groups.flatMap((r) => {
    const others = groups.filter((o) => o !== r && o.group === r.group).map((o) => o.ms);
    if (others.length < 2) return [];
    const m = median(others);
    return r.ms > factor * m ? [{ label: r.label, ms: r.ms, othersMedian: m, file: r.file }] : [];
  });
}

/** The directory of one bench run's evidence files (created). */
export function evidenceDir(root: string, stamp: string): string {
  const dir = join(root, stamp);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** An append-only file, written synchronously so that what the operator said survives a crash of the bench. */
export function appender(path: string): { write(text: string): void; close(): void } {
  const fd = openSync(path, "a");
  let open = true;
  return {
    write: (text) => {
      if (open) writeSync(fd, text);
    },
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

export function appendLine(path: string, value: unknown): void {
  appendFileSync(path, `${JSON.stringify(value)}\n`);
}

export interface Recorder {
  /** Takes the last reading and says what the run's evidence is. */
  stop(): Promise<Evidence>;
}

/**
 * Samples `scrape()` every `everyMs` from now on into `metricsFile` (one JSON line per sample, `t` in ms
 * since `t0`); a failed scrape is written as such and does not stop the sampling.
 */
export async function startRecorder(
  scrape: () => Promise<Map<string, Sample[]>>,
  files: { log: string; metrics: string },
  t0: () => number,
  everyMs = 1000,
): Promise<Recorder> {
  const before = counters(await scrape());
  const timeline: TimelinePoint[] = [];
  appendLine(files.metrics, { t: 0, phase: "before", ...before });
  let busy = false;
  const sample = async () => {
    if (busy) return;
    busy = true;
    try {
      const c = counters(await scrape());
      const p = { t: Math.round(performance.now() - t0()), c };
      timeline.push(p);
      appendLine(files.metrics, { t: p.t, ...c });
    } catch (e) {
      appendLine(files.metrics, { t: Math.round(performance.now() - t0()), scrapeFailed: String(e) });
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void sample(), everyMs);
  return {
    async stop() {
      clearInterval(timer);
      const after = counters(await scrape());
      timeline.push({ t: performance.now() - t0(), c: after });
      appendLine(files.metrics, { t: Math.round(performance.now() - t0()), phase: "after", ...after });
      const d = delta(before, after);
      return {
        ...files,
        ...d,
        longestStallMs: longestStall(timeline),
        maxDepth: Math.max(0, ...timeline.map((p) => p.c.depth)),
        maxRunningS: Math.max(0, ...timeline.map((p) => p.c.longestRunning)),
      };
    },
  };
}
