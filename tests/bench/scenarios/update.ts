/**
 * Scenario 7, update throughput: N converged WebApps all change image at once -> time until every
 * Deployment carries the new image; beside it the floor: our client with the operator's concurrency
 * applies the same image change to the N floor Deployments directly.
 *
 * Timing: t0 just before the first WebApp patch (merge patch of spec.image, `clientConcurrency` in
 * parallel); the end is the watch event after which all N Deployments have the new image in their
 * pod template. Also reported, for both: the time until every rollout has finished (new ReplicaSet's
 * pod available, old one gone), which is the controller-manager's work. Each repeat moves to a new tag, with a
 * newly started operator whose first pass over the fixture has ended; the operators take turns repeat by repeat
 * (_compare.ts alternated). The floor runs only where ctx.measuresFloor (in devctl's repeats, after its
 * measurement: not again for the Go peer, see _compare.ts).
 */
import { alternated, type Parted } from "../_compare.ts";
import type { Context, Fixture, Section } from "../_context.ts";
import { ensureFixture, operatorOverFixture } from "../_fixture.ts";
import {
  applyFloor,
  appNames,
  convergenceTimeout,
  DEPLOYMENT_RESOURCE,
  deploymentImage,
  floorObjects,
  image,
  pool,
  rolledOut,
  WEBAPP_RESOURCE,
} from "../_kube.ts";
import { IMPL_LABEL, requestsByMethod, requestsOnceQuiet, requestsSince } from "../_operator.ts";
import type { CpuUsage } from "../_proc.ts";
import { cpuRows } from "../_report.ts";
import { fmt, fmtMs, median, spread } from "../_stats.ts";
import { createTracker } from "../_tracker.ts";

interface Run {
  imageMs: number;
  rolledMs: number;
  floorWrittenMs: number;
  floorRolledMs: number;
  usage: CpuUsage;
  requests: Record<string, number>;
}

/** The floor's update: the same image applied to the floor Deployments directly, until their rollouts finished. */
async function floorUpdate(
  ctx: Context,
  floorDeps: ReturnType<typeof createTracker>,
  img: string,
  timeout: number,
): Promise<{ floorWrittenMs: number; floorRolledMs: number }> {
  const fx = ctx.fixture as NonNullable<Context["fixture"]>;
  await ctx.settle();
  const f0 = performance.now();
  const floorRolled = floorDeps.until(
    fx.n,
    (d) => deploymentImage(d) === img && rolledOut(d),
    timeout,
    `${fx.n} floor rollouts to ${img} to finish`,
  );
  await pool(appNames(fx.n), ctx.opts.concurrency, (name) =>
    applyFloor(ctx.kube, DEPLOYMENT_RESOURCE, floorObjects(name, fx.floorNamespace, img).deployment),
  );
  const floorWrittenMs = performance.now() - f0;
  return { floorWrittenMs, floorRolledMs: (await floorRolled) - f0 };
}

/** One repeat for ctx's operator: every WebApp moves to a new tag, timed until every Deployment carries it. */
async function measure(ctx: Context, part: number, runs: Run[]): Promise<void> {
  const fx = await ensureFixture(ctx);
  const n = fx.n;
  const timeout = convergenceTimeout(n);
  const op = await operatorOverFixture(ctx, fx);
  const deployments = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.namespace);
  const floorDeps = createTracker(ctx.kube, DEPLOYMENT_RESOURCE, fx.floorNamespace);
  try {
    await Promise.all([deployments.start(), floorDeps.start()]);
    const img = image(`v${Number(fx.image.split(":v")[1] ?? 1) + 1}`);
    ctx.log(`  update ${part + 1}/${ctx.opts.repeats}: ${n} WebApps -> ${img}`);
    await ctx.settle();
    const before = requestsByMethod(await op.scrape());
    const meter = await ctx.meter({ operator: op.pid });
    const t0 = performance.now();
    const carried = deployments.until(
      n,
      (d) => deploymentImage(d) === img,
      timeout,
      `${n} Deployments to carry ${img}`,
    );
    const rolled = deployments.until(
      n,
      (d) => deploymentImage(d) === img && rolledOut(d),
      timeout,
      `${n} rollouts to ${img} to finish`,
    );
    await pool(appNames(n), ctx.opts.clientConcurrency, (name) =>
      ctx.kube.patch(WEBAPP_RESOURCE, name, fx.namespace, { spec: { image: img } }, "merge"),
    );
    const imageMs = (await carried) - t0;
    const usage = meter.read();
    const rolledMs = (await rolled) - t0;
    const requests = requestsSince(before, await requestsOnceQuiet(() => op.scrape()));
    ctx.log(`  every Deployment carries it after ${fmtMs(imageMs)}, rollouts done after ${fmtMs(rolledMs)}`);
    fx.image = img;
    const { floorWrittenMs, floorRolledMs } = ctx.measuresFloor
      ? await floorUpdate(ctx, floorDeps, img, timeout)
      : { floorWrittenMs: Number.NaN, floorRolledMs: Number.NaN };
    if (ctx.measuresFloor)
      ctx.log(
        `  floor: written after ${fmtMs(floorWrittenMs)}, rollouts done after ${fmtMs(floorRolledMs)}; ratio ${fmt(imageMs / floorWrittenMs, 2)}`,
      );
    runs.push({ imageMs, rolledMs, floorWrittenMs, floorRolledMs, usage, requests });
  } finally {
    deployments.stop();
    floorDeps.stop();
    await op.stop();
  }
}

