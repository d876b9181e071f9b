/**
 * The whole test suite in one command (`npm test`; CI runs the same through .ci/run):
 * 0. static checks: Biome's format check and lint (`biome ci`), then `tsc --noEmit`; any finding fails the run;
 * 1. builds dist/devctl (end-to-end tests drive the compiled executable);
 * 2. uses the cluster named by DEVCTL_TEST_KUBECONFIG if set, else brings up the local control plane
 *    (building it on first use) and remembers whether this run started it;
 * 3. runs every bun:test suite: unit tests beside the modules in src/ and integration suites in tests/,
 *    then the fault-injection suites in tests/faults/ (last, as they disrupt the control plane); each
 *    phase names its files explicitly and is judged by tests/_phase.ts from bun's summary and JUnit report
 *    (a phase without them, a file with no test, a skip without a reason, or on CI=true a skip for a
 *    missing prerequisite, fails);
 * 4. stops the local control plane if this run started it (also on failure; DEVCTL_KEEP_CLUSTER=1 keeps it);
 *    on SIGINT, SIGTERM or SIGHUP it stops its children (bun test and what the tests started) and the control plane
 *    if it started it, and exits 128 + signo (src/build/signals.ts);
 * 5. repeats each failed test's name and bun's message (a CI log cut to its tail still shows why), prints
 *    one line per skip with its reason, then `N passed, N failed, N skipped`; exits 1 if any failed.
 * Extra arguments are paths (exactly those files run, and are checked as above) or a `bun test` filter.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { installShutdown, runChild } from "../src/build/signals.ts";
import { KUBECTL_CACHE_ENV } from "./cluster/kubectl.ts";
import { paths } from "./cluster/state.ts";
import { describeFailure, describeSkip, type Failure, judgePhase, type PhaseVerdict, type Skip } from "./_phase.ts";
import { SKIP_LOG_ENV, type SkipRecord } from "./_skip.ts";

const root = resolve(import.meta.dir, "..");
const bun = process.execPath;
const extra = process.argv.slice(2);
/** On CI every prerequisite is there (the runner installs or starts it): a skip for a missing one fails. */
const CI = process.env.CI === "true";
/** Upper bound for the whole `bun test` run (DEVCTL_SUITE_LIMIT_MIN), well inside CI's 90 minutes. */
const SUITE_LIMIT_MIN = Number(process.env.DEVCTL_SUITE_LIMIT_MIN ?? 60);
/** Fault-injection suites (they restart, freeze and compact the local control plane). */
const FAULT_SUITES = "tests/faults";
/** Per-test bound: integration tests wait on a real API server and its controllers. */
const TEST_TIMEOUT_MS = 180_000;

const shutdown = installShutdown((line) => console.error(`\n==> ${line}`));
/** True once this run found no local control plane answering and set out to start one: it stops it at the end. */
let startedCluster = false;
let clusterStopped: Promise<unknown> | undefined;
/** Stops the local control plane if this run started it, once; with Bun.spawn, so it also runs on a signal. */
function stopStartedCluster(): Promise<unknown> {
  if (!startedCluster || process.env.DEVCTL_KEEP_CLUSTER) return Promise.resolve();
  clusterStopped ??= (() => {
    console.error("\n==> stopping the local control plane this run started");
    return Bun.spawn([bun, "run", "tests/cluster/cli.ts", "down"], { cwd: root, stdout: "inherit", stderr: "inherit" })
      .exited;
  })();
  return clusterStopped;
}
shutdown.onShutdown(stopStartedCluster);

/** Runs a step to its end; on a signal the run goes no further (the shutdown reports and exits). */
async function step(title: string, cmd: string[]): Promise<{ code: number; stdout: string }> {
  console.error(`\n==> ${title}`);
  const r = await runChild(cmd, { cwd: root, capture: true, echo: true });
  shutdown.signal.throwIfAborted();
  return r;
}

async function localClusterAnswers(): Promise<boolean> {
  const file = paths.kubeconfig; // .cluster/ or $DEVCTL_CLUSTER_DIR
  if (!existsSync(file)) return false;
  const { createKubeClient } = await import("../src/kube/client.ts");
  try {
    await createKubeClient({ kubeconfig: file, timeoutMs: 3000 }).raw("GET", "/readyz");
    return true;
  } catch {
    return false;
  }
}

const staticChecks: [string, string[]][] = [
  ["format check and lint (biome ci)", [bun, "x", "biome", "ci", "--error-on-warnings", "."]],
  ["type check (tsc --noEmit)", [bun, "x", "tsc", "--noEmit", "-p", "."]],
];
for (const [title, cmd] of staticChecks) {
  if ((await step(title, cmd)).code !== 0) {
    console.error(
      `\n==> ${title} failed: fix the findings above (npm run fix applies the formatter and safe lint fixes)`,
    );
    console.log("0 passed, 1 failed, 0 skipped");
    process.exit(1);
  }
}

const build = await step("building dist/devctl", [bun, "run", "src/build/build.ts"]);
if (build.code !== 0) {
  console.log("0 passed, 1 failed, 0 skipped");
  process.exit(1);
}

