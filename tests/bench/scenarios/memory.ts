/**
 * Scenario 3, memory: operator RSS (VmRSS from /proc) idle, with the fixture's N WebApps cached, and
 * with `memoryLarge` (10,000) WebApps cached. Goals: <= 64 MiB idle, <= 150 MiB at 10,000.
 *
 * - idle: an operator over an empty namespace, 5 s after it is ready.
 * - N: a fresh operator over the fixture's converged WebApps, 5 s after its first pass.
 * - large: see _large.ts (the objects are created by the benchmark with the operator's own builders,
 *   or with --memory-from-scratch by the operator itself); the operator that worked through them
 *   (peak while working, 5 s after its queue drained) and a fresh one (5 s after its first pass).
 * - The Go peer, when it runs, is measured the same way at idle, at N and fresh at the large point
 *   (starts alternate with devctl's); the table shows devctl / Go beside the goals.
 * - Settled idle: one more start of each operator, side by side over the empty namespace, read SETTLED_S
 *   after ready. devctl gives back start-up's code pages once its first pass is over (runtime/startup-pages.ts)
 *   and maps back what it then runs, so the 5 s reading alone would not show what stays. The idle rows also
 *   give the anonymous part of RSS (RssAnon), which no reclaim can take back.
 */
import type { Context, Section } from "../_context.ts";
import { ensureFixture } from "../_fixture.ts";
import { createNamespace } from "../_kube.ts";
import type { OperatorImpl } from "../_operator.ts";
import { goal } from "../_goals.ts";
import { residentOf } from "../_proc.ts";
import { fmt, fmtMiB, fmtMs, median, spread } from "../_stats.ts";
import { freshRss, largePoint } from "./_large.ts";

const MiB = 1024 * 1024;
export const SETTLED_S = 120;

/** One start of each operator at once over an empty namespace; RSS and its anonymous part SETTLED_S after ready. */
async function settledIdle(ctx: Context, namespace: string): Promise<Partial<Record<OperatorImpl, Resident>>> {
  const ops = await Promise.all(ctx.impls.map((impl) => ctx.operator(namespace, [], { impl })));
  try {
    await Promise.all(ops.map((op) => op.waitReady(120_000)));
    await Bun.sleep(SETTLED_S * 1000);
    return Object.fromEntries(ctx.impls.map((impl, i) => [impl, residentOf(ops[i]?.pid ?? -1)]));
  } finally {
    await Promise.all(ops.map((op) => op.stop()));
  }
}
const ratio = (a: number, b: number) => `**${fmt(a / b, 2)}**`;
type Resident = { rss: number; anon: number };