function report(ctx: Context, runs: Run[]): Section {
  const n = (ctx.fixture as Fixture).n;
  const impl = ctx.impls[0] ?? "devctl";
  const pick = (f: (r: Run) => number) => runs.map(f).filter((x) => !Number.isNaN(x));
  const last = runs.at(-1);
  const reqs = last
    ? Object.entries(last.requests)
        .filter(([, v]) => v > 0)
        .sort((a, b) => b[1] - a[1])
    : [];
  return {
    id: "update",
    title: "7. Update throughput",
    goal: "1,000 image changes → every Deployment carries it in ≤ 1.0× the Go peer's time; compare with the floor",
    verdict: "no goal",
    headline: `${n} in ${fmtMs(median(pick((r) => r.imageMs)))}, ${fmt(median(pick((r) => r.imageMs / r.floorWrittenMs)), 2)}× floor`,
    figures: [
      {
        name: "every Deployment carries the new image",
        value: median(pick((r) => r.imageMs)),
        show: fmtMs,
        goal: {
          name: `update throughput: ${n.toLocaleString("en")} image changes → every Deployment carries it (time)`,
          ratioAtMost: 1,
        },
      },
      { name: "every rollout finished", value: median(pick((r) => r.rolledMs)), show: fmtMs },
      {
        name: "API requests per WebApp (last repeat)",
        value: reqs.reduce((s, [, v]) => s + v, 0) / n,
        show: (x) => fmt(x, 2),
      },
      {
        name: "operator CPU ms per WebApp (last repeat)",
        value: (1000 * (last?.usage.byProcess.operator ?? Number.NaN)) / n,
        show: (x) => fmt(x, 2),
      },
    ],
    tables: [
      {
        caption: `${n} converged WebApps change image at once (${ctx.opts.clientConcurrency} parallel patches); floor: ${ctx.opts.concurrency} parallel server-side applies of the same Deployments. Medians over ${runs.length} repeat(s) (min–max).`,
        head: ["measurement", IMPL_LABEL[impl], "floor", `ratio (${IMPL_LABEL[impl]}/floor)`],
        rows: [
          [
            "every Deployment carries the new image",
            spread(
              pick((r) => r.imageMs),
              fmtMs,
            ),
            spread(
              pick((r) => r.floorWrittenMs),
              fmtMs,
            ),
            `**${fmt(median(pick((r) => r.imageMs / r.floorWrittenMs)), 2)}**`,
          ],
          [
            "Deployments per second",
            fmt(n / (median(pick((r) => r.imageMs)) / 1000), 0),
            fmt(n / (median(pick((r) => r.floorWrittenMs)) / 1000), 0),
            "",
          ],
          [
            "every rollout finished",
            spread(
              pick((r) => r.rolledMs),
              fmtMs,
            ),
            spread(
              pick((r) => r.floorRolledMs),
              fmtMs,
            ),
            fmt(median(pick((r) => r.rolledMs / r.floorRolledMs)), 2),
          ],
        ],
      },
      ...(last
        ? [
            {
              caption: `Where the CPU went until every Deployment carried the image (last repeat, ${fmtMs(last.imageMs)}):`,
              head: ["process", "CPU s", "cores used"],
              rows: cpuRows(last.usage),
            },
            {
              caption: "API requests the operator sent in that repeat (until its rollouts finished):",
              head: ["method", "requests", "per WebApp"],
              rows: reqs.map(([m, v]) => [m, String(v), fmt(v / n, 2)]),
            },
          ]
        : []),
    ],
    notes: [
      "The floor's time is until its last apply returned (the Deployment carries the image once the write is acknowledged); the operator's is the watch event of the last Deployment, so it includes the WebApp patches by the bench, the watch events to the operator and its applies.",
      "The rollouts (new ReplicaSet, new Pod, old ones scaled down) are the controller-manager's work and run while the writes are still going on, in both cases.",
    ],
  };
}

const updateScenario: Parted<Run[]> = { parts: (ctx) => ctx.opts.repeats, empty: () => [], measure, report };

export const update = (ctx: Context): Promise<Section> => alternated(ctx, updateScenario);