const external = process.env.DEVCTL_TEST_KUBECONFIG;
if (external) {
  console.error(
    `\n==> using the cluster of DEVCTL_TEST_KUBECONFIG=${external} (fault-injection tests that need the local control plane are skipped)`,
  );
} else {
  startedCluster = !(await localClusterAnswers());
  const up = await step("starting the local control plane (the first run builds it from Go modules)", [
    bun,
    "run",
    "tests/cluster/cli.ts",
    "up",
  ]);
  if (up.code !== 0) {
    console.log("0 passed, 1 failed, 0 skipped");
    process.exit(1);
  }
}

/** The test files bun would discover (its own patterns), relative to the repository, sorted. */
function testFiles(under = "."): string[] {
  const glob = new Bun.Glob("**/*{.test,_test,.spec,_spec}.{ts,tsx,js,jsx}");
  return [...glob.scanSync({ cwd: resolve(root, under) })]
    .map((f) => (under === "." ? f : `${under.replace(/\/$/, "")}/${f}`))
    .filter((f) => !f.split("/").some((part) => part === "node_modules" || part.startsWith(".")))
    .sort();
}

/** Extra arguments that are all paths select exactly those files; anything else is a bun filter. */
function selectedBy(args: string[]): string[] | undefined {
  if (!args.every((a) => !a.startsWith("-") && existsSync(resolve(root, a)))) return undefined;
  return args.flatMap((a) =>
    statSync(resolve(root, a)).isDirectory()
      ? testFiles(relative(root, resolve(root, a)) || ".")
      : [relative(root, resolve(root, a))],
  );
}

/** Runs `bun test` on `files` (or with the filter `args`), streaming its output; returns the phase's verdict. */
async function bunTest(
  title: string,
  files: string[] | undefined,
  args: string[],
  limitMs: number,
): Promise<PhaseVerdict> {
  shutdown.signal.throwIfAborted();
  console.error(`\n==> ${title}`);
  const scratch = mkdtempSync(join(tmpdir(), "devctl-test-phase-"));
  const junitFile = join(scratch, "junit.xml");
  const skipLog = join(scratch, "skips.jsonl");
  // The per-test default (setDefaultTimeout in _support.ts) only reaches the first file that imports it.
  const selection = files ? files.map((f) => `./${f}`) : args;
  const proc = Bun.spawn(
    [bun, "test", `--timeout=${TEST_TIMEOUT_MS}`, "--reporter=junit", `--reporter-outfile=${junitFile}`, ...selection],
    {
      cwd: root,
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, [SKIP_LOG_ENV]: skipLog, [KUBECTL_CACHE_ENV]: join(scratch, "kubectl-cache") },
    },
  );
  // A hang outside any single test (each has its own timeout) must not eat CI's whole budget.
  const watchdog = setTimeout(() => {
    console.error(`\n==> ${title}: still running after ${Math.round(limitMs / 60_000)} min: stopping it`);
    proc.kill("SIGKILL");
  }, limitMs);
  const tee = async (stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) => {
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      out.write(s);
    }
    return text;
  };
  const [o, e] = await Promise.all([tee(proc.stdout, process.stdout), tee(proc.stderr, process.stderr)]);
  const code = await proc.exited;
  clearTimeout(watchdog);
  shutdown.signal.throwIfAborted();
  const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : undefined);
  const verdict = judgePhase({
    exitCode: code,
    output: `${o}\n${e}`,
    junit: read(junitFile),
    files,
    skipLog: (read(skipLog) ?? "")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as SkipRecord),
    ci: CI,
  });
  rmSync(scratch, { recursive: true, force: true });
  for (const p of verdict.problems) console.error(`==> ${title}: FAILED: ${p}`);
  return verdict;
}

let passed = 0;
let failed = 0;
let skipped = 0;
const skips: Skip[] = [];
const failures: Failure[] = [];
try {
  const deadline = Date.now() + SUITE_LIMIT_MIN * 60_000;
  // Suites that restart, freeze or compact the control plane run last, so that the controllers'
  // slow recovery afterwards cannot slow down the others.
  const all = testFiles();
  const phases: [string, string[] | undefined, string[]][] = extra.length
    ? [["running the selected test suites", selectedBy(extra), extra]]
    : [
        ["running the unit and integration suites", all.filter((f) => !f.startsWith(`${FAULT_SUITES}/`)), []],
        ["running the fault-injection suites", all.filter((f) => f.startsWith(`${FAULT_SUITES}/`)), []],
      ];
  for (const [title, files, args] of phases) {
    const r = await bunTest(title, files, args, Math.max(60_000, deadline - Date.now()));
    passed += r.passed;
    failed += r.failed;
    skipped += r.skipped;
    skips.push(...r.skips);
    failures.push(...r.failures);
  }
} catch (e) {
  shutdown.signal.throwIfAborted();
  console.error(`\n==> the test run broke: ${(e as Error).stack ?? e}`);
  failed++;
} finally {
  await stopStartedCluster();
}
for (const f of failures) console.log(describeFailure(f));
for (const s of skips) console.log(describeSkip(s, CI));
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 ? 1 : 0);
