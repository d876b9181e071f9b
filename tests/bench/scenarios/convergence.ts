/**
 * Scenario 1, convergence: N WebApps created at once (1 replica each) -> every one has its
 * Deployment, its Service and Available=True. Beside it, in the same repeat, the floor: our client
 * with the operator's concurrency applies the same N Deployments and N Services directly, and the
 * time until every Deployment is Available.
 *
 * Timing: t0 just before the first WebApp create; the end is the watch event after which all N
 * WebApps report Available=True (children-written: the event after which N Deployments and N
 * Services exist). CPU seconds of the operator, the control-plane processes, the bench client and the
 * whole machine are read from /proc at t0 and at the end. Requests come from the operator's /metrics.
 * Where the cluster is one this run started, every run gets a new empty cluster (see freshCluster):
 * Service creation slows down as Services accumulate, so runs must not inherit each other's objects.
 * The last operator run of the largest N shares its cluster with the floor run before it and is kept
 * as the shared fixture. With --profile, one extra untimed run under `bun --cpu-prof-md` comes first.
 */
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import type { Context, Section, Table } from "../_context.ts";
import {
  applyFloor,
  appNames,
  createNamespace,
  DEPLOYMENT_RESOURCE,
  deploymentAvailable,
  floorObjects,
  image,
  pool,
  SERVICE_RESOURCE,
  WEBAPP_RESOURCE,
  webappAvailable,
  webappObject,
} from "../_kube.ts";
import { requestsByMethod } from "../_operator.ts";
import type { CpuUsage } from "../_proc.ts";
import { hotFunctions, latestProfile } from "../_profile.ts";
import { cpuRows } from "../_report.ts";
import { fmt, fmtMiB, fmtMs, median, spread } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";

interface Run {
  availableMs: number;
  childrenMs: number;
  createMs: number;
  floorWrittenMs: number;
  floorAvailableMs: number;
  op: CpuUsage;
  floor: CpuUsage;
  /** Operator RSS right after convergence. */
  rss: number;
  requests: Record<string, number>;
}

const timeoutFor = (n: number) => 120_000 + n * 300;

