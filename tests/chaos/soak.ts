/**
 * `npm run chaos` (bun run tests/chaos/soak.ts): the chaos soak against the local control plane.
 *
 *   --minutes N    length of the churn-and-faults phase (default 5; setup and the final checks add ~1-2 min)
 *   --webapps N    WebApps to churn (default 200)
 *   --seed N       replay the same random choices (default: random, printed)
 *   --keep         keep the namespaces afterwards (to look around)
 *
 * Builds dist/devctl first. Needs the local cluster (npm run cluster:up; DEVCTL_CLUSTER_DIR picks a
 * second one): the soak restarts, freezes and compacts it. Prints a summary; exit 0 when every
 * invariant held, 1 when one broke, 2 on a usage or setup error. SIGINT (Ctrl-C), SIGTERM or SIGHUP stops it early
 * (src/build/signals.ts): the fault under way is finished (a frozen API server thawed, a stopped one started
 * again), the replicas are stopped and the namespaces deleted (unless --keep); no summary; exit 128 + signo.
 * The cluster itself is never stopped: the soak did not start it.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { installShutdown, runChild } from "../../src/build/signals.ts";
import { clusterState } from "../cluster/control.ts";
import { EXTERNAL_KUBECONFIG_ENV, usingLocalCluster } from "../cluster/env.ts";
import { claimKubectlCache } from "../cluster/kubectl.ts";

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    minutes: { type: "string", default: "5" },
    webapps: { type: "string", default: "200" },
    seed: { type: "string" },
    keep: { type: "boolean", default: false },
  },
});
const minutes = Number(values.minutes);
const webapps = Number(values.webapps);
const seed = values.seed === undefined ? Math.floor(Math.random() * 1e9) : Number(values.seed);
if (
  !(minutes > 0 && minutes <= 120) ||
  !(Number.isInteger(webapps) && webapps >= 5 && webapps <= 2000) ||
  !Number.isInteger(seed)
) {
  console.error("usage: bun run tests/chaos/soak.ts [--minutes 0<N<=120] [--webapps 5..2000] [--seed INT] [--keep]");
  process.exit(2);
}
if (!usingLocalCluster()) {
  console.error(
    `the chaos soak restarts, freezes and compacts the local control plane: unset ${EXTERNAL_KUBECONFIG_ENV} and run \`npm run cluster:up\``,
  );
  process.exit(2);
}
if (!(await clusterState())) {
  console.error(
    "the local test cluster is not up: run `npm run cluster:up` first (DEVCTL_CLUSTER_DIR=<dir> for a cluster of your own)",
  );
  process.exit(2);
}
const root = resolve(import.meta.dir, "../..");
const shutdown = installShutdown((l) => console.error(l));
// kubectl's cache directory (tests/_support.ts, which run.ts imports, makes one it cannot remove when none is named):
// one of the soak's own unless a caller named it, removed on every way out (a clean-up registered first runs last).
const removeCache = claimKubectlCache() ?? (() => {});
shutdown.onShutdown(async () => removeCache());
const build = await runChild([process.execPath, "run", "src/build/build.ts"], { cwd: root });
if (build.code !== 0) {
  removeCache();
  process.exit(2);
}

const { DEFAULT_SOAK, runSoak } = await import("./run.ts");
const { formatSummary } = await import("./summary.ts");
const soak = runSoak({
  ...DEFAULT_SOAK,
  minutes,
  webapps,
  seed,
  keep: values.keep,
  log: (l) => console.error(l),
  signal: shutdown.signal,
});
shutdown.onShutdown(async () => {
  console.error("interrupted: finishing the fault under way, stopping the replicas and deleting what the soak created");
  await soak.catch(() => undefined);
});
const report = await soak.finally(removeCache);
console.log(`\n${formatSummary(report)}`);
process.exit(report.ok ? 0 : 1);
