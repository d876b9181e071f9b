/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (tools/leaderelection).
 *
 * Properties:
 * - Acquire: get the Lease; create it when missing; take it when its holder is empty (released), is us, or
 *   has not changed the record for `leaseDurationSeconds` as measured on OUR clock since WE last saw the
 *   record change (the remote renewTime is never compared with local time). Tried every retryPeriod
 *   (+ up to 120% jitter, as client-go's JitterUntil), until acquired or aborted.
 * - Renew: every retryPeriod, get + replace with the Lease's resourceVersion (optimistic concurrency:
 *   a Conflict is just a failed try). Failed tries repeat every retryPeriod until `renewDeadline` after the
 *   cycle started; then leadership is lost: the work's signal aborts, onStoppedLeading runs, run() returns
 *   "lost" and the caller should exit non-zero. Because renewDeadline < leaseDuration, a leader that cannot
 *   renew stops before anyone else may take over.
 * - Takeover increments leaseTransitions; renewal keeps acquireTime and leaseTransitions.
 * - Shutdown (the run signal aborts): the work's signal aborts, the Lease is still renewed until the work's
 *   promise settles, then released (holder "", leaseDurationSeconds 1, as client-go's ReleaseOnCancel) so a
 *   standby takes over on its next retry instead of waiting for expiry.
 * - Validated: leaseDuration > renewDeadline > retryPeriod·1.2 > 0 (client-go's checks), identity set.
 * - Observable: `metrics.leaderStatus(name, leading)` drives leader_election_master_status{name}.
 *
 * Limits (as client-go): no fencing — a leader that is paused (GC, SIGSTOP, partition) past the lease
 * duration may still act for a moment while another replica already leads, so reconciles must be idempotent
 * and use optimistic concurrency; durations trust the local clocks to run at the same rate (not to agree).
 */
import type { Clock } from "./clock.ts";
import type { RuntimeMetrics } from "./metrics.ts";
import { race } from "./_watch-step.ts";
import type { Logger } from "./logger.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";

export const LEASE: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderElectionConfig {
  leaseName: string;
  namespace: string;
  /** Unique per replica, e.g. the pod name. */
  identity: string;
  /** Default 15 000 (client-go). Whole seconds are written to the Lease (rounded up). */
  leaseDurationMs?: number;
  /** Default 10 000. */
  renewDeadlineMs?: number;
  /** Default 2 000. */
  retryPeriodMs?: number;
  /** Release the Lease when the run signal aborts. Default true. */
  releaseOnCancel?: boolean;
}

export interface LeaderCallbacks {
  /** Runs when leadership is acquired; `signal` aborts when it ends. Shutdown waits for its promise. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Runs once when leadership ends (lost or released). Never called if it was never acquired. */
  onStoppedLeading(): void;
  /** A (new) holder was observed, us included. */
  onNewLeader?(identity: string): void;
}

export type LeaderOutcome =
  /** The signal aborted before leadership was acquired. */
  | { kind: "cancelled" }
  /** Renewal failed for renewDeadline: another replica may lead now. Exit non-zero. */
  | { kind: "lost" }
  /** Stopped on request (or the work failed) and the work drained; the Lease was released if configured. */
  | { kind: "released"; workError?: unknown };

export interface LeaderElectorOptions {
  clock: Clock;
  logger: Logger;
  metrics?: Pick<RuntimeMetrics, "leaderStatus">;
  /** Uniform in [0, 1) for the retry jitter. Default Math.random. */
  random?: () => number;
}

export interface LeaderElector {
  run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<LeaderOutcome>;
  isLeader(): boolean;
  /** The holder last observed ("" when released), if any Lease was seen. */
  leader(): string | undefined;
  /** Gives the Lease up if we hold it. Never throws; false if the write failed. */
  release(): Promise<boolean>;
}

export class LeaderElectionConfigError extends Error {
  override readonly name = "LeaderElectionConfigError";
}

/** client-go's JitterFactor for the acquire retry; renewDeadline must exceed retryPeriod times this. */
const JITTER_FACTOR = 1.2;

export function validateLeaderElectionConfig(c: LeaderElectionConfig): Required<LeaderElectionConfig> {
  const r = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000, releaseOnCancel: true, ...c };
  const fail = (m: string) => {
    throw new LeaderElectionConfigError(`leader election: ${m}`);
  };
  if (!r.leaseName) fail('the lease name is empty; set it (e.g. "<operator>-leader")');
  if (!r.namespace) fail("the lease namespace is empty; set it to the operator's namespace");
  if (!r.identity) fail("the identity is empty; set it to something unique per replica, such as the pod name");
  if (!(r.retryPeriodMs > 0)) fail(`retryPeriodMs must be > 0, got ${r.retryPeriodMs}`);
  if (!(r.leaseDurationMs >= 1000))
    fail(`leaseDurationMs must be at least 1000 (the Lease holds whole seconds), got ${r.leaseDurationMs}`);
  if (!(r.leaseDurationMs > r.renewDeadlineMs)) {
    fail(
      `leaseDurationMs (${r.leaseDurationMs}) must be greater than renewDeadlineMs (${r.renewDeadlineMs}): a leader must give up before others may take over`,
    );
  }
  if (!(r.renewDeadlineMs > JITTER_FACTOR * r.retryPeriodMs)) {
    fail(
      `renewDeadlineMs (${r.renewDeadlineMs}) must be greater than ${JITTER_FACTOR} × retryPeriodMs (${r.retryPeriodMs}): leave room for more than one renewal try`,
    );
  }
  return r;
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (the API server rejects three). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export function createLeaderElector(
  client: KubeClient,
  config: LeaderElectionConfig,
  opts: LeaderElectorOptions,
): LeaderElector {
  const c = validateLeaderElectionConfig(config);
  const { clock, logger } = opts;
  const random = opts.random ?? Math.random;
  const leaseSeconds = Math.ceil(c.leaseDurationMs / 1000);
  const what = `lease ${c.namespace}/${c.leaseName}`;
  /** The record as last read or written, and OUR clock time when it last changed. */
  let observed: LeaseSpec | undefined;
  let observedAt = 0;
  let reported: string | undefined;
  let leading = false;
  let onNewLeader: ((id: string) => void) | undefined;

  const setLeading = (v: boolean) => {
    leading = v;
    opts.metrics?.leaderStatus(c.leaseName, v);
  };
  const observe = (spec: LeaseSpec, now: number) => {
    if (JSON.stringify(spec) !== JSON.stringify(observed)) {
      observed = spec;
      observedAt = now;
    }
    const holder = spec.holderIdentity ?? "";
    if (holder && holder !== reported) {
      reported = holder;
      logger.info(`${what}: held by ${holder}${holder === c.identity ? " (us)" : ""}`);
      try {
        onNewLeader?.(holder);
      } catch (e) {
        logger.error(`onNewLeader failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  };
  const call = async <V>(p: Promise<V>, signal: AbortSignal): Promise<V> => {
    const r = await race(p, clock, undefined, signal);
    if (r.kind === "value") return r.value;
    throw r.kind === "error" ? r.cause : new Error("aborted");
  };

  /** One try; true when we hold the Lease afterwards. */
  async function tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = clock.now();
    const fresh = (prev?: LeaseSpec): LeaseSpec => ({
      holderIdentity: c.identity,
      leaseDurationSeconds: leaseSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: prev?.leaseTransitions ?? 0,
    });
    let lease: Lease;
    try {
      lease = await call(client.get<Lease>(LEASE, c.leaseName, c.namespace, signal), signal);
    } catch (e) {
      if (!isNotFound(e)) return tried(e);
      try {
        const created = await call(
          client.create<Lease>(
            LEASE,
            {
              apiVersion: "coordination.k8s.io/v1",
              kind: "Lease",
              metadata: { name: c.leaseName, namespace: c.namespace },
              spec: fresh(),
            },
            { signal },
          ),
          signal,
        );
        observe(created.spec ?? {}, now);
        return true;
      } catch (e2) {
        return tried(e2);
      }
    }
    const old = lease.spec ?? {};
    observe(old, now);
    const holder = old.holderIdentity ?? "";
    const validUntil = observedAt + (old.leaseDurationSeconds ?? 0) * 1000;
    if (holder && holder !== c.identity && validUntil > now) return false;
    const next = fresh(old);
    if (holder === c.identity) next.acquireTime = old.acquireTime ?? next.acquireTime;
    else next.leaseTransitions = (old.leaseTransitions ?? 0) + 1;
    try {
      const written = await call(client.replace<Lease>(LEASE, { ...lease, spec: next }, { signal }), signal);
      observe(written.spec ?? next, now);
      return true;
    } catch (e) {
      return tried(e);
    }
  }
  const tried = (e: unknown): false => {
    logger.debug(`${what}: try failed: ${e instanceof Error ? e.message : String(e)}`);
    return false;
  };

  /** Tries every retryPeriod until success or renewDeadline (measured from now) passes. */
  async function renewWithinDeadline(stop: AbortSignal): Promise<boolean> {
    const deadline = new AbortController();
    const timer = clock.setTimeout(() => deadline.abort(), c.renewDeadlineMs);
    const onStop = () => deadline.abort();
    stop.addEventListener("abort", onStop, { once: true });
    try {
      while (!deadline.signal.aborted) {
        if (await tryAcquireOrRenew(deadline.signal)) return true;
        await clock.sleep(c.retryPeriodMs, deadline.signal);
      }
      return false;
    } finally {
      clock.clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    }
  }

  async function release(): Promise<boolean> {
    if (!leading && observed?.holderIdentity !== c.identity) return true;
    const ctl = new AbortController();
    const timer = clock.setTimeout(() => ctl.abort(), c.renewDeadlineMs);
    try {
      const lease = await call(client.get<Lease>(LEASE, c.leaseName, c.namespace, ctl.signal), ctl.signal);
      if (lease.spec?.holderIdentity !== c.identity) return true;
      const now = microTime(clock.now());
      const spec: LeaseSpec = {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      };
      const written = await call(client.replace<Lease>(LEASE, { ...lease, spec }, { signal: ctl.signal }), ctl.signal);
      observe(written.spec ?? spec, clock.now());
      logger.info(`${what}: released`);
      return true;
    } catch (e) {
      logger.warn(
        `${what}: could not release it (a standby takes over when it expires): ${e instanceof Error ? e.message : String(e)}`,
      );
      return false;
    } finally {
      clock.clearTimeout(timer);
    }
  }

  async function run(signal: AbortSignal, cb: LeaderCallbacks): Promise<LeaderOutcome> {
    onNewLeader = cb.onNewLeader;
    setLeading(false);
    while (!(await tryAcquireOrRenew(signal))) {
      if (signal.aborted) return { kind: "cancelled" };
      await clock.sleep(c.retryPeriodMs * (1 + JITTER_FACTOR * random()), signal);
      if (signal.aborted) return { kind: "cancelled" };
    }
    setLeading(true);
    logger.info(`${what}: leading as ${c.identity}`);
    const lead = new AbortController();
    const stopRenew = new AbortController();
    let workError: unknown;
    const work = Promise.resolve()
      .then(() => cb.onStartedLeading(lead.signal))
      .catch((e: unknown) => {
        workError = e ?? new Error("onStartedLeading failed");
        logger.error(`${what}: the leader's work failed, stepping down: ${e instanceof Error ? e.message : String(e)}`);
        lead.abort();
      });
    const stopWhenDrained = () => {
      lead.abort();
      void work.then(() => stopRenew.abort());
    };
    if (signal.aborted) stopWhenDrained();
    else signal.addEventListener("abort", stopWhenDrained, { once: true });
    void work.then(() => workError !== undefined && stopRenew.abort());
    try {
      while (!stopRenew.signal.aborted) {
        await clock.sleep(c.retryPeriodMs, stopRenew.signal);
        if (stopRenew.signal.aborted) break;
        if (!(await renewWithinDeadline(stopRenew.signal)) && !stopRenew.signal.aborted) {
          logger.error(`${what}: could not renew within ${c.renewDeadlineMs} ms; leadership lost`);
          lead.abort();
          return { kind: "lost" };
        }
      }
      if (c.releaseOnCancel) await release();
      return workError === undefined ? { kind: "released" } : { kind: "released", workError };
    } finally {
      signal.removeEventListener("abort", stopWhenDrained);
      lead.abort();
      setLeading(false);
      try {
        cb.onStoppedLeading();
      } catch (e) {
        logger.error(`onStoppedLeading failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  return { run, isLeader: () => leading, leader: () => observed?.holderIdentity, release };
}
