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
 * invariant held, 1 when one broke, 2 on a usage or setup error. Ctrl-C stops early (the API server
 * is thawed, replicas stopped, namespaces deleted).
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { clusterState } from "../cluster/control.ts";
import { EXTERNAL_KUBECONFIG_ENV, usingLocalCluster } from "../cluster/env.ts";

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
const build = Bun.spawnSync([process.execPath, "run", "src/build/build.ts"], {
  cwd: root,
  stdout: "inherit",
  stderr: "inherit",
});
if (build.exitCode !== 0) process.exit(2);

const { DEFAULT_SOAK, runSoak } = await import("./run.ts");
const { formatSummary } = await import("./summary.ts");
const stop = new AbortController();
process.on("SIGINT", () => {
  console.error(
    "\ninterrupted: finishing the current fault, then checking and cleaning up (Ctrl-C again to leave everything as it is)",
  );
  if (stop.signal.aborted) process.exit(130);
  stop.abort();
});
const report = await runSoak({
  ...DEFAULT_SOAK,
  minutes,
  webapps,
  seed,
  keep: values.keep,
  log: (l) => console.error(l),
  signal: stop.signal,
});
console.log(`\n${formatSummary(report)}`);
process.exit(report.ok ? 0 : 1);
