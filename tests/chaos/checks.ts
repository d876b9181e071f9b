/**
 * Checks on the operator processes of a soak, from their exits, logs and metrics.
 *
 * - exits: every exit is a kill or a SIGTERM (exit 0) we caused, or a lease loss / failed start that
 *   faults.ts `explainExit` ties to the API outage that caused it; anything else is a crash.
 * - error-level lines: each is classified; only `transient` (the API server unreachable, timing out
 *   or answering 5xx, a write conflict, an object deleted meanwhile) and `leadership` (a lease lost
 *   inside a fault window, counted with the exits) are expected; any other is a finding.
 * - leadership: no scrape round in which two replicas report leading (the gauges of one round are
 *   read at the same moment; a leader drops its gauge before a standby can acquire: the renew deadline
 *   is shorter than the lease, and a release happens after the workers stopped);
 * - least privilege: no line mentions "forbidden" outside the few seconds in which kube-apiserver
 *   restarts (it answers 403 until its RBAC cache is filled): the replicas run with the installed
 *   ServiceAccount's token, so a missing rule would show here;
 * - faults: every fault was undone and the fleet was stable again in time.
 */
import type { FaultRecord } from "./faults.ts";
import type { CheckResult } from "./invariants.ts";
import type { Fleet, ProcessRecord } from "./operators.ts";

export type ErrorClass = "transient" | "leadership" | "unexpected";

const TRANSIENT = [
  /cannot reach the Kubernetes API server/,
  /no answer from .* within \d+ ms/,
  /\b(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|socket|connection (was )?closed|ConnectionClosed|ConnectionRefused)\b/i,
  /the object has been modified|Operation cannot be fulfilled|Precondition failed|uid in precondition|conflict/i,
  /\b(500|502|503|504)\b|the server is currently unable|shutting down|try again|etcdserver|context deadline exceeded|timeout|Too Many Requests|rate limit/i,
  /not found/i,
  /the operation was aborted|AbortError|The operation timed out/i,
];
const LEADERSHIP = [/lost the lease/, /could not renew within/, /leadership lost/, /^exiting with an error$/];

/**
 * What a (re)starting kube-apiserver answers before its caches are filled, which is not a finding then: 403 and 401
 * until its RBAC and token caches are, and a 500 "failed to allocate a serviceIP ...: range is full" for a Service
 * create until its ServiceCIDR allocators are (v1.36 ipallocator/cidrallocator.go answers ErrFull while it has no
 * ready allocator; seen in CI 2026-12-03, 10 attempts over ~5 s right after a restart).
 */
const WHILE_API_STARTS = /forbidden|unauthorized|failed to allocate a serviceIP .*range is full/i;

/**
 * `duringApiRestart`: the line was logged while kube-apiserver was (re)starting (WHILE_API_STARTS).
 */
export function classifyError(line: { msg: string; error?: string }, duringApiRestart = false): ErrorClass {
  const text = `${line.msg} ${line.error ?? ""}`;
  if (LEADERSHIP.some((re) => re.test(line.msg))) return "leadership";
  const reconcileFailure = /reconcile of \S+ (failed|timed out)/.test(line.msg);
  if (reconcileFailure && duringApiRestart && WHILE_API_STARTS.test(text)) return "transient";
  if (/forbidden|is invalid|internal error|panic|event handler/i.test(text)) return "unexpected";
  if (reconcileFailure && TRANSIENT.some((re) => re.test(text))) return "transient";
  return "unexpected";
}

/** Windows in which kube-apiserver was stopped or starting: a restart fault, and 5 s after it. */
export function restartWindows(faults: FaultRecord[]): [number, number][] {
  return faults
    .filter((f) => f.kind === "apiserver-restart" || f.kind === "resourceversions-expired")
    .map((f) => [f.startedAt, (f.endedAt || Date.now()) + 5_000]);
}

const result = (name: string, checked: number, problems: string[]): CheckResult => ({
  name,
  ok: problems.length === 0,
  checked,
  problems,
});