async function operatorRun(
  ctx: Context,
  n: number,
  profileDir?: string,
): Promise<Omit<Run, "floorWrittenMs" | "floorAvailableMs" | "floor"> & { namespace: string }> {
  const namespace = await createNamespace(ctx.kube, `conv${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  const names = appNames(n);
  const op = await ctx.operator(namespace, [], profileDir);
  const trackers = {
    webapps: createTracker(ctx.kube, WEBAPP_RESOURCE, namespace),
    deployments: createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace),
    services: createTracker(ctx.kube, SERVICE_RESOURCE, namespace),
  };
  try {
    await op.waitReady();
    await Promise.all(Object.values(trackers).map((t) => t.start()));
    await ctx.settle();
    const before = requestsByMethod(await op.scrape());
    const meter = await ctx.meter({ operator: op.pid });
    const t0 = performance.now();
    const all = Promise.all([
      trackers.webapps.until(n, webappAvailable, timeoutFor(n), `${n} WebApps to be Available`),
      trackers.deployments.until(n, () => true, timeoutFor(n), `${n} Deployments to exist`),
      trackers.services.until(n, () => true, timeoutFor(n), `${n} Services to exist`),
    ]);
    await pool(names, ctx.opts.clientConcurrency, (name) =>
      ctx.kube.create(WEBAPP_RESOURCE, webappObject(name, namespace, img)),
    );
    const createMs = performance.now() - t0;
    const [avail, deps, svcs] = await all;
    const usage = meter.read();
    const rss = op.rssBytes() ?? Number.NaN;
    const after = requestsByMethod(await op.scrape());
    const requests = Object.fromEntries(Object.entries(after).map(([m, v]) => [m, v - (before[m] ?? 0)]));
    return {
      availableMs: avail - t0,
      childrenMs: Math.max(deps, svcs) - t0,
      createMs,
      op: usage,
      requests,
      namespace,
      rss,
    };
  } finally {
    for (const t of Object.values(trackers)) t.stop();
    await op.stop();
  }
}

async function floorRun(
  ctx: Context,
  n: number,
): Promise<{ writtenMs: number; availableMs: number; usage: CpuUsage; namespace: string }> {
  const namespace = await createNamespace(ctx.kube, `floor${n}`);
  ctx.leftovers.push(namespace);
  const img = image("v1");
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, namespace);
  try {
    await deployments.start();
    await ctx.settle();
    const meter = await ctx.meter({});
    const t0 = performance.now();
    const avail = deployments.until(n, deploymentAvailable, timeoutFor(n), `${n} floor Deployments to be Available`);
    await pool(appNames(n), ctx.opts.concurrency, async (name) => {
      const o = floorObjects(name, namespace, img);
      await applyFloor(ctx.kube, DEPLOYMENT_RESOURCE, o.deployment);
      await applyFloor(ctx.kube, SERVICE_RESOURCE, o.service);
    });
    const writtenMs = performance.now() - t0;
    const availableMs = (await avail) - t0;
    return { writtenMs, availableMs, usage: meter.read(), namespace };
  } finally {
    deployments.stop();
  }
}

export async function convergence(ctx: Context): Promise<Section> {
  const sizes = ctx.opts.sizes;
  const largest = Math.max(...sizes);
  const fresh: boolean[] = [];
  const profile: Table[] = [];
  const runs = new Map<number, Run[]>();
  const tables: Table[] = [];
  const notes: string[] = [];
  if (ctx.opts.profile) {
    const dir = `${tmpdir()}/devctl-bench-profile`;
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    await ctx.freshCluster();
    ctx.log(`profiling: a convergence of ${largest} with the operator from source under bun --cpu-prof-md (not timed)`);
    await operatorRun(ctx, largest, dir);
    const file = latestProfile(dir);
    if (file) {
      const prof = hotFunctions(readFileSync(file, "utf8"), 15);
      profile.push({
        caption: `CPU profile of the operator over a whole convergence of ${largest} (from start to exit; ${prof.summary}; profile kept in ${file}):`,
        head: ["self %", "self", "function", "location"],
        rows: prof.rows,
      });
    } else {
      notes.push(`The profile was not written (looked in ${dir}).`);
    }
  }
  for (const n of sizes) {
    const list: Run[] = [];
    runs.set(n, list);
    for (let r = 1; r <= ctx.opts.repeats; r++) {
      const last = n === largest && r === ctx.opts.repeats;
      // Each run on an empty cluster where possible: creating a Service costs the API server more the
      // more Services exist (its ClusterIP allocator recounts them), so a run after another would pay for it.
      // The last run of the largest N shares its cluster with its floor: that cluster is the fixture.
      fresh.push(await ctx.freshCluster());
      ctx.log(`convergence N=${n}, repeat ${r}/${ctx.opts.repeats}: floor`);
      const fl = await floorRun(ctx, n);
      ctx.log(`  floor: written after ${fmtMs(fl.writtenMs)}, all Available after ${fmtMs(fl.availableMs)}`);
      if (!last) fresh.push(await ctx.freshCluster());
      ctx.log(`convergence N=${n}, repeat ${r}/${ctx.opts.repeats}: operator`);
      const op = await operatorRun(ctx, n);
      ctx.log(
        `  all ${n} Available after ${fmtMs(op.availableMs)} (children written after ${fmtMs(op.childrenMs)}); operator CPU ${fmt(op.op.byProcess.operator, 2)} s; ratio ${fmt(op.availableMs / fl.availableMs, 2)}`,
      );
      list.push({ ...op, floorWrittenMs: fl.writtenMs, floorAvailableMs: fl.availableMs, floor: fl.usage });
      if (last) ctx.fixture = { namespace: op.namespace, floorNamespace: fl.namespace, n, image: image("v1") };
    }
  }

  const rows = [...runs].map(([n, list]) => {
    const pick = (f: (r: Run) => number) => list.map(f);
    return [
      String(n),
      spread(
        pick((r) => r.availableMs),
        fmtMs,
      ),
      fmt(n / (median(pick((r) => r.availableMs)) / 1000), 0),
      spread(
        pick((r) => r.childrenMs),
        fmtMs,
      ),
      spread(
        pick((r) => r.floorWrittenMs),
        fmtMs,
      ),
      spread(
        pick((r) => r.floorAvailableMs),
        fmtMs,
      ),
      `**${fmt(median(pick((r) => r.availableMs / r.floorAvailableMs)), 2)}**`,
      fmt(median(pick((r) => r.childrenMs / r.floorWrittenMs)), 2),
      fmt(median(pick((r) => r.op.byProcess.operator ?? Number.NaN)), 2),
      fmtMiB(median(pick((r) => r.rss))),
    ];
  });
  tables.push({
    caption: `Medians over ${ctx.opts.repeats} repeat(s) (min–max). Operator --concurrency ${ctx.opts.concurrency}; WebApps created by ${ctx.opts.clientConcurrency} parallel requests; floor: ${ctx.opts.concurrency} parallel server-side applies of the same Deployment + Service pairs.`,
    head: [
      "N",
      "operator: all Available",
      "WebApps/s",
      "operator: all children exist",
      "floor: all written",
      "floor: all Available",
      "ratio Available (op/floor)",
      "ratio written",
      "operator CPU s",
      "operator RSS after",
    ],
    rows,
  });

  const last = runs.get(largest)?.at(-1);
  if (last) {
    tables.push({
      caption: `Where the CPU went, N=${largest}, operator run (last repeat, ${fmtMs(last.availableMs)} wall):`,
      head: ["process", "CPU s", "cores used"],
      rows: cpuRows(last.op),
    });
    tables.push({
      caption: `The same for the floor run (${fmtMs(last.floorAvailableMs)} wall):`,
      head: ["process", "CPU s", "cores used"],
      rows: cpuRows(last.floor),
    });
    const reqs = Object.entries(last.requests)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1]);
    const sum = reqs.reduce((s, [, v]) => s + v, 0);
    tables.push({
      caption: `API requests the operator sent while converging N=${largest} (its own rest_client_requests_total):`,
      head: ["method", "requests", "per WebApp"],
      rows: [...reqs.map(([m, v]) => [m, String(v), fmt(v / largest, 2)]), ["all", String(sum), fmt(sum / largest, 2)]],
    });
    const op = last.op.byProcess.operator ?? 0;
    const api = last.op.byProcess["kube-apiserver"];
    const wall = last.availableMs / 1000;
    notes.push(
      `Operator CPU while converging ${largest} WebApps: ${fmt(op, 2)} s in ${fmt(wall, 1)} s wall, i.e. ${fmt((100 * op) / wall, 0)}% of one core; ` +
        (api !== undefined
          ? `the API server used ${fmt(api, 2)} s (${fmt(api / wall, 2)} cores) and all cores were ${fmt((100 * last.op.machineBusy) / last.op.machineCapacity, 0)}% busy.`
          : "the API server's CPU is not visible on an external cluster."),
    );
  }
  tables.push(...profile);
  notes.push(
    "“Available” is the WebApp's own Available=True condition (Deployment Available and Service present), seen on a watch; the floor's is the Deployment's Available=True. Both include the controller-manager creating the ReplicaSet and the Pod, the scheduler binding it and KWOK marking it Ready.",
    "Ratio = operator time / floor time in the same repeat; 1.0 would mean the operator adds nothing to what the API server and the controllers need anyway.",
    fresh.every(Boolean)
      ? `Every floor run and every operator run started on a new, empty local cluster, except the operator's last run at N=${largest}, which shares its cluster with the floor run before it (1,000 more Deployments, Services and Pods: if anything, that slows the operator down) and leaves the fixture for the later scenarios.`
      : "The cluster could not be replaced between runs (it is not one this run started), so every run uses new namespaces beside the old ones and the cluster grows during the run; creating Services gets slower as their number grows (see the analysis).",
  );
  const headline = [...runs]
    .map(([n, list]) => {
      const ms = median(list.map((r) => r.availableMs));
      return `N=${n}: ${fmtMs(ms)} (${fmt(n / (ms / 1000), 0)}/s), ${fmt(median(list.map((r) => r.availableMs / r.floorAvailableMs)), 2)}× floor`;
    })
    .join("; ");
  return {
    id: "convergence",
    title: "1. Convergence",
    verdict: "no goal",
    headline,
    tables,
    notes,
    goal: "N=100 and 1,000 → all Available; compare with the floor",
  };
}
