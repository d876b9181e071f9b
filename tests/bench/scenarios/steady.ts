/**
 * Scenario 2, steady state: an operator started with a short --resync-period over N converged WebApps;
 * for each full resync pass (every WebApp reconciled once more, nothing changed), the API requests
 * and writes it issued, from its own /metrics (rest_client_requests_total by method). Goal: 0 and 0.
 *
 * Also reported: the start-up pass (the first reconcile of every cached WebApp after a restart), which
 * for converged WebApps should write nothing either, and the operator CPU one pass costs.
 * A pass is seen by polling controller_runtime_reconcile_total every 100 ms.
 */
import type { Context, Section } from "../_context.ts";
import { ensureFixture } from "../_fixture.ts";
import { type BenchOperator, requestsByMethod, total } from "../_operator.ts";
import { fmt, fmtMs } from "../_stats.ts";

export const writesOf = (r: Record<string, number>) =>
  Object.entries(r).reduce((s, [m, v]) => (m === "GET" ? s : s + v), 0);
export const allOf = (r: Record<string, number>) => Object.values(r).reduce((s, v) => s + v, 0);
const diff = (a: Record<string, number>, b: Record<string, number>) =>
  Object.fromEntries(Object.keys({ ...a, ...b }).map((k) => [k, (b[k] ?? 0) - (a[k] ?? 0)]));
export const describe = (r: Record<string, number>) =>
  Object.entries(r)
    .filter(([, v]) => v > 0)
    .map(([m, v]) => `${m} ${v}`)
    .join(", ") || "none";

async function reconciles(op: BenchOperator): Promise<number> {
  return total(await op.scrape(), "controller_runtime_reconcile_total");
}

/** Waits until `target` reconciles are counted; resolves with the time the count first moved past `from` and when it reached `target`. */
export async function awaitPass(
  op: BenchOperator,
  from: number,
  target: number,
  timeoutMs: number,
): Promise<{ startedAt: number; doneAt: number }> {
  const deadline = performance.now() + timeoutMs;
  let startedAt: number | undefined;
  while (performance.now() < deadline) {
    const n = await reconciles(op);
    if (n > from && startedAt === undefined) startedAt = performance.now();
    if (n >= target) return { startedAt: startedAt ?? performance.now(), doneAt: performance.now() };
    await Bun.sleep(100);
  }
  throw new Error(
    `no full pass within ${timeoutMs / 1000} s (${(await reconciles(op)) - from} of ${target - from} reconciles)`,
  );
}

export async function steady(ctx: Context): Promise<Section> {
  const fx = await ensureFixture(ctx);
  const resyncS = ctx.opts.quick ? 10 : 20;
  const passes = ctx.opts.quick ? 1 : 2;
  ctx.log(
    `steady state: operator over ${fx.n} converged WebApps with --resync-period ${resyncS}s, ${passes} resync pass(es)`,
  );
  const op = await ctx.operator(fx.namespace, ["--resync-period", `${resyncS}s`]);
  const rows: string[][] = [];
  let verdictOk = true;
  let resyncWrites = 0;
  let resyncRequests = 0;
  try {
    const readyMs = await op.waitReady();
    const initial = await awaitPass(op, 0, fx.n, 60_000 + fx.n * 50);
    await Bun.sleep(1000);
    const m = await op.scrape();
    const startupReqs = requestsByMethod(m);
    rows.push([
      `start-up pass (ready after ${fmtMs(readyMs)})`,
      String(total(m, "controller_runtime_reconcile_total")),
      fmtMs(initial.doneAt - op.spawnedAt),
      String(writesOf(startupReqs)),
      describe(startupReqs),
      fmt(allOf(startupReqs) / fx.n, 3),
      "—",
    ]);
    const startup = { writes: writesOf(startupReqs), requests: allOf(startupReqs) };
    let before = startupReqs;
    let count = total(m, "controller_runtime_reconcile_total");
    for (let p = 1; p <= passes; p++) {
      const cpu0 = op.cpuSeconds() ?? 0;
      const pass = await awaitPass(op, count, count + fx.n, resyncS * 1.2 * 1000 + 60_000 + fx.n * 50);
      await Bun.sleep(500);
      const after = await op.scrape();
      const reqs = diff(before, requestsByMethod(after));
      const cpu = (op.cpuSeconds() ?? 0) - cpu0;
      const newCount = total(after, "controller_runtime_reconcile_total");
      const writes = writesOf(reqs);
      verdictOk &&= writes === 0 && allOf(reqs) === 0;
      resyncWrites += writes;
      resyncRequests += allOf(reqs);
      rows.push([
        `resync pass ${p}`,
        String(newCount - count),
        pass.doneAt - pass.startedAt < 1 ? "< 100 ms (one poll)" : fmtMs(pass.doneAt - pass.startedAt),
        String(writes),
        describe(reqs),
        fmt(allOf(reqs) / fx.n, 3),
        fmt(cpu, 2),
      ]);
      ctx.log(`  pass ${p}: ${newCount - count} reconciles, ${writes} writes, requests: ${describe(reqs)}`);
      before = requestsByMethod(after);
      count = newCount;
    }
    const errors = total(await op.scrape(), "controller_runtime_reconcile_errors_total");
    return {
      id: "steady",
      title: "2. Steady state",
      goal: "0 API writes and 0 API requests per WebApp in a full resync",
      verdict: verdictOk ? "met" : "missed",
      headline: `${resyncWrites} writes, ${fmt(resyncRequests / (passes * fx.n), 3)} requests per WebApp over ${passes} resync pass(es) of ${fx.n}`,
      figures: [
        {
          name: `restart over ${fx.n} converged WebApps: writes`,
          value: startup.writes,
          show: String,
          goal: { name: `restart over ${fx.n.toLocaleString("en")} converged WebApps: API writes`, valueAtMost: 0 },
        },
        {
          name: "restart: requests per WebApp (LIST and WATCH included)",
          value: startup.requests / fx.n,
          show: (x) => fmt(x, 3),
        },
        { name: `${passes} resync pass(es): writes`, value: resyncWrites, show: String },
        {
          name: "resync: requests per WebApp per pass",
          value: resyncRequests / (passes * fx.n),
          show: (x) => fmt(x, 3),
        },
      ],
      tables: [
        {
          caption: `${fx.n} converged WebApps, operator started with --resync-period ${resyncS}s (±10% jitter). Counts are deltas of the operator's own rest_client_requests_total.`,
          head: [
            "pass",
            "reconciles",
            "pass took",
            "writes",
            "requests by method",
            "requests per WebApp",
            "operator CPU s",
          ],
          rows,
        },
      ],
      notes: [
        "The start-up row counts everything since the process started: one LIST per cache (WebApps, Deployments, Services) and one WATCH each, plus whatever the first reconcile of every WebApp needed; a converged WebApp needs no request at all.",
        "“Pass took” for a resync pass is from the first to the last reconcile of the pass, seen by polling /metrics every 100 ms.",
        `Reconcile errors during the scenario: ${errors}.`,
      ],
    };
  } finally {
    await op.stop();
  }
}
