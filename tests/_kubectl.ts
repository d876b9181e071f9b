/**
 * kubectl for suites that run it around API-server faults: the pinned v1.36.3 build (KUBECTL, from
 * tests/cluster/kubectl.ts, like every suite's), with its HTTP cache switched off.
 *
 * Why: kubectl's disk cache (~/.kube/cache/http) stores whatever the API server answers, including the
 * `429 Too Many Requests, Retry-After: 5` ("The apiserver is shutting down") of a server that is
 * restarting. From then on every kubectl call that reads that entry waits its Retry-After: measured here,
 * every kubectl on the machine took 5 s instead of 0.05 s until the entry was deleted. A cache directory
 * that cannot be created (under /dev/null) makes kubectl cache nothing, silently; it then reads discovery
 * from the server on each call (a few ms on the local cluster).
 */
import { KUBECTL, kubectl as sharedKubectl } from "./_support.ts";

export { KUBECTL };

export const KUBECTL_CACHE_DIR = "/dev/null/devctl-tests-no-kubectl-cache";

export const kubectl = (args: string[], stdin?: string) =>
  sharedKubectl(["--cache-dir", KUBECTL_CACHE_DIR, ...args], stdin);