export function processChecks(
  fleet: Fleet,
  faults: FaultRecord[],
): { checks: CheckResult[]; errorLines: Record<ErrorClass, number> } {
  const all: ProcessRecord[] = fleet.history;
  const exits = all
    .filter((p) => p.exit && !p.exit.expected)
    .map((p) => `pid ${p.pid} (slot ${p.slot}): ${p.exit!.cause}: ${p.exit!.detail}`);
  const running = all.filter((p) => !p.exit).map((p) => `pid ${p.pid} has not exited`);
  const windows = restartWindows(faults);
  const inRestart = (at: number) => windows.some(([from, to]) => at >= from && at <= to);
  const errorLines: Record<ErrorClass, number> = { transient: 0, leadership: 0, unexpected: 0 };
  const unexpected: string[] = [];
  for (const p of all) {
    for (const e of p.errors) {
      const c = classifyError(e, inRestart(Date.parse(e.ts)));
      errorLines[c]++;
      if (c === "unexpected" && unexpected.length < 20)
        unexpected.push(`pid ${p.pid} ${e.ts}: ${e.msg}${e.error ? ` (${e.error})` : ""}`);
    }
  }
  const forbiddenLines = all.flatMap((p) => p.forbidden.map((f) => ({ ...f, pid: p.pid })));
  const forbidden = forbiddenLines
    .filter((f) => !inRestart(f.at))
    .slice(0, 10)
    .map((f) => `pid ${f.pid}: ${f.line}`);
  const excused = forbiddenLines.length - forbiddenLines.filter((f) => !inRestart(f.at)).length;
  const faultProblems = faults.filter((f) => f.error).map((f) => `${f.kind}: ${f.error}`);
  const { rounds, seen } = fleet.dualLeadership;
  const excusedExits = all.filter((p) => p.exit?.excuse).length;
  return {
    errorLines,
    checks: [
      result(
        `operators exited only when a fault made them (our kill or SIGTERM; a lease loss or failed start tied to the API outage that caused it: ${excusedExits})`,
        all.length,
        [...exits, ...running],
      ),
      result(
        "no unexpected error-level log lines (only transient API errors and fault-caused lease losses)",
        errorLines.transient + errorLines.leadership + errorLines.unexpected,
        unexpected,
      ),
      result(
        `never two leaders at once (scrape rounds with two replicas leading: ${rounds})`,
        all.length,
        rounds > 0 ? [`${rounds} scrape round(s) saw two replicas leading`, ...seen] : [],
      ),
      result(
        `the replicas needed nothing beyond the installed RBAC: no 'forbidden' in any log outside kube-apiserver restarts (${excused} lines inside them, while its RBAC cache was empty)`,
        forbiddenLines.length,
        forbidden,
      ),
      result(
        "every fault was undone and the replicas were ready with one leader again in time",
        faults.length,
        faultProblems,
      ),
    ],
  };
}

/** Sum over processes of their last scrape (killed processes: up to one second stale). */
export function totals(fleet: Fleet): {
  reconciles: number;
  reconcileErrors: number;
  writes: number;
  requests: number;
  desynced: number;
  adopted: number;
} {
  let reconciles = 0;
  let reconcileErrors = 0;
  let writes = 0;
  let requests = 0;
  for (const p of fleet.history) {
    reconciles += p.scrape?.reconciles ?? 0;
    reconcileErrors += p.scrape?.reconcileErrors ?? 0;
    for (const [k, v] of Object.entries(p.scrape?.requests ?? {})) {
      requests += v;
      if (!k.startsWith("GET ")) writes += v;
    }
  }
  const sum = (f: (p: ProcessRecord) => number) => fleet.history.reduce((n, p) => n + f(p), 0);
  return {
    reconciles,
    reconcileErrors,
    writes,
    requests,
    desynced: sum((p) => p.desynced),
    adopted: sum((p) => p.adopted),
  };
}

/** POST and PATCH requests of the live replicas (Lease renewals are PUTs and do not count). */
export function objectWrites(fleet: Fleet): number {
  let n = 0;
  for (const p of fleet.current()) {
    for (const [k, v] of Object.entries(p?.scrape?.requests ?? {}))
      if (k.startsWith("POST ") || k.startsWith("PATCH ")) n += v;
  }
  return n;
}

/**
 * Sets `healthyMs` of each fault: from its end until every replica answered /readyz 200 again (0 if
 * they all did at its end), when that happened before the next fault started.
 */
export function measureHealthy(
  readiness: { at: number; allReady: boolean }[],
  faults: FaultRecord[],
  until: number,
): void {
  faults.forEach((f, i) => {
    const next = faults[i + 1]?.startedAt ?? until;
    const before = readiness.filter((r) => r.at <= f.endedAt).at(-1);
    if (before?.allReady) f.healthyMs = 0;
    else {
      const healthy = readiness.find((r) => r.at > f.endedAt && r.allReady);
      if (healthy && healthy.at <= next) f.healthyMs = healthy.at - f.endedAt;
    }
  });
}
