/**
 * A standby's watch on the one Lease it waits for (leader-election.ts), between its tries.
 *
 * Contract:
 * - Every record the API server sends (the LIST, then each watch event) reaches `onRecord` as it arrives, so
 *   the expiry clock starts when the holder last renewed, not up to a retry period (+120% jitter) later.
 * - A deleted Lease, or a LIST that finds none, reaches `onRecord` as `undefined`.
 * - It only sharpens timing: the elector still tries every retry period, so a watch that cannot open (an
 *   older install's Role without list/watch on leases, a dead stream) leaves client-go's polling, with one
 *   warning per failure streak from the watcher.
 * - Runs until `signal` aborts; the returned promise never rejects.
 * - `WaitBetweenTries` is the wait the watch can cut short: a cut that comes while no wait is pending (during a
 *   try) skips the next wait instead of being lost; each cut skips at most one wait, so tries never spin.
 */
import type { Clock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import { createWatcher } from "./watcher.ts";
import type { Lease, LeaseSpec } from "./_leader-config.ts";
import { LEASES } from "../kube/resources.ts";
import type { KubeClient } from "../kube/types.ts";

export interface LeaseWatchTarget {
  leaseName: string;
  namespace: string;
}

export function watchLease(
  client: KubeClient,
  target: LeaseWatchTarget,
  opts: { clock: Clock; logger: Logger },
  signal: AbortSignal,
  onRecord: (spec: LeaseSpec | undefined) => void,
): Promise<void> {
  const watcher = createWatcher<Lease>(client, LEASES, {
    clock: opts.clock,
    logger: opts.logger,
    namespace: target.namespace,
    fieldSelector: `metadata.name=${target.leaseName}`,
  });
  return watcher
    .run(signal, (e) => {
      const lease = e.type === "init-done" ? e.objects[0] : e.type === "apply" ? e.object : undefined;
      onRecord(lease ? (lease.spec ?? {}) : undefined);
    })
    .catch((e: unknown) => opts.logger.debug(`the watch on lease ${target.namespace}/${target.leaseName} ended: ${e}`));
}

/** The elector's wait between two acquire tries, which a watched release cuts short. */
export class WaitBetweenTries {
  #pending: AbortController | undefined;
  #missed = false;

  /** Sleeps `ms` on `clock`, until `signal` aborts or cutShort(); returns at once after a missed cut. */
  async sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
    if (this.#missed) {
      this.#missed = false;
      return;
    }
    const pending = new AbortController();
    this.#pending = pending;
    try {
      await clock.sleep(ms, AbortSignal.any([signal, pending.signal]));
    } finally {
      this.#pending = undefined;
    }
  }

  cutShort(): void {
    if (this.#pending) this.#pending.abort();
    else this.#missed = true;
  }

  reset(): void {
    this.#missed = false;
  }
}
