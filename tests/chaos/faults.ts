/**
 * The faults a soak injects into the local control plane and the operator replicas, one at a time.
 *
 * Properties:
 * - Serial: a fault is injected, undone (thaw, restart) and then the fleet must be stable again
 *   (every replica ready, exactly one leader) before the next one; the time that took is recorded.
 * - Complete: `run()` first injects every kind once, in a shuffled order (finishing that round even
 *   past the deadline), then picks at random; after the deadline, or `maxFaults`, no new fault starts.
 * - Safe: a frozen API server is always thawed, also when the fault fails.
 * - Exits are explained narrowly (`explainExit`): only a lease lost by the replica that led into an API
 *   outage longer than the renew deadline (a freeze past it, or a restart that took that long), within
 *   the outage or right after it, and a start that failed because it began inside such an outage.
 *   Everything else (our SIGKILL and SIGTERM aside, which operators.ts knows) is a crash.
 * - After a freeze past the renew deadline the old leader must have given up (exited with a lease
 *   loss) and another replica must lead: the fault fails otherwise.
 */
import { messageOf } from "../../src/kube/errors.ts";
import { expireResourceVersions, freezeApiServer, restartApiServer, thawApiServer } from "../cluster/control.ts";
import type { Fleet, ProcessRecord } from "./operators.ts";
import type { Random } from "./random.ts";

