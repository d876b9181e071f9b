/**
 * The cluster the benchmarks run against, chosen like the test runner (tests/run.ts) does.
 *
 * Properties:
 * - DEVCTL_TEST_KUBECONFIG set: that cluster is used as is; nothing is started or stopped, and the
 *   control plane's processes are unknown (no CPU breakdown for them).
 * - Otherwise the local control plane (DEVCTL_CLUSTER_DIR picks a second, independent one): brought
 *   up if it is not running, and `release()` stops it again only if this run started it
 *   (DEVCTL_KEEP_CLUSTER=1 keeps it). Without the real node unless DEVCTL_REAL_NODE says otherwise: its
 *   kube-proxy programs rules for every Service, KWOK's included, which costs CPU that grows with them.
 *   Bringing it up does not block signal handlers, and is refused once the bench stops on a signal
 *   (src/build/signals.ts runChild); release() stops it whenever it is called, a signal's clean-up included.
 * - reset(): only for a local control plane this run started (canReset): stops it and brings up a new,
 *   empty one at the same kubeconfig path (~8 s), so a measurement starts from a clean cluster. A cluster
 *   someone else runs is never reset.
 * - controlPlanePids(): PIDs of etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
 *   kwok of the local cluster, read from its state file at call time (an API server restarted by a
 *   fault test has a new PID).
 */
import { resolve } from "node:path";
import { runChild } from "../../src/build/signals.ts";
import { clusterState } from "../cluster/control.ts";
import { EXTERNAL_KUBECONFIG_ENV } from "../cluster/env.ts";

const ROOT = resolve(import.meta.dir, "../..");

export interface BenchCluster {
  kubeconfig: string;
  /** "local control plane (<dir>)" or "DEVCTL_TEST_KUBECONFIG=<path>". */
  description: string;
  local: boolean;
  /** release() will stop the cluster (so leftovers need no cleanup). */
  stopsOnRelease: boolean;
  canReset: boolean;
  reset(): Promise<void>;
  controlPlanePids(): Promise<Record<string, number>>;
  release(): Promise<void>;
}

export async function acquireCluster(log: (line: string) => void): Promise<BenchCluster> {
  const external = process.env[EXTERNAL_KUBECONFIG_ENV];
  if (external) {
    return {
      kubeconfig: external,
      description: `${EXTERNAL_KUBECONFIG_ENV}=${external}`,
      local: false,
      stopsOnRelease: false,
      canReset: false,
      reset: async () => {
        throw new Error("an external cluster is never reset");
      },
      controlPlanePids: async () => ({}),
      release: async () => {},
    };
  }
  const startedHere = !(await clusterState());
  log(startedHere ? "starting the local control plane" : "reusing the running local control plane");
  const up = async (): Promise<string> => {
    const r = await runChild([process.execPath, "run", "tests/cluster/cli.ts", "up"], {
      cwd: ROOT,
      capture: true,
      quiet: true,
      env: { DEVCTL_REAL_NODE: "0", ...process.env },
    });
    const kubeconfig = /^KUBECONFIG=(.+)$/m.exec(r.stdout)?.[1];
    if (r.code !== 0 || !kubeconfig) {
      process.stderr.write(r.stderr);
      throw new Error(
        "could not bring up the local control plane (see the lines above); try `npm run cluster:down` and run again",
      );
    }
    return kubeconfig;
  };
  const down = () =>
    Bun.spawn([process.execPath, "run", "tests/cluster/cli.ts", "down"], {
      cwd: ROOT,
      stdout: "inherit",
      stderr: "ignore",
      env: process.env,
    }).exited;
  const kubeconfig = await up();
  const dir = process.env.DEVCTL_CLUSTER_DIR ?? ".cluster";
  return {
    kubeconfig,
    description: `local control plane (etcd + kube-apiserver + kube-controller-manager + kube-scheduler + KWOK, ${dir})`,
    local: true,
    stopsOnRelease: startedHere && !process.env.DEVCTL_KEEP_CLUSTER,
    canReset: startedHere,
    async reset() {
      if (!startedHere) throw new Error("a cluster this run did not start is never reset");
      if ((await down()) !== 0) throw new Error("could not stop the local control plane for a reset");
      if ((await up()) !== kubeconfig)
        throw new Error("the local control plane came back with another kubeconfig path");
    },
    async controlPlanePids() {
      const state = await clusterState();
      const pids: Record<string, number> = {};
      for (const [name, rec] of Object.entries(state?.components ?? {})) if (rec) pids[name] = rec.pid;
      return pids;
    },
    async release() {
      if (!startedHere || process.env.DEVCTL_KEEP_CLUSTER) return;
      log("stopping the local control plane this run started");
      await down();
    },
  };
}
