/**
 * Preloaded by every `bun test` (bunfig.toml): kubectl's HTTP cache directory of the run (KUBECTL_CACHE_ENV,
 * tests/cluster/kubectl.ts), removed once every test file has run.
 * - A caller that names one keeps it: `npm test` names one per phase and removes it with the phase, the chaos soak
 *   its own.
 * - Otherwise (a bare `bun test tests/x.test.ts`) this names a fresh path under the temporary directory
 *   (claimKubectlCache) and removes it in a global afterAll. bun test runs no exit handler, so tests/_support.ts,
 *   which made one per run, left it behind: more than twenty in one session of direct runs.
 * - kubectl makes the directory on first use: a run that never calls kubectl (the unit tests) makes nothing.
 */
import { afterAll } from "bun:test";
import { claimKubectlCache } from "./cluster/kubectl.ts";

const removeCache = claimKubectlCache();
if (removeCache) afterAll(removeCache);
