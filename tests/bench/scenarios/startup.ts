/**
 * Scenario 5, startup: `devctl operator run` from process start to /readyz 200 (every cache listed
 * and watching) with N WebApps present, and `devctl --version` from spawn to exit.
 * Goals: < 2 s and < 50 ms.
 *
 * Each operator start is a new process of dist/devctl (spawn to /readyz polled every 5 ms); the time
 * until its first pass reconciled every WebApp is reported beside it. The same is measured over an
 * empty namespace as a baseline. `--version` runs N times in a row; the first run is shown apart (the
 * page cache may be cold for it), the median is over all runs.
 */
import type { Context, Section } from "../_context.ts";
import { createNamespace } from "../_kube.ts";
import { ensureFixture } from "../_fixture.ts";
import { binary, total, type BenchOperator } from "../_operator.ts";
import { fmtMiB, fmtMs, median, percentile, spread } from "../_stats.ts";

async function firstPass(op: BenchOperator, n: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (total(await op.scrape(), "controller_runtime_reconcile_total") >= n) return performance.now() - op.spawnedAt;
    await Bun.sleep(20);
  }
  return Number.NaN;
}

function versionRuns(count: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const r = Bun.spawnSync([binary, "--version"], { stdout: "pipe", stderr: "pipe" });
    out.push(performance.now() - t);
    if (r.exitCode !== 0) throw new Error(`devctl --version exited with ${r.exitCode}: ${r.stderr.toString()}`);
  }
  return out;
}

export async function startup(ctx: Context): Promise<Section> {
  const runs = ctx.opts.quick ? 10 : 30;
  ctx.log(`startup: devctl --version x${runs}`);
  const version = versionRuns(runs);
  const fx = await ensureFixture(ctx);
  const empty = await createNamespace(ctx.kube, "startup-empty");
  ctx.leftovers.push(empty);
  const measure = async (namespace: string, n: number) => {
    const op = await ctx.operator(namespace);
    try {
      const ready = await op.waitReady();
      const pass = n > 0 ? await firstPass(op, n, 60_000 + n * 50) : Number.NaN;
      return { ready, pass, rss: op.rssBytes() ?? Number.NaN };
    } finally {
      await op.stop();
    }
  };
  const full: { ready: number; pass: number; rss: number }[] = [];
  const base: { ready: number; pass: number; rss: number }[] = [];
  for (let i = 1; i <= ctx.opts.startups; i++) {
    ctx.log(`startup ${i}/${ctx.opts.startups}: operator over ${fx.n} WebApps, then over none`);
    await ctx.settle();
    full.push(await measure(fx.namespace, fx.n));
    ctx.log(`  ready after ${fmtMs(full.at(-1)?.ready)}, first pass done after ${fmtMs(full.at(-1)?.pass)}`);
    base.push(await measure(empty, 0));
  }
  const readyMedian = median(full.map((r) => r.ready));
  const versionMedian = median(version);
  const ok = readyMedian < 2000 && versionMedian < 50;
  return {
    id: "startup",
    title: "5. Startup",
    goal: "start → ready with 1,000 WebApps < 2 s; `devctl --version` < 50 ms",
    verdict: ok ? "met" : "missed",
    headline: `ready after ${fmtMs(readyMedian)} with ${fx.n} WebApps; --version ${fmtMs(versionMedian)}`,
    tables: [
      {
        caption: `Operator process start → /readyz 200 (dist/devctl, a new process each time, ${ctx.opts.startups} starts each); medians (min–max).`,
        head: ["WebApps present", "start → ready", "p99 of starts", "start → first pass reconciled all", "RSS then"],
        rows: [
          [
            String(fx.n),
            spread(
              full.map((r) => r.ready),
              fmtMs,
            ),
            fmtMs(
              percentile(
                full.map((r) => r.ready),
                99,
              ),
            ),
            spread(
              full.map((r) => r.pass),
              fmtMs,
            ),
            spread(
              full.map((r) => r.rss),
              fmtMiB,
            ),
          ],
          [
            "0",
            spread(
              base.map((r) => r.ready),
              fmtMs,
            ),
            fmtMs(
              percentile(
                base.map((r) => r.ready),
                99,
              ),
            ),
            "—",
            spread(
              base.map((r) => r.rss),
              fmtMiB,
            ),
          ],
        ],
      },
      {
        caption: `\`devctl --version\`, spawn → exit, ${runs} runs in a row:`,
        head: ["first run", "median", "p90", "min", "max"],
        rows: [
          [
            fmtMs(version[0]),
            fmtMs(versionMedian),
            fmtMs(percentile(version, 90)),
            fmtMs(Math.min(...version)),
            fmtMs(Math.max(...version)),
          ],
        ],
      },
    ],
    notes: [
      "Ready means every cache (WebApps, and every Deployment and Service of the watched namespaces) has listed and is watching; the first pass then reconciles every cached WebApp (for converged ones, with no API request).",
      "`--version` is timed around Bun.spawnSync of the compiled executable, so it includes fork/exec and mapping the ~110 MiB file; the page cache was warm except possibly for the first run.",
    ],
  };
}
