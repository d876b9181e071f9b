/**
 * Scenario 6, failover: two operator processes with leader election (defaults: lease 15 s, renew
 * deadline 10 s, retry 2 s) over a small namespace; the leader is killed (SIGKILL, then in other
 * trials SIGTERM) and at the same moment one WebApp changes image -> time until its Deployment carries
 * the new image, i.e. until the standby has taken the lease and reconciled the change.
 * Goals: SIGKILL <= lease duration + retry period (17 s); SIGTERM < 3 s.
 *
 * After each trial the new leader stays and a fresh standby is started (ready, and not leading) for the
 * next. Also reported: when the standby's leader_election_master_status turned 1 (polled every 50 ms).
 */
import type { Context, Section } from "../_context.ts";
import {
  appName,
  appNames,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  deploymentImage,
  image,
  pool,
  WEBAPP_RESOURCE,
  webappAvailable,
  webappObject,
} from "../_kube.ts";
import { total, type BenchOperator } from "../_operator.ts";
import { fmtMs, max, median } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";
import { deploymentName } from "../../../src/operator/desired.ts";

const LEASE_S = 15;
const RETRY_S = 2;
const APPS = 20;

const leading = async (op: BenchOperator) =>
  total(await op.scrape().catch(() => new Map()), "leader_election_master_status") === 1;

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await check()) return performance.now();
    await Bun.sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

export async function failover(ctx: Context): Promise<Section> {
  const ns = await createNamespace(ctx.kube, "failover");
  ctx.leftovers.push(ns);
  const args = [
    "--leader-elect",
    "--lease-namespace",
    ns,
    "--lease-name",
    "bench-failover",
    "--lease-duration",
    `${LEASE_S}s`,
    "--renew-deadline",
    "10s",
    "--retry-period",
    `${RETRY_S}s`,
  ];
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, ns);
  const webapps = createTracker(ctx.kube, WEBAPP_RESOURCE, ns);
  const results: Record<"SIGKILL" | "SIGTERM", { change: number[]; leader: number[] }> = {
    SIGKILL: { change: [], leader: [] },
    SIGTERM: { change: [], leader: [] },
  };
  let tag = 100;
  try {
    await Promise.all([deployments.start(), webapps.start()]);
    await pool(appNames(APPS), ctx.opts.clientConcurrency, (name) =>
      ctx.kube.create(WEBAPP_RESOURCE, webappObject(name, ns, image("v1"))),
    );
    let leader = await ctx.operator(ns, args);
    await until("the first operator to lead", 60_000, () => leading(leader));
    await webapps.until(APPS, webappAvailable, 120_000, `${APPS} WebApps to be Available`);
    const signals: ("SIGKILL" | "SIGTERM")[] = [];
    for (let i = 0; i < ctx.opts.failovers; i++) signals.push("SIGKILL", "SIGTERM");
    for (const [i, signal] of signals.entries()) {
      const standby = await ctx.operator(ns, args);
      await standby.waitReady();
      await Bun.sleep(1000);
      if (await leading(standby)) throw new Error("the standby leads although the leader still runs");
      await ctx.settle();
      const name = appName(i % APPS);
      const img = image(`v${tag++}`);
      ctx.log(`failover ${i + 1}/${signals.length}: ${signal} to the leader (pid ${leader.pid}), ${name} -> ${img}`);
      const t0 = performance.now();
      const carried = deployments.untilObject(
        deploymentName(name),
        (d) => deploymentImage(d) === img,
        60_000,
        `${deploymentName(name)} to carry ${img}`,
      );
      const tookLease = until("the standby to lead", 60_000, () => leading(standby));
      await leader.stop(signal);
      await ctx.kube.patch(WEBAPP_RESOURCE, name, ns, { spec: { image: img } }, "merge");
      const change = (await carried) - t0;
      const lead = (await tookLease) - t0;
      results[signal].change.push(change);
      results[signal].leader.push(lead);
      ctx.log(`  standby led after ${fmtMs(lead)}, change reconciled after ${fmtMs(change)}`);
      leader = standby;
    }
  } finally {
    deployments.stop();
    webapps.stop();
  }
  const kill = results.SIGKILL;
  const term = results.SIGTERM;
  const ok = max(kill.change) <= (LEASE_S + RETRY_S) * 1000 && max(term.change) < 3000;
  const row = (label: string, xs: number[]) => [
    label,
    String(xs.length),
    fmtMs(median(xs)),
    fmtMs(Math.min(...xs)),
    fmtMs(max(xs)),
  ];
  return {
    id: "failover",
    title: "6. Failover",
    goal: `SIGKILL → change reconciled ≤ lease duration + retry period (${LEASE_S + RETRY_S} s); SIGTERM → < 3 s`,
    verdict: ok ? "met" : "missed",
    headline: `SIGKILL: ${fmtMs(median(kill.change))} median, ${fmtMs(max(kill.change))} max; SIGTERM: ${fmtMs(median(term.change))} median, ${fmtMs(max(term.change))} max`,
    tables: [
      {
        caption: `Two operator processes, lease ${LEASE_S} s, renew deadline 10 s, retry period ${RETRY_S} s (the defaults), ${APPS} WebApps; the change is made right after the signal.`,
        head: ["leader stopped by", "trials", "median", "min", "max"],
        rows: [
          row("SIGKILL: change reconciled", kill.change),
          row("SIGKILL: standby leads", kill.leader),
          row("SIGTERM: change reconciled", term.change),
          row("SIGTERM: standby leads", term.leader),
        ],
      },
    ],
    notes: [
      "After SIGKILL the lease is not released: the standby may take it only once it has seen the same lease record unchanged for a whole lease duration on its own clock, counted from when it saw that record change (client-go's rule). devctl's standby watches the Lease, so it sees each renewal as it is written and tries at the instant the record expires: it leads one lease duration after the last renewal, which came 0–2 s before the kill, so about 13–15 s after the kill. client-go (and controller-runtime) only polls, every retry period plus up to 120% jitter (2–4.4 s), so it sees the last renewal up to 4.4 s late and the expiry up to 4.4 s late again: 13–23.8 s, around 17 s.",
      "After SIGTERM the leader drains its workers and releases the lease (empty holder); the standby's watch shows the release and it takes the lease at once (client-go: at its next poll, within 2–4.4 s).",
      "The goal is checked against the slowest trial, not the median.",
    ],
  };
}
