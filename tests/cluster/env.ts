/**
 * Which cluster integration suites run against.
 *
 * Contract:
 * - DEVCTL_TEST_KUBECONFIG set: that kubeconfig is used as is; nothing is started or checked.
 * - Otherwise the local cluster from `npm run cluster:up`: its kubeconfig path, if its processes run;
 *   else testKubeconfig() rejects with an error saying to run `npm run cluster:up`.
 * - usingLocalCluster() is false with DEVCTL_TEST_KUBECONFIG set: fault-injection suites (which stop,
 *   freeze or compact the local control plane) skip themselves then.
 */
import { clusterState } from "./control.ts";

export const EXTERNAL_KUBECONFIG_ENV = "DEVCTL_TEST_KUBECONFIG";

export function usingLocalCluster(): boolean {
  return !process.env[EXTERNAL_KUBECONFIG_ENV];
}

export async function testKubeconfig(): Promise<string> {
  const external = process.env[EXTERNAL_KUBECONFIG_ENV];
  if (external) return external;
  const state = await clusterState();
  if (!state || !(await Bun.file(state.kubeconfig).exists())) {
    throw new Error(
      `The local test cluster is not up: run \`npm run cluster:up\` first (or set ${EXTERNAL_KUBECONFIG_ENV} to the kubeconfig of a cluster to test against).`,
    );
  }
  return state.kubeconfig;
}
