/**
 * `npm run bench`: every benchmark scenario of the operator against a real cluster, then BENCHMARKS.md.
 *
 * 1. builds dist/devctl (unless --no-build): the compiled executable is what is measured;
 * 2. uses DEVCTL_TEST_KUBECONFIG if set, else the local control plane (respecting
 *    DEVCTL_CLUSTER_DIR), started here if needed and stopped afterwards if this run started it;
 * 3. runs the scenarios in dependency order (convergence leaves the converged fixture that steady,
 *    startup, heal and update reuse), each bounded by its own timeouts; a failed scenario is reported
 *    as "not measured" with its error and the others still run;
 * 4. writes the report (see _report.ts) and prints it; progress goes to stderr.
 * On SIGINT, SIGTERM or SIGHUP (src/build/signals.ts) it stops the operators and the Go peer, deletes the
 * namespaces it created (unless it stops the cluster anyway), stops the local control plane if it started it,
 * removes its copy of dist/devctl, writes no report, and exits 128 + signo.
 * Options: see _options.ts (USAGE), e.g. `npm run bench -- --quick`, `--scenario heal --n 1000`.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { installShutdown, runChild } from "../../src/build/signals.ts";
import { createKubeClient } from "../../src/kube/client.ts";
import { messageOf } from "../../src/kube/errors.ts";
import { acquireCluster, type BenchCluster } from "./_cluster.ts";
import { compared } from "./_compare.ts";
import { createContext, type Context, type Section } from "./_context.ts";
import { evidenceDir } from "./_evidence.ts";
import { ensureCrd, NAMESPACES, warmUp } from "./_kube.ts";
import { binary, DEVCTL, useBinary, usePeerBinary } from "./_operator.ts";
import { OptionsError, parseOptions, SCENARIOS, type ScenarioName } from "./_options.ts";
import { loadAverage, machineCpu } from "./_proc.ts";
import { ensurePeer } from "./_peer.ts";
import { chartFiles, render } from "./_report.ts";
import { convergence } from "./scenarios/convergence.ts";
import { failover } from "./scenarios/failover.ts";
import { heal } from "./scenarios/heal.ts";
import { memory } from "./scenarios/memory.ts";
import { production } from "./scenarios/production.ts";
import { startup } from "./scenarios/startup.ts";
import { steady } from "./scenarios/steady.ts";
import { update } from "./scenarios/update.ts";

const ROOT = resolve(import.meta.dir, "../..");
const started = performance.now();
const log = (line: string) =>
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(5)}s] ${line}\n`);

/**
 * Convergence and memory compare devctl with the Go peer themselves; heal and update take turns part by part
 * (_compare.ts alternated); steady runs once per operator, devctl first (compared).
 */
const RUNNERS: Record<ScenarioName, (ctx: Context) => Promise<Section>> = {
  convergence,
  steady: (ctx) => compared(ctx, steady),
  memory,
  heal,
  startup,
  failover,
  update,
  production,
};
/**
 * Execution order: convergence first (it leaves the fixture), then memory (10,000 WebApps load the cluster most), then
 * production, which compares with both and starts its parts on fresh clusters (dropping the fixture).
 * Expected duration of the default run with the Go peer on a quiet 2-core machine (estimated 2026-12-01 from
 * the figures of BENCHMARKS.md and of a convergence run with the peer, 10.8 min; a fresh cluster ~8.5 s):
 *   convergence, N=100 and 1,000, 3 repeats, floor + devctl + Go, 23 fresh clusters   ~10.5 min
 *   the same beside a CPU hog, N=500, 3 pairs, no floor                                ~5.5 min
 *   steady (devctl ~45 s; the peer writes 1,000 statuses per pass, ~90 s)              ~2.5 min
 *   startup (devctl only)                                                              ~0.5 min
 *   heal, 100 trials per operator in 4 parts each (a start each), the floor once       ~2 min
 *   update, 3 repeats per operator (a start and 1,000 rollouts each), the floor 3 times ~16 min
 *   failover (devctl only; SIGKILL trials wait out the 15 s lease)                     ~1.5 min
 *   memory (idle/1,000: 3 starts each; 10,000 pre-created; the peer's first pass
 *   over them writes 10,000 statuses, 50-100/s)                                        ~6-8 min
 *   production (devctl only; estimated 2026-12-05 from runs at N=50 and 200, where its WebApps and
 *   children took 1.9x the seed's to create and the first pass 1.4x): 1,000 production-shaped
 *   (2,000 pods) ~2 min, a restart and a resync pass ~0.5 min, 10,000 production-shaped
 *   (50,000 objects pre-created ~4.5 min, the first pass ~2.5 min, a fresh start), two fresh clusters  ~9-11 min
 *   total (measured: 47.7 min on 2026-12-03, 55.5 min and 65.0 min on 2026-12-04, without production)  ~65-75 min
 */
const ORDER: ScenarioName[] = [
  "convergence",
  "steady",
  "startup",
  "heal",
  "update",
  "failover",
  "memory",
  "production",
];

