/**
 * Preloaded by every `bun test` (bunfig.toml): kubectl's HTTP cache directory of the run (KUBECTL_CACHE_ENV,
 * tests/cluster/kubectl.ts), removed once every test file has run.
 * - A caller that names one keeps it: `npm test` names one per phase and removes it with the phase, the chaos soak
 *   its own.
 * - Otherwise (a bare `bun test tests/x.test.ts`) this names a fresh path under the temporary directory and removes it
 *   in a global afterAll. bun test runs no exit handler, so tests/_support.ts, which made one per run, left it behind:
 *   more than twenty in one session of direct runs.
 * - kubectl makes the directory on first use: a run that never calls kubectl (the unit tests) makes nothing.
 */
import { afterAll } from "bun:test";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KUBECTL_CACHE_ENV } from "./cluster/kubectl.ts";

if (!process.env[KUBECTL_CACHE_ENV]) {
  const own = join(tmpdir(), `devctl-kubectl-cache-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  process.env[KUBECTL_CACHE_ENV] = own;
  afterAll(() => rmSync(own, { recursive: true, force: true }));
}