export async function memory(ctx: Context): Promise<Section> {
  const starts = ctx.opts.quick ? 1 : 3;
  const empty = await createNamespace(ctx.kube, "memory-idle");
  ctx.leftovers.push(empty);
  const peer = ctx.impls.includes("peer");
  /** RSS of `starts` fresh starts of each operator over `namespace`, alternating which goes first. */
  const measure = async (namespace: string, n: number) => {
    const out: Record<OperatorImpl, number[]> = { devctl: [], peer: [] };
    const anon: Record<OperatorImpl, number[]> = { devctl: [], peer: [] };
    for (let i = 0; i < starts; i++)
      for (const impl of i % 2 === 0 ? ctx.impls : [...ctx.impls].reverse()) {
        const r = await freshRss(ctx, namespace, n, impl);
        out[impl].push(r.rss);
        anon[impl].push(r.anon);
      }
    return Object.assign(out, { anon });
  };
  const idleBy = await measure(empty, 0);
  const idle = idleBy.devctl;
  ctx.log(`memory: idle ${fmtMiB(median(idle))}${peer ? `, Go peer ${fmtMiB(median(idleBy.peer))}` : ""}`);
  const settled = await settledIdle(ctx, empty);
  ctx.log(
    `memory: idle ${SETTLED_S} s after ready ${fmtMiB(settled.devctl?.rss)}${peer ? `, Go peer ${fmtMiB(settled.peer?.rss)}` : ""}`,
  );

  const fx = await ensureFixture(ctx);
  const midBy = await measure(fx.namespace, fx.n);
  const mid = midBy.devctl;
  ctx.log(`memory: ${fx.n} cached ${fmtMiB(median(mid))}${peer ? `, Go peer ${fmtMiB(median(midBy.peer))}` : ""}`);

  const big = await largePoint(ctx, ctx.opts.memoryLarge, ctx.opts.memoryFromScratch);
  const bigRss = Math.max(big.drained, big.fresh.rss);
  ctx.seed.large = { n: big.cached.webapps, peak: big.peak, drained: big.drained, fresh: big.fresh.rss };
  const idleOk = median(idle) <= 64 * MiB;
  const bigOk = bigRss <= 150 * MiB;
  const how = big.fromScratch
    ? `the operator created their ${big.cached.deployments} Deployments and ${big.cached.services} Services itself, in ${fmtMs(big.workMs)}`
    : `the benchmark created them (${fmtMs(big.createMs)}) with the operator's own builders (desiredDeployment/desiredService, same field manager, owner references to the WebApps; the Services headless, because allocating a ClusterIP costs this API server O(number of Services), about ten minutes for 10,000), so the operator found its children in place; its first pass took ${fmtMs(big.workMs)}, with ${big.firstPass.posts} event POST(s) (each create or update of a child posts one: 0 means it changed none) and ${big.firstPass.patches} PATCHes (the WebApps' status)`;
  const goals = [
    goal({ name: "RSS idle (5 s after ready)", ratioAtMost: 1.5 }, median(idle), median(idleBy.peer), fmtMiB),
    goal(
      {
        name: `RSS with ${fx.n.toLocaleString("en")} converged WebApps (fresh start, 5 s after its first pass)`,
        ratioAtMost: 1.2,
      },
      median(mid),
      median(midBy.peer),
      fmtMiB,
    ),
    goal(
      {
        name: `RSS with ${big.cached.webapps.toLocaleString("en")} WebApps (fresh start, 5 s after its first pass)`,
        ratioAtMost: 1,
      },
      big.fresh.rss,
      big.peerFresh?.rss,
      fmtMiB,
    ),
  ];
  return {
    id: "memory",
    goals,
    title: "3. Memory",
    goal: "RSS ≤ 64 MiB idle, ≤ 150 MiB with 10,000 WebApps cached",
    verdict: big.cached.webapps < 10_000 ? "not measured" : idleOk && bigOk ? "met" : "missed",
    headline:
      `idle ${fmtMiB(median(idle))}; ${fx.n}: ${fmtMiB(median(mid))}; ${big.cached.webapps}: ${fmtMiB(bigRss)}` +
      (peer
        ? ` (devctl / Go: ${fmt(median(idle) / median(idleBy.peer), 2)}, ${fmt(median(mid) / median(midBy.peer), 2)}, ${fmt(big.fresh.rss / (big.peerFresh?.rss ?? Number.NaN), 2)})`
        : ""),
    tables: [
      {
        caption: `Operator resident memory (VmRSS of dist/devctl${peer ? " and of the Go peer" : ""}), one namespace watched.`,
        head: ["WebApps cached", "state", "devctl", ...(peer ? ["Go peer", "devctl / Go"] : [])],
        left: 2,
        rows: [
          [
            "0",
            `idle, 5 s after ready (${starts} start(s))`,
            spread(idle, fmtMiB),
            ...(peer ? [spread(idleBy.peer, fmtMiB), ratio(median(idle), median(idleBy.peer))] : []),
          ],
          [
            "0",
            "of which anonymous (RssAnon: not file-backed)",
            spread(idleBy.anon.devctl, fmtMiB),
            ...(peer
              ? [spread(idleBy.anon.peer, fmtMiB), ratio(median(idleBy.anon.devctl), median(idleBy.anon.peer))]
              : []),
          ],
          [
            "0",
            `idle, ${SETTLED_S} s after ready (1 start of each, side by side)`,
            fmtMiB(settled.devctl?.rss),
            ...(peer
              ? [fmtMiB(settled.peer?.rss), ratio(settled.devctl?.rss ?? Number.NaN, settled.peer?.rss ?? Number.NaN)]
              : []),
          ],
          [
            String(fx.n),
            `fresh start, 5 s after the first pass (${starts} start(s))`,
            spread(mid, fmtMiB),
            ...(peer ? [spread(midBy.peer, fmtMiB), ratio(median(mid), median(midBy.peer))] : []),
          ],
          [
            String(big.cached.webapps),
            "the operator working through them: peak (sampled every second)",
            fmtMiB(big.peak),
            ...(peer ? ["—", "—"] : []),
          ],
          [
            String(big.cached.webapps),
            "the same process, 5 s after its queue drained",
            fmtMiB(big.drained),
            ...(peer ? ["—", "—"] : []),
          ],
          [
            String(big.cached.webapps),
            `fresh start (ready after ${fmtMs(big.fresh.readyMs)}${big.peerFresh ? `; Go peer ${fmtMs(big.peerFresh.readyMs)}` : ""}), 5 s after the first pass${big.fresh.passed ? "" : " (pass not finished)"}`,
            fmtMiB(big.fresh.rss),
            ...(peer ? [fmtMiB(big.peerFresh?.rss), ratio(big.fresh.rss, big.peerFresh?.rss ?? Number.NaN)] : []),
          ],
        ],
      },
    ],
    notes: [
      `Large point: ${big.cached.webapps} WebApps, ${big.cached.deployments} Deployments and ${big.cached.services} Services in the namespace; ${how}.`,
      "That namespace has a ResourceQuota of 0 ReplicaSets, so the controller-manager creates no ReplicaSets or Pods there (10,000 pods exceed the fake node and would keep the 2-core control plane busy for many minutes): the Deployments report the failed ReplicaSet creation and the WebApps are not Available. The operator caches the same kinds of objects as for running apps; only status fields differ.",
      `The goal is checked against the larger of the drained and the fresh-start readings at the large point (${fmtMiB(bigRss)}) and the median idle reading (${fmtMiB(median(idle))}).`,
      "RSS includes the Bun runtime itself: an empty compiled Bun program is ~25 MiB (docs/BUN-TLS.md). Most of devctl's RSS is the executable's own clean code pages; once its first pass is over, devctl gives back those that only start-up touched (runtime/startup-pages.ts: madvise MADV_DONTNEED; the page cache keeps them, and code that runs later maps its pages back), so its RSS grows again towards its working set: the settled reading shows where it ends.",
    ],
  };
}
