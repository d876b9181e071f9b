/**
 * The whole test suite in one command (`npm test`; CI runs the same through .ci/run):
 * 0. static checks: Biome's format check and lint (`biome ci`), then `tsc --noEmit`; any finding fails the run;
 * 1. builds dist/devctl (end-to-end tests drive the compiled executable);
 * 2. uses the cluster named by DEVCTL_TEST_KUBECONFIG if set, else brings up the local control plane
 *    (building it on first use) and remembers whether this run started it;
 * 3. runs every bun:test suite: unit tests beside the modules in src/ and integration suites in tests/,
 *    then the fault-injection suites in tests/faults/ (last, as they disrupt the control plane);
 * 4. stops the local control plane if this run started it (also on failure; DEVCTL_KEEP_CLUSTER=1 keeps it);
 * 5. ends with the line `N passed, N failed` taken from bun's own summary, and bun's exit code.
 * Extra arguments are passed to `bun test` (e.g. a path filter).
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const bun = process.execPath;
const extra = process.argv.slice(2);
/** Upper bound for the whole `bun test` run (DEVCTL_SUITE_LIMIT_MIN), well inside CI's 90 minutes. */
const SUITE_LIMIT_MIN = Number(process.env.DEVCTL_SUITE_LIMIT_MIN ?? 60);
/** Fault-injection suites (they restart, freeze and compact the local control plane). */
const FAULT_SUITES = "tests/faults";
/** Per-test bound: integration tests wait on a real API server and its controllers. */
const TEST_TIMEOUT_MS = 180_000;

function step(
  title: string,
  cmd: string[],
  env: Record<string, string | undefined> = {},
): { code: number; stdout: string } {
  console.error(`\n==> ${title}`);
  const r = Bun.spawnSync(cmd, { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const stdout = r.stdout.toString();
  process.stdout.write(stdout);
  return { code: r.exitCode ?? 1, stdout };
}

async function localClusterAnswers(): Promise<boolean> {
  const file = resolve(root, ".cluster/kubeconfig");
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
  ["format check and lint (biome ci)", [bun, "x", "biome", "ci", "."]],
  ["type check (tsc --noEmit)", [bun, "x", "tsc", "--noEmit", "-p", "."]],
];
for (const [title, cmd] of staticChecks) {
  if (step(title, cmd).code !== 0) {
    console.error(
      `\n==> ${title} failed: fix the findings above (npm run fix applies the formatter and safe lint fixes)`,
    );
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}

const build = step("building dist/devctl", [bun, "run", "src/build/build.ts"]);
if (build.code !== 0) {
  console.log("0 passed, 1 failed");
  process.exit(1);
}

let startedCluster = false;
const external = process.env.DEVCTL_TEST_KUBECONFIG;
if (external) {
  console.error(
    `\n==> using the cluster of DEVCTL_TEST_KUBECONFIG=${external} (fault-injection tests that need the local control plane are skipped)`,
  );
} else {
  startedCluster = !(await localClusterAnswers());
  const up = step("starting the local control plane (the first run builds it from Go modules)", [
    bun,
    "run",
    "tests/cluster/cli.ts",
    "up",
  ]);
  if (up.code !== 0) {
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}

/** Runs `bun test` with the given arguments, streaming its output; returns its exit code and counts. */
async function bunTest(
  title: string,
  args: string[],
  limitMs: number,
): Promise<{ code: number; passed: number; failed: number }> {
  console.error(`\n==> ${title}`);
  // The per-test default (setDefaultTimeout in _support.ts) only reaches the first file that imports it.
  const proc = Bun.spawn([bun, "test", `--timeout=${TEST_TIMEOUT_MS}`, ...args], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: process.env,
  });
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
  const all = `${o}\n${e}`;
  const passed = Number(/^\s*(\d+) pass$/m.exec(all)?.[1] ?? 0);
  let failed = Number(/^\s*(\d+) fail$/m.exec(all)?.[1] ?? 0);
  if (code !== 0 && failed === 0) failed = 1; // bun failed outside any test (e.g. a suite did not load)
  return { code, passed, failed };
}

let code = 1;
let passed = 0;
let failed = 0;
try {
  const deadline = Date.now() + SUITE_LIMIT_MIN * 60_000;
  // Suites that restart, freeze or compact the control plane run last, so that the controllers'
  // slow recovery afterwards cannot slow down the others.
  const phases: [string, string[]][] = extra.length
    ? [["running the selected test suites", extra]]
    : [
        ["running the unit and integration suites", [`--path-ignore-patterns=${FAULT_SUITES}/**`]],
        ["running the fault-injection suites", [`./${FAULT_SUITES}/`]],
      ];
  code = 0;
  for (const [title, args] of phases) {
    const r = await bunTest(title, args, Math.max(60_000, deadline - Date.now()));
    passed += r.passed;
    failed += r.failed;
    if (r.code !== 0) code = r.code;
  }
} finally {
  if (startedCluster && !process.env.DEVCTL_KEEP_CLUSTER)
    step("stopping the local control plane this run started", [bun, "run", "tests/cluster/cli.ts", "down"]);
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(code);