let opts: ReturnType<typeof parseOptions>;
try {
  opts = parseOptions(process.argv.slice(2), ROOT);
} catch (e) {
  if (!(e instanceof OptionsError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exit(2);
}

const shutdown = installShutdown(log);
if (opts.build) {
  log("building dist/devctl");
  const b = await runChild([process.execPath, "run", "src/build/build.ts"], { cwd: ROOT });
  if (b.code !== 0) process.exit(1);
}
if (!existsSync(DEVCTL)) {
  process.stderr.write(`${DEVCTL} does not exist: run \`npm run build\` (or drop --no-build)\n`);
  process.exit(1);
}

let peerBuild: Awaited<ReturnType<typeof ensurePeer>> | undefined;
if (opts.peer) {
  try {
    peerBuild = await ensurePeer(log);
  } catch (e) {
    process.stderr.write(`${messageOf(e)}\n(or run without the Go peer: --no-peer)\n`);
    process.exit(1);
  }
  usePeerBinary(peerBuild.binary);
  log(`Go peer: ${peerBuild.binary}`);
}

const copy = useBinary(`${tmpdir()}/devctl-bench-${process.pid}`);
shutdown.onShutdown(() => rmSync(dirname(copy), { recursive: true, force: true }));
log(`measuring a private copy of dist/devctl: ${copy}`);
const version = Bun.spawnSync([binary, "--version"])
  .stdout.toString()
  .trim()
  .replace(/^devctl /, "");
const cluster: BenchCluster = await acquireCluster(log);
const kube = createKubeClient({ kubeconfig: cluster.kubeconfig });
const evidence = evidenceDir(join(tmpdir(), "devctl-bench-evidence"), new Date().toISOString().replace(/[:.]/g, "-"));
log(`operator logs and metric timelines of every run go to ${evidence}`);
const ctx = createContext(opts, kube, cluster, log, evidence);
let cleaned: Promise<void> | undefined;
/** At the end, or on a signal: whichever comes first does it, once. */
const cleanupOnce = () => (cleaned ??= cleanup());
shutdown.onShutdown(cleanupOnce);

async function cleanup(): Promise<void> {
  await ctx.stopOperators();
  if (!cluster.stopsOnRelease) {
    for (const ns of ctx.leftovers) await ctx.kube.delete(NAMESPACES, ns).catch(() => {});
    if (ctx.leftovers.length)
      log(`deleting the namespaces this run created: ${ctx.leftovers.join(", ")} (not waiting)`);
  }
  await cluster.release();
  rmSync(dirname(binary), { recursive: true, force: true });
}

const sections = new Map<ScenarioName, Section>();
const loadBefore = loadAverage();
const cpu0 = machineCpu();
let kubernetes = "unknown";
try {
  kubernetes = (await kube.raw<{ gitVersion: string }>("GET", "/version")).gitVersion;
  await ensureCrd(kube);
  await warmUp(kube);
  for (const name of ORDER.filter((s) => opts.scenarios.includes(s))) {
    shutdown.signal.throwIfAborted(); // stopping: no more scenarios, and no report
    log(`== ${name}`);
    const t = performance.now();
    try {
      sections.set(name, await RUNNERS[name](ctx));
    } catch (e) {
      log(`${name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      sections.set(name, {
        id: name,
        title: name,
        verdict: "not measured",
        headline: "failed",
        failed: true,
        tables: [],
        notes: [`This scenario failed: ${messageOf(e)}`],
      });
    } finally {
      await ctx.stopOperators();
    }
    log(`== ${name} done in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  }
} finally {
  await cleanupOnce();
}
shutdown.signal.throwIfAborted();

const cpu1 = machineCpu();
const report = render(
  {
    date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    machine: {
      cores: cpus().length,
      memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
      cpu: cpus()[0]?.model ?? "unknown",
      kernel: release(),
    },
    versions: {
      bun: Bun.version,
      kubernetes,
      devctl: version,
      ...(peerBuild ? { peer: `${basename(dirname(peerBuild.binary))}` } : {}),
    },
    cluster: cluster.description,
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`,
    loadBefore,
    loadAfter: loadAverage(),
    machineBusy: (cpu1.busy - cpu0.busy) / Math.max(1e-9, cpu1.total - cpu0.total),
    durationSeconds: (performance.now() - started) / 1000,
  },
  SCENARIOS.flatMap((s) => sections.get(s) ?? []),
  opts.out && existsSync(opts.out) ? readFileSync(opts.out, "utf8") : undefined,
);
process.stdout.write(report);
if (opts.out) {
  writeFileSync(opts.out, report);
  for (const [file, svg] of chartFiles([...sections.values()])) writeFileSync(join(dirname(opts.out), file), svg);
  log(`wrote ${opts.out} and its charts`);
}
log(`finished in ${((performance.now() - started) / 60_000).toFixed(1)} min`);
process.exit([...sections.values()].some((s) => s.failed) ? 1 : 0);
