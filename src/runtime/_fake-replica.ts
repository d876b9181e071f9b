/**
 * TEST DOUBLE — imported by *.test.ts files only, never by runtime code.
 *
 * One leader-election replica over a FakeKube: an elector whose get/replace/create can be cut off (`cut.on`),
 * what its callbacks saw (`seen`), its leader_election_master_status values (`status`), and its run.
 * `random` fixes the retry jitter (default 0: every 2 s); the Lease watch is on unless `watchLease: false`, and
 * sees only what the test scripts with answerList/answerWatch.
 */
import type { FakeClock } from "./clock.ts";
import { createLeaderElector, type Lease, type LeaderCallbacks, type LeaderOutcome } from "./leader-election.ts";
import type { Logger } from "./logger.ts";
import { objKey, type FakeKube } from "./_fake-kube.ts";
import { KubeError } from "../kube/errors.ts";
import { LEASES as LEASE } from "../kube/resources.ts";
import type { KubeClient } from "../kube/types.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
export const NS = "ops";
export const NAME = "devctl-leader";

export function replica(
  kube: FakeKube,
  clock: FakeClock,
  identity: string,
  work?: (signal: AbortSignal) => Promise<void>,
  opts: { random?: number; watchLease?: boolean } = {},
) {
  const cut = { on: false };
  const view: KubeClient = {
    ...kube,
    get: (...a) => (cut.on ? Promise.reject(new KubeError("Unreachable", "cut off", 0)) : kube.get(...a)),
    replace: (...a) => (cut.on ? Promise.reject(new KubeError("Unreachable", "cut off", 0)) : kube.replace(...a)),
    create: (...a) => (cut.on ? Promise.reject(new KubeError("Unreachable", "cut off", 0)) : kube.create(...a)),
  };
  const status: boolean[] = [];
  const elector = createLeaderElector(
    view,
    {
      leaseName: NAME,
      namespace: NS,
      identity,
      ...(opts.watchLease === undefined ? {} : { watchLease: opts.watchLease }),
    },
    {
      clock,
      logger: quiet,
      random: () => opts.random ?? 0,
      metrics: { leaderStatus: (_name, leading) => void status.push(leading) },
    },
  );
  const seen = {
    startedAt: undefined as number | undefined,
    stoppedAt: undefined as number | undefined,
    leaders: [] as string[],
    signal: undefined as AbortSignal | undefined,
  };
  const cb: LeaderCallbacks = {
    onStartedLeading: (signal) => {
      seen.startedAt = clock.now();
      seen.signal = signal;
      return work?.(signal);
    },
    onStoppedLeading: () => void (seen.stoppedAt = clock.now()),
    onNewLeader: (id) => void seen.leaders.push(id),
  };
  const ctl = new AbortController();
  let outcome: LeaderOutcome | undefined;
  const done = elector.run(ctl.signal, cb).then((o) => (outcome = o));
  return { elector, cut, seen, status, ctl, done, outcome: () => outcome };
}

export const lease = (kube: FakeKube) => kube.objects.get(objKey(LEASE, NS, NAME)) as Lease | undefined;
