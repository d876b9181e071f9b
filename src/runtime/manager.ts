/**
 * A manager of runnables with one lifecycle (controller-runtime's `Manager.Add(Runnable)`, reduced): wiring adds
 * runnables, the manager starts and stops them; a second controller or a webhook is one more `add`.
 *
 * Properties:
 * - Every replica: runnables without `needLeaderElection` (caches, servers, flushers) start at once, in the order
 *   added, so a standby takes over with warm caches; their synchronous start has run when `run` first yields.
 * - Leader only: runnables with `needLeaderElection` start when this replica leads (at once without an elector),
 *   all with the same signal, which aborts when leadership ends or on shutdown.
 * - Shutdown (the run signal aborts): leader runnables drain first (the elector keeps renewing meanwhile and
 *   then releases the Lease), then every other runnable's signal aborts and `run` waits for all of them.
 * - Outcome as a value: "stopped" on request, "lost" when the elector lost the Lease (another replica may lead:
 *   exit non-zero), "failed" when a leader runnable threw (its error as `cause`).
 */
import type { LeaderCallbacks, LeaderOutcome } from "./leader-election.ts";
import type { Logger } from "./logger.ts";
import { messageOf } from "../kube/errors.ts";

export interface Runnable {
  /** For log lines: "informer deployments.apps", "metrics server". */
  readonly description: string;
  /** Runs until `signal` aborts; the promise settles once it has stopped. */
  start(signal: AbortSignal): Promise<void>;
  /** True: runs only while this replica leads (controllers, anything that writes). Default false. */
  readonly needLeaderElection?: boolean;
}

/** Resolves once `stop` has aborted (at once if it already has). */
export async function stopped(stop: AbortSignal): Promise<void> {
  if (!stop.aborted) await new Promise((resolve) => stop.addEventListener("abort", resolve, { once: true }));
}

/** A runnable that waits for its stop signal, then runs `onStop` (closing a server, flushing a buffer). */
export function onStop(description: string, onStop: () => unknown): Runnable {
  return {
    description,
    start: async (stop) => {
      await stopped(stop);
      await onStop();
    },
  };
}

/** What the manager needs of an elector (runtime/leader-election.ts's LeaderElector). */
export interface Elector {
  run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<LeaderOutcome>;
}

export type ManagerOutcome = { kind: "stopped" } | { kind: "lost" } | { kind: "failed"; cause: unknown };

export interface ManagerOptions {
  logger: Logger;
  /** Leader election; without it, leader runnables start at once. */
  elector?: Elector;
  /** This replica's identity, for log lines. */
  identity?: string;
}

export class Manager {
  readonly #opts: ManagerOptions;
  /** In the order added; each appears once. */
  readonly #runnables: Runnable[] = [];
  #running = false;

  constructor(opts: ManagerOptions) {
    this.#opts = opts;
  }

  /** Adds a runnable; only before `run`. */
  add(r: Runnable): this {
    if (this.#running) throw new Error(`manager: cannot add ${r.description} while running`);
    this.#runnables.push(r);
    return this;
  }

  /** Starts everything, and resolves once everything has stopped. Call once. */
  async run(signal: AbortSignal): Promise<ManagerOutcome> {
    if (this.#running) throw new Error("manager: run called twice");
    this.#running = true;
    const stopOthers = new AbortController();
    const others = this.#runnables.filter((r) => !r.needLeaderElection).map((r) => this.#start(r, stopOthers.signal));
    try {
      return await this.#lead(signal);
    } finally {
      stopOthers.abort();
      await Promise.all(others);
    }
  }

  /** Runs the leader runnables, with the elector's leadership when there is one. */
  async #lead(signal: AbortSignal): Promise<ManagerOutcome> {
    const { elector, logger } = this.#opts;
    if (!elector) {
      try {
        await this.#startLeaders(signal);
        return { kind: "stopped" };
      } catch (cause) {
        return { kind: "failed", cause };
      }
    }
    const identity = this.#opts.identity;
    const outcome = await elector.run(signal, {
      onStartedLeading: (leading) => {
        logger.info("leading: starting workers", identity ? { identity } : {});
        return this.#startLeaders(leading);
      },
      onStoppedLeading: () => logger.info("stopped leading"),
      onNewLeader: (who) => who !== identity && logger.info(`the leader is ${who || "nobody"}`),
    });
    switch (outcome.kind) {
      case "cancelled":
        return { kind: "stopped" };
      case "lost":
        return { kind: "lost" };
      case "released":
        return outcome.workError === undefined ? { kind: "stopped" } : { kind: "failed", cause: outcome.workError };
    }
  }

  /** Every leader runnable until `signal` aborts or one fails (which stops the rest); rejects with that failure. */
  async #startLeaders(signal: AbortSignal): Promise<void> {
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) stop.abort();
    let failure: { cause: unknown } | undefined;
    const leaders = this.#runnables.filter((r) => r.needLeaderElection);
    await Promise.all(
      leaders.map((r) =>
        r.start(stop.signal).catch((cause: unknown) => {
          failure ??= { cause };
          stop.abort();
        }),
      ),
    );
    signal.removeEventListener("abort", onAbort);
    if (failure) throw failure.cause;
  }

  /** Starts `r`; a failure is logged and swallowed so that it never stops the others. */
  async #start(r: Runnable, signal: AbortSignal): Promise<void> {
    try {
      await r.start(signal);
    } catch (e) {
      this.#opts.logger.error(`${r.description} stopped with an error: ${messageOf(e)}`);
    }
  }
}
