/** The human summary of a soak report: faults by kind, churn by kind, processes, numbers, invariants. */
import { CHURN_KINDS } from "./churn.ts";
import { FAULT_DESCRIPTIONS, FAULT_KINDS } from "./faults.ts";
import type { SoakReport } from "./run.ts";

const s = (ms: number | undefined) => (ms === undefined ? "-" : `${(ms / 1000).toFixed(1)} s`);
const max = (xs: (number | undefined)[]) =>
  xs.some((x) => x !== undefined) ? Math.max(...xs.filter((x): x is number => x !== undefined)) : undefined;

export function formatSummary(r: SoakReport): string {
  const out: string[] = [];
  const o = r.options;
  out.push(
    `devctl chaos soak — ${(r.chaosMs / 60_000).toFixed(1)} min of churn and faults on ${o.webapps} WebApps (seed ${o.seed}); 2 replicas, leader election ${o.lease.durationMs / 1000}/${o.lease.renewMs / 1000}/${o.lease.retryMs / 1000} s (lease/renew/retry)`,
  );
  out.push(
    `  initial convergence of ${o.webapps} WebApps: ${s(r.initialConvergenceMs)}; the operators' and the control plane's logs and report.json in ${r.logDir}`,
  );
  out.push("", `Faults injected: ${r.faults.length}`);
  for (const kind of FAULT_KINDS) {
    const f = r.faults.filter((x) => x.kind === kind);
    if (f.length === 0) {
      out.push(`  ${kind.padEnd(38)} 0`);
      continue;
    }
    const failed = f.filter((x) => x.error).length;
    const takeover = max(f.map((x) => x.takeoverMs));
    const healthy = f.map((x) => x.healthyMs);
    const healthyText = healthy.every((h) => h === undefined)
      ? ""
      : `, caches healthy again within ${s(max(healthy))}${healthy.includes(undefined) ? ` (${healthy.filter((h) => h === undefined).length} not before the next fault)` : ""}`;
    out.push(
      `  ${kind.padEnd(38)} ${String(f.length).padStart(3)}  one leader within ${s(max(f.map((x) => x.recoveredMs)))}${takeover !== undefined ? ` (takeover ${s(takeover)})` : ""}${healthyText}${failed ? `, ${failed} FAILED` : ""}`,
    );
    out.push(`  ${"".padEnd(38)}      ${FAULT_DESCRIPTIONS[kind]}`);
  }
  const ops = CHURN_KINDS.map((k) => [k, r.churn.ops[k]] as const);
  const total = ops.reduce((n, [, v]) => n + v.ok + v.failed, 0);
  const failed = ops.reduce((n, [, v]) => n + v.failed, 0);
  out.push(
    "",
    `Churn: ${total} operations (${failed} refused or timed out, mostly during faults; ${r.churn.viaKubectl} through kubectl)`,
  );
  for (const [k, v] of ops)
    out.push(
      `  ${k.padEnd(38)} ${String(v.ok).padStart(5)} ok ${v.failed ? `${String(v.failed).padStart(4)} failed` : ""}`,
    );
  out.push(
    `  WebApps: ${r.population.initial} at the start, ${r.population.created} new names created, ${r.population.deletedForGood} deleted for good, ~${r.population.final} at the end`,
  );
  const e = r.processes.exits;
  out.push(
    "",
    `Operator processes: ${r.processes.started} started; exits: ${e.killed} killed (SIGKILL), ${e.handover} handovers (SIGTERM, exit 0), ${e["lease-lost"]} lease lost in an API outage (exit 1, restarted), ${e["start-failed"]} failed starts in an API outage, ${e.stopped} stopped at the end, ${e.crash} crashes`,
  );
  const t = r.totals;
  out.push(
    `  reconciles ~${t.reconciles} (${t.reconcileErrors} failed and retried), API requests ~${t.requests} (${t.writes} writes), watches re-listed after 410 Gone: ${t.desynced}; children adopted from a deleted WebApp of the same name: ${t.adopted}`,
  );
  out.push(
    `  error-level log lines: ${t.errorLines.transient} transient API errors, ${t.errorLines.leadership} fault-caused lease losses, ${t.errorLines.unexpected} unexpected`,
  );
  out.push(
    `  after churn stopped: converged in ${s(r.settleMs)} (bound ${s(o.settleMs)}); then ${r.quiet.writes} writes in ${s(r.quiet.windowMs)} of quiet`,
  );
  out.push("", "Invariants:");
  for (const c of r.checks) {
    out.push(`  ${c.ok ? "PASS" : "FAIL"}  ${c.name} [${c.checked} checked]`);
    for (const p of c.problems.slice(0, 8)) out.push(`          ${p}`);
    if (c.problems.length > 8) out.push(`          ... and ${c.problems.length - 8} more`);
  }
  out.push(
    "",
    r.ok
      ? `RESULT: PASS (${r.checks.length} invariants held)`
      : `RESULT: FAIL (${r.checks.filter((c) => !c.ok).length} of ${r.checks.length} invariants broken)`,
  );
  return out.join("\n");
}
