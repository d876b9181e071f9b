/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (tools/leaderelection).
 *
 * Properties:
 * - Acquire: get the Lease; create it when missing; take it when its holder is empty (released), is us, or
 *   has not changed the record for `leaseDurationSeconds` as measured on OUR clock since WE last saw the
 *   record change (the remote renewTime is never compared with local time). Tried every retryPeriod
 *   (+ up to 120% jitter, as client-go's JitterUntil), and at the instant the observed record expires, until
 *   acquired or aborted.
 * - Watched while acquiring (`watchLease`, default on; _lease-watch.ts): each renewal is seen as it is written,
 *   so the expiry clock starts then rather than up to 4.4 s later, and a release or deletion triggers a try at
 *   once. After a SIGKILL a standby therefore leads one lease duration after the last renewal (client-go:
 *   up to two polls later); after a release, at once. Without the watch (no list/watch on leases) it polls.
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
import type { Logger } from "./logger.ts";
import { LeaseIO } from "./_lease-io.ts";
import { Term } from "./_leader-term.ts";
import { WaitBetweenTries, watchLease } from "./_lease-watch.ts";
import { isNotFound, messageOf } from "../kube/errors.ts";
import type { KubeClient } from "../kube/types.ts";
import {
  JITTER_FACTOR,
  type Lease,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  type LeaderOutcome,
  microTime,
  type LeaderElectionConfig,
  type LeaseSpec,
  validateLeaderElectionConfig,
} from "./_leader-config.ts";

export {
  type Lease,
  type LeaderCallbacks,
  type LeaderElectionConfig,
  LeaderElectionConfigError,
  type LeaderElectorOptions,
  type LeaderOutcome,
  type LeaseSpec,
  microTime,
  validateLeaderElectionConfig,
} from "./_leader-config.ts";

/**
 * client-go's LeaderElector: `run` = acquire → renew → release, each a method, with `tryAcquireOrRenew` the one
 * read-decide-write step they all repeat.
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #io: LeaseIO;
  readonly #config: Required<LeaderElectionConfig>;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #metrics: LeaderElectorOptions["metrics"];
  readonly #random: () => number;
  readonly #leaseSeconds: number;
  /** "lease <namespace>/<name>", for log lines. */
  readonly #what: string;
  /**
   * The Lease record as last read or written by us (client-go `observedRecord`); undefined until the first read.
   * Compared as a whole: any change of holder, renewTime or transitions counts as the holder being alive.
   */
  #observedRecord: LeaseSpec | undefined;
  /**
   * OUR clock's time when #observedRecord last changed (client-go `observedTime`). Another holder's lease expires
   * `leaseDurationSeconds` after this instant; the remote renewTime is never compared with local time.
   */
  #observedTime = 0;
  /** The holder last announced (log line, onNewLeader); announcements happen once per new holder. */
  #announced: string | undefined;
  /** True from a successful acquire until run ends; mirrored by leader_election_master_status{name}. */
  #leading = false;
  #onNewLeader: ((identity: string) => void) | undefined;
  /** The wait between two acquire tries, which the watch cuts short when the Lease is released or deleted. */
  readonly #between = new WaitBetweenTries();

  constructor(client: KubeClient, config: LeaderElectionConfig, opts: LeaderElectorOptions) {
    this.#client = client;
    this.#config = validateLeaderElectionConfig(config);
    this.#clock = opts.clock;
    this.#io = new LeaseIO(client, this.#config, opts.clock);
    this.#logger = opts.logger;
    this.#metrics = opts.metrics;
    this.#random = opts.random ?? Math.random;
    this.#leaseSeconds = Math.ceil(this.#config.leaseDurationMs / 1000);
    this.#what = `lease ${this.#config.namespace}/${this.#config.leaseName}`;
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** The holder last observed ("" when released), if any Lease was seen. */
  leader(): string | undefined {
    return this.#observedRecord?.holderIdentity;
  }

  /** Acquires, runs the work while renewing, and releases (if configured) once the work has drained. */
  async run(signal: AbortSignal, cb: LeaderCallbacks): Promise<LeaderOutcome> {
    this.#onNewLeader = cb.onNewLeader;
    this.#setLeading(false);
    if (!(await this.acquire(signal))) return { kind: "cancelled" };
    const term = new Term(signal, cb.onStartedLeading, (e) =>
      this.#logger.error(`${this.#what}: the leader's work failed, stepping down: ${messageOf(e)}`),
    );
    try {
      if (!(await this.renew(term.renewing))) return { kind: "lost" };
      // Not leading from here on, before the release is written: once it is, a standby may lead at once
      // (client-go's leaderOff comes before its release too). The chaos soak saw both report leading otherwise.
      this.#setLeading(false);
      if (this.#config.releaseOnCancel) await this.release();
      return term.workError === undefined ? { kind: "released" } : { kind: "released", workError: term.workError };
    } finally {
      term.end();
      this.#setLeading(false);
      this.#guard("onStoppedLeading", () => cb.onStoppedLeading());
    }
  }

  /** Tries until we hold the Lease (see #waitToRetry for when), watching it meanwhile; false if aborted. */
  async acquire(signal: AbortSignal): Promise<boolean> {
    this.#between.reset();
    const watching = new AbortController();
    const stopWatching = () => watching.abort();
    signal.addEventListener("abort", stopWatching, { once: true });
    const watched = this.#config.watchLease
      ? watchLease(this.#client, this.#config, { clock: this.#clock, logger: this.#logger }, watching.signal, (r) =>
          this.#watched(r),
        )
      : undefined;
    try {
      while (!(await this.tryAcquireOrRenew(signal))) {
        if (signal.aborted) return false;
        await this.#waitToRetry(signal);
        if (signal.aborted) return false;
      }
    } finally {
      signal.removeEventListener("abort", stopWatching);
      watching.abort();
      await watched;
    }
    this.#setLeading(true);
    this.#logger.info(`${this.#what}: leading as ${this.#config.identity}`);
    return true;
  }

  /**
   * Renews every retryPeriod until `stop` aborts (true). A cycle whose tries all fail for renewDeadline ends
   * leadership (false): renewDeadline < leaseDuration, so we stop before anyone else may take over.
   */
  async renew(stop: AbortSignal): Promise<boolean> {
    while (!stop.aborted) {
      await this.#clock.sleep(this.#config.retryPeriodMs, stop);
      if (stop.aborted) break;
      if (!(await this.#renewWithinDeadline(stop)) && !stop.aborted) {
        this.#logger.error(`${this.#what}: could not renew within ${this.#config.renewDeadlineMs} ms; leadership lost`);
        return false;
      }
    }
    return true;
  }

  /**
   * Gives the Lease up if we hold it (holder "", leaseDurationSeconds 1, as client-go's ReleaseOnCancel), so a
   * standby takes over on its next retry instead of waiting for expiry. Never throws; false if the write failed.
   */
  async release(): Promise<boolean> {
    if (!this.#leading && this.#observedRecord?.holderIdentity !== this.#config.identity) return true;
    const ctl = new AbortController();
    const timer = this.#clock.setTimeout(() => ctl.abort(), this.#config.renewDeadlineMs);
    try {
      const lease = await this.#io.get(ctl.signal);
      if (lease.spec?.holderIdentity !== this.#config.identity) return true;
      const now = microTime(this.#clock.now());
      const spec: LeaseSpec = {
        holderIdentity: "",
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      };
      this.#observe(await this.#io.replace(lease, spec, ctl.signal), this.#clock.now());
      this.#logger.info(`${this.#what}: released`);
      return true;
    } catch (e) {
      this.#logger.warn(`${this.#what}: could not release it (a standby takes over when it expires): ${messageOf(e)}`);
      return false;
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /**
   * One try, true when we hold the Lease afterwards (client-go's steps):
   * 1. get the Lease, or create it holding it ourselves when it does not exist;
   * 2. observe the record; if another holder's lease has not expired on our clock, give up this try;
   * 3. write our record with the Lease's resourceVersion (a Conflict is just a failed try): a takeover counts a
   *    transition, a renewal keeps acquireTime and leaseTransitions.
   */
  async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    try {
      const lease = await this.#getOrCreate(now, signal);
      if (lease === "created") return true;
      const old = lease.spec ?? {};
      this.#observe(old, now);
      const holder = old.holderIdentity ?? "";
      const validUntil = this.#observedTime + (old.leaseDurationSeconds ?? 0) * 1000;
      if (holder && holder !== this.#config.identity && validUntil > now) return false;
      const next = this.#record(now, old.leaseTransitions ?? 0);
      if (holder === this.#config.identity) next.acquireTime = old.acquireTime ?? next.acquireTime;
      else next.leaseTransitions = (old.leaseTransitions ?? 0) + 1;
      this.#observe(await this.#io.replace(lease, next, signal), now);
      return true;
    } catch (e) {
      this.#logger.debug(`${this.#what}: try failed: ${messageOf(e)}`);
      return false;
    }
  }

  /**
   * The wait before the next acquire try: retryPeriod + up to 120% jitter (client-go's JitterUntil), cut short
   * at the instant another holder's observed record expires, or when the watch sees the Lease released or deleted.
   */
  async #waitToRetry(signal: AbortSignal): Promise<void> {
    const jittered = this.#config.retryPeriodMs * (1 + JITTER_FACTOR * this.#random());
    const record = this.#observedRecord;
    const held = record?.holderIdentity && record.holderIdentity !== this.#config.identity;
    const expiresIn = held
      ? this.#observedTime + (record.leaseDurationSeconds ?? 0) * 1000 - this.#clock.now()
      : Number.POSITIVE_INFINITY;
    await this.#between.sleep(this.#clock, Math.max(0, Math.min(jittered, expiresIn)), signal);
  }

  /** A record the watch delivered (undefined: no Lease). Released or gone: try now. */
  #watched(record: LeaseSpec | undefined): void {
    if (record) this.#observe(record, this.#clock.now());
    if (!record?.holderIdentity) this.#between.cutShort();
  }

  /** Tries every retryPeriod until one succeeds (true) or renewDeadline, measured from now, passes (false). */
  async #renewWithinDeadline(stop: AbortSignal): Promise<boolean> {
    const deadline = new AbortController();
    const timer = this.#clock.setTimeout(() => deadline.abort(), this.#config.renewDeadlineMs);
    const onStop = () => deadline.abort();
    stop.addEventListener("abort", onStop, { once: true });
    try {
      while (!deadline.signal.aborted) {
        if (await this.tryAcquireOrRenew(deadline.signal)) return true;
        await this.#clock.sleep(this.#config.retryPeriodMs, deadline.signal);
      }
      return false;
    } finally {
      this.#clock.clearTimeout(timer);
      stop.removeEventListener("abort", onStop);
    }
  }

  /** The Lease, or "created" when it did not exist and we created it holding it. */
  async #getOrCreate(now: number, signal: AbortSignal): Promise<Lease | "created"> {
    try {
      return await this.#io.get(signal);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    const created = await this.#io.create(this.#record(now, 0), signal);
    this.#observe(created.spec ?? {}, now);
    return "created";
  }

  /** Our record as holder at `now`. */
  #record(now: number, leaseTransitions: number): LeaseSpec {
    return {
      holderIdentity: this.#config.identity,
      leaseDurationSeconds: this.#leaseSeconds,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions,
    };
  }

  /** Records what we saw; a changed record restarts the expiry clock, a new holder is announced once. */
  #observe(spec: LeaseSpec, now: number): void {
    if (JSON.stringify(spec) !== JSON.stringify(this.#observedRecord)) {
      this.#observedRecord = spec;
      this.#observedTime = now;
    }
    const holder = spec.holderIdentity ?? "";
    if (!holder || holder === this.#announced) return;
    this.#announced = holder;
    this.#logger.info(`${this.#what}: held by ${holder}${holder === this.#config.identity ? " (us)" : ""}`);
    this.#guard("onNewLeader", () => this.#onNewLeader?.(holder));
  }

  #setLeading(leading: boolean): void {
    this.#leading = leading;
    this.#metrics?.leaderStatus(this.#config.leaseName, leading);
  }

  /** Runs a user callback; a throw is logged, never propagated into the election. */
  #guard(name: string, f: () => void): void {
    try {
      f();
    } catch (e) {
      this.#logger.error(`${name} failed: ${messageOf(e)}`);
    }
  }
}

export function createLeaderElector(
  client: KubeClient,
  config: LeaderElectionConfig,
  opts: LeaderElectorOptions,
): LeaderElector {
  return new LeaderElector(client, config, opts);
}