export const FAULT_KINDS = [
  "apiserver-restart",
  "resourceversions-expired",
  "apiserver-freeze",
  "apiserver-freeze-past-renew-deadline",
  "kill-leader",
  "kill-standby",
  "leader-handover",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_DESCRIPTIONS: Record<FaultKind, string> = {
  "apiserver-restart": "kube-apiserver stopped and started again",
  "resourceversions-expired":
    "etcd compacted + kube-apiserver restarted: every resourceVersion held is gone (410 on re-watch)",
  "apiserver-freeze": "kube-apiserver frozen (SIGSTOP) for less than the renew deadline, then thawed",
  "apiserver-freeze-past-renew-deadline":
    "kube-apiserver frozen for longer than the renew deadline: the leader must give up",
  "kill-leader": "the leading operator replica killed with SIGKILL",
  "kill-standby": "the standby operator replica killed with SIGKILL",
  "leader-handover": "the leading replica stopped with SIGTERM: it releases the Lease",
};

export interface LeaseTimings {
  durationMs: number;
  renewMs: number;
  retryMs: number;
}

export interface FaultRecord {
  kind: FaultKind;
  startedAt: number;
  endedAt: number;
  detail: string;
  /** Time from the end of the fault until the fleet was stable again. */
  recoveredMs?: number;
  /** Time until another replica held the Lease (leader faults). */
  takeoverMs?: number;
  /** The replica that held the Lease when the fault began. */
  leaderPid?: number;
  /** Time from the end of the fault until every replica's /readyz answered 200 again (watches re-opened, caches re-listed); undefined if not before the next fault. */
  healthyMs?: number;
  error?: string;
}

/** Slack after an outage for the exit of a replica that lost its lease in it (drain, caches, servers). */
const EXIT_SLACK_MS = 10_000;
/** Kinds that make the API server unreachable. */
const API_FAULTS: readonly FaultKind[] = [
  "apiserver-restart",
  "resourceversions-expired",
  "apiserver-freeze",
  "apiserver-freeze-past-renew-deadline",
];

/**
 * Why an exit of `rec` (cause `cause`, at `at`) was caused by one of `faults`, or undefined (a crash).
 * Pure: the fleet asks at each exit, the soak's checks again at the end.
 */
export function explainExit(
  faults: readonly FaultRecord[],
  lease: LeaseTimings,
  rec: Pick<ProcessRecord, "pid" | "startedAt">,
  cause: string,
  at: number,
): string | undefined {
  for (const [i, f] of faults.entries()) {
    if (!API_FAULTS.includes(f.kind)) continue;
    const end = f.endedAt || at;
    // The last renewal may precede the outage by one retry period.
    const longOutage =
      f.kind === "apiserver-freeze-past-renew-deadline" || end - f.startedAt >= lease.renewMs - lease.retryMs;
    const what = `fault ${i + 1} (${f.kind}, ${((end - f.startedAt) / 1000).toFixed(1)} s)`;
    if (
      cause === "lease-lost" &&
      longOutage &&
      f.leaderPid === rec.pid &&
      at >= f.startedAt &&
      at <= end + EXIT_SLACK_MS
    )
      return `lost the lease it held into ${what}`;
    if (cause === "start-failed" && rec.startedAt >= f.startedAt && rec.startedAt <= end && at <= end + EXIT_SLACK_MS)
      return `started inside ${what}`;
  }
  return undefined;
}

export interface FaultInjector {
  readonly records: FaultRecord[];
  /** explainExit over the faults so far. */
  explainExit(rec: Pick<ProcessRecord, "pid" | "startedAt">, cause: string, at: number): string | undefined;
  inject(kind: FaultKind): Promise<FaultRecord>;
  run(deadline: number, gapMs: [number, number], signal: AbortSignal, maxFaults?: number): Promise<void>;
}

export function createFaultInjector(o: {
  fleet: Fleet;
  random: Random;
  lease: LeaseTimings;
  stableTimeoutMs: number;
  log: (line: string) => void;
}): FaultInjector {
  const records: FaultRecord[] = [];
  const { fleet, random, lease } = o;

  async function freezeFor(ms: number): Promise<void> {
    await freezeApiServer();
    try {
      await Bun.sleep(ms);
    } finally {
      await thawApiServer();
    }
  }

  /** Waits until `old` exited; fails unless it exited because it lost the lease. */
  async function gaveUp(old: ProcessRecord, frozenMs: number): Promise<void> {
    const deadline = Date.now() + lease.renewMs + EXIT_SLACK_MS;
    while (!old.exit && Date.now() < deadline) await Bun.sleep(100);
    if (old.exit?.cause !== "lease-lost")
      throw new Error(
        `the old leader pid ${old.pid} did not give up after ${(frozenMs / 1000).toFixed(1)} s frozen past the ${lease.renewMs / 1000} s renew deadline: ${old.exit ? `it exited as ${old.exit.cause}` : "it is still running"}`,
      );
  }

  async function leaderOrWait(): Promise<ProcessRecord> {
    const deadline = Date.now() + o.stableTimeoutMs;
    while (Date.now() < deadline) {
      const l = await fleet.leader();
      if (l) return l;
      await Bun.sleep(200);
    }
    throw new Error("no replica holds the Lease");
  }

  /** Ms until a live replica other than `old` holds the Lease. */
  async function takeover(old: ProcessRecord, from: number): Promise<{ ms: number; by: ProcessRecord }> {
    const deadline = Date.now() + o.stableTimeoutMs;
    while (Date.now() < deadline) {
      const l = await fleet.leader();
      if (l && l !== old) return { ms: Date.now() - from, by: l };
      await Bun.sleep(100);
    }
    throw new Error(`no other replica took the Lease over from pid ${old.pid} within ${o.stableTimeoutMs} ms`);
  }

  async function perform(kind: FaultKind, r: FaultRecord): Promise<void> {
    switch (kind) {
      case "apiserver-restart": {
        const pid = await restartApiServer();
        r.detail = `kube-apiserver restarted (new pid ${pid})`;
        break;
      }
      case "resourceversions-expired": {
        const revision = await expireResourceVersions();
        r.detail = `etcd compacted to revision ${revision}, kube-apiserver restarted`;
        break;
      }
      case "apiserver-freeze": {
        const ms = random.int(2000, Math.max(2000, lease.renewMs - 2 * lease.retryMs));
        await freezeFor(ms);
        r.detail = `frozen for ${(ms / 1000).toFixed(1)} s (renew deadline ${lease.renewMs / 1000} s)`;
        break;
      }
      case "apiserver-freeze-past-renew-deadline": {
        const old = await leaderOrWait();
        const ms = Math.min(lease.renewMs + random.int(3000, 6000), 35_000);
        await freezeFor(ms);
        const thawed = Date.now();
        await gaveUp(old, ms);
        const t = await takeover(old, thawed);
        r.detail = `frozen for ${(ms / 1000).toFixed(1)} s (renew deadline ${lease.renewMs / 1000} s); leader pid ${old.pid} gave up (${old.exit?.cause}); pid ${t.by.pid} leads ${(t.ms / 1000).toFixed(1)} s after the thaw`;
        break;
      }
      case "kill-leader":
      case "leader-handover": {
        const old = await leaderOrWait();
        const from = Date.now();
        await fleet.signal(old, kind === "kill-leader" ? "SIGKILL" : "SIGTERM");
        const t = await takeover(old, from);
        r.takeoverMs = t.ms;
        r.detail = `leader pid ${old.pid} ${kind === "kill-leader" ? "killed (SIGKILL)" : `stopped (SIGTERM, exit ${old.exit?.code})`}; pid ${t.by.pid} took over after ${(t.ms / 1000).toFixed(1)} s`;
        break;
      }
      case "kill-standby": {
        const leader = await leaderOrWait();
        const standby = fleet.current().find((p) => p && p !== leader && p.exitedAt === undefined);
        if (!standby) throw new Error("no standby replica is running");
        await fleet.signal(standby, "SIGKILL");
        const still = await fleet.leader();
        r.detail = `standby pid ${standby.pid} killed (SIGKILL); leader pid ${leader.pid} ${still === leader ? "kept the Lease" : "LOST the Lease"}`;
        if (still !== leader) throw new Error(r.detail);
        break;
      }
    }
  }

  const desyncs = () => fleet.history.reduce((n, p) => n + p.desynced, 0);

  return {
    records,
    explainExit: (rec, cause, at) => explainExit(records, lease, rec, cause, at),
    async inject(kind) {
      const leaderPid = (await fleet.leader())?.pid;
      const r: FaultRecord = {
        kind,
        startedAt: Date.now(),
        endedAt: 0,
        detail: "",
        ...(leaderPid ? { leaderPid } : {}),
      };
      records.push(r);
      o.log(`fault ${records.length}: ${kind} ...`);
      const desyncedBefore = desyncs();
      try {
        await perform(kind, r);
        r.endedAt = Date.now();
        // Ready means ready again after the fault: each replica's /readyz answered 200 after it ended.
        r.recoveredMs = await fleet.waitStable(o.stableTimeoutMs, r.endedAt);
        // 410s show up while the replicas re-list after the restart: count them once recovered.
        const desynced = desyncs() - desyncedBefore;
        if (desynced > 0) r.detail += `; ${desynced} watch(es) got 410 Gone and re-listed`;
        o.log(
          `fault ${records.length}: ${kind}: ${r.detail}; stable again after ${(r.recoveredMs / 1000).toFixed(1)} s`,
        );
      } catch (e) {
        r.endedAt ||= Date.now();
        r.error = messageOf(e);
        o.log(`fault ${records.length}: ${kind} FAILED: ${r.error}`);
      }
      return r;
    },
    async run(deadline, [gapMin, gapMax], signal, maxFaults = Number.POSITIVE_INFINITY) {
      // The first round (every kind once) is completed even past the deadline: a short soak covers them all.
      const firstRound: FaultKind[] = random.shuffle(FAULT_KINDS);
      while (!signal.aborted) {
        const gap = random.int(gapMin, gapMax);
        await Bun.sleep(firstRound.length ? gap : Math.max(0, Math.min(gap, deadline - Date.now())));
        if (signal.aborted || (firstRound.length === 0 && (Date.now() >= deadline || records.length >= maxFaults)))
          return;
        await this.inject(firstRound.shift() ?? random.pick(FAULT_KINDS));
      }
    },
  };
}
