/**
 * Skips that say why. A test or suite that cannot run here is registered with `testWhen(p)` /
 * `describeWhen(p)` instead of a bare `test.skipIf`, never left out with an `if`:
 * - bun still collects it, so the runner (tests/run.ts) counts it as skipped, never as absent;
 * - the one-line reason is appended to the file named by DEVCTL_SKIP_LOG (set by the runner), which
 *   fails any skip that has no recorded reason and, on CI (`CI=true`), any skip for a missing prerequisite;
 * - it is also printed (`skip: <name>: <reason>`) for a bare `bun test` run.
 */
import { appendFileSync } from "node:fs";
import { describe, test } from "bun:test";
import { usingLocalCluster } from "./cluster/env.ts";

export const SKIP_LOG_ENV = "DEVCTL_SKIP_LOG";

export interface Prerequisite {
  met: boolean;
  /** Why it is not met, in one line (what would make it met). */
  reason: string;
}

/** One line of the skip log: a skipped test, or a skipped describe block (`scope`). */
export interface SkipRecord {
  name: string;
  reason: string;
  prerequisite: true;
}

/** The suites that restart, freeze or compact the control plane need the local one. */
export const LOCAL_CONTROL_PLANE: Prerequisite = {
  met: usingLocalCluster(),
  reason:
    "needs the local control plane (DEVCTL_TEST_KUBECONFIG names another cluster, which is never restarted, frozen or compacted)",
};

function record(name: string, p: Prerequisite): void {
  const line: SkipRecord = { name, reason: p.reason, prerequisite: true };
  console.error(`skip: ${name}: ${p.reason}`);
  const file = process.env[SKIP_LOG_ENV];
  if (file) appendFileSync(file, `${JSON.stringify(line)}\n`);
}

type TestArgs = Parameters<typeof test>;
type DescribeArgs = Parameters<typeof describe>;

/** `test` when `p` is met, else a skipped test whose reason is recorded. */
export function testWhen(p: Prerequisite): (...args: TestArgs) => void {
  return (name, fn, options) => {
    if (!p.met) record(String(name), p);
    test.skipIf(!p.met)(name, fn, options);
  };
}

/** `describe` when `p` is met, else a skipped block (every test in it skipped) whose reason is recorded. */
export function describeWhen(p: Prerequisite): (...args: DescribeArgs) => void {
  return (name, fn) => {
    if (!p.met) record(String(name), p);
    describe.skipIf(!p.met)(name, fn);
  };
}
