/**
 * The Lease record, the elector's configuration, options, callbacks and outcomes: types, client-go's
 * validation of the timings, and metav1.MicroTime. Pure; leader-election.ts re-exports all of it.
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import type { RuntimeMetrics } from "./metrics.ts";
import type { KubeObject } from "../kube/types.ts";

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
  /** Watch the Lease while waiting to lead (needs list and watch on it). Default true. */
  watchLease?: boolean;
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

export class LeaderElectionConfigError extends Error {
  override readonly name = "LeaderElectionConfigError";
}

/** client-go's JitterFactor for the acquire retry; renewDeadline must exceed retryPeriod times this. */
export const JITTER_FACTOR = 1.2;

export function validateLeaderElectionConfig(c: LeaderElectionConfig): Required<LeaderElectionConfig> {
  const r = {
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
    releaseOnCancel: true,
    watchLease: true,
    ...c,
  };
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
      `leaseDurationMs (${r.leaseDurationMs}) must be greater than renewDeadlineMs (${r.renewDeadlineMs}): ` +
        "a leader must give up before others may take over",
    );
  }
  if (!(r.renewDeadlineMs > JITTER_FACTOR * r.retryPeriodMs)) {
    fail(
      `renewDeadlineMs (${r.renewDeadlineMs}) must be greater than ${JITTER_FACTOR} × retryPeriodMs ` +
        `(${r.retryPeriodMs}): leave room for more than one renewal try`,
    );
  }
  return r;
}

/** metav1.MicroTime: RFC 3339 with exactly six fractional digits (the API server rejects three). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}
