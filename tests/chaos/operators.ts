/**
 * Operator replicas (`dist/devctl operator run`, leader election on) supervised the way a kubelet
 * supervises a Deployment's pods: a process that exits is started again after a short delay
 * (doubling, up to 10 s, while it keeps failing before it is ready), whatever the reason.
 *
 * Properties:
 * - Every exit is recorded and classified: `killed` (we sent SIGKILL: an injected fault),
 *   `handover` (we sent SIGTERM and it exited 0), `stopped` (the same at the end), `lease-lost` (it exited 1 after logging that it
 *   could not renew its lease), `start-failed` (it exited 1 before it was ready), `crash` (anything
 *   else). Whether a lease loss or failed start was *expected* is decided by `explainExit()` at the
 *   moment of the exit (faults.ts: only the outage that caused it excuses it), and the reason is kept.
 * - Each process writes to its own log file; JSON lines are scanned as they arrive: error-level lines,
 *   lines mentioning "forbidden", 410 re-lists ("resourceVersion too old") and leadership are counted.
 * - /metrics and /readyz of every running process are scraped every second: reconcile and request
 *   counters (the last scrape of a process stands for its lifetime), leader_election_master_status,
 *   from which rounds where two processes claim to lead at once are counted (any such round is a
 *   finding), and the moments when every replica's caches became healthy (or stopped being so).
 * - Stable means stable now: every replica answered /readyz 200 in a scrape that began after the moment
 *   asked for (a fault's end), never "was ready once".
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";
import type { KubeClient, KubeObject } from "../../src/kube/types.ts";
import { LEASES as LEASE } from "../../src/kube/resources.ts";
import { freePort } from "../_operator.ts";
import { DEVCTL } from "../_support.ts";
import { type Scrape, scrapeRound } from "./scrape.ts";

export type ExitCause = "killed" | "handover" | "stopped" | "lease-lost" | "start-failed" | "crash";

export interface ProcessRecord {
  slot: number;
  pid: number;
  port: number;
  logFile: string;
  startedAt: number;
  identity?: string;
  /** When /readyz first answered 200. */
  readyAt?: number;
  /** /readyz at the last scrape: caches synced and no watch stale. */
  ready: boolean;
  /** When the last scrape that found it ready began. */
  readySeenAt?: number;
  exitedAt?: number;
  exit?: {
    code: number | null;
    signal: string | null;
    cause: ExitCause;
    expected: boolean;
    /** The fault that caused a lease loss or failed start, when one did. */
    excuse?: string;
    detail: string;
  };
  /** The signal we sent, if any (set before sending it). */
  intent?: "SIGKILL" | "SIGTERM";
  /** The last /metrics it answered; kept when a later scrape fails (its counters are the process's last known). */
  scrape?: Scrape;
  /** The round (its start, ms) whose scrape it last answered: only those gauges say what it reports now. */
  scrapedAt?: number;
  errors: { ts: string; msg: string; error?: string }[];
  /** Lines mentioning "forbidden", with their timestamp (ms; the time seen for non-JSON lines). */
  forbidden: { at: number; line: string }[];
  desynced: number;
  /** Children taken over from a deleted WebApp of the same name. */
  adopted: number;
  timesLed: number;
  tail: string[];
  proc: ReturnType<typeof Bun.spawn>;
}

export interface FleetOptions {
  replicas: number;
  /** Arguments of `devctl operator run`, except the bind addresses. */
  args: string[];
  logDir: string;
  leaseNamespace: string;
  leaseName: string;
  /** Reads the Lease (an admin client). */
  client: KubeClient;
  /** Which fault caused this lease loss or failed start, if any (faults.ts explainExit). */
  explainExit: (rec: ProcessRecord, cause: ExitCause, at: number) => string | undefined;
  log: (line: string) => void;
  restartDelayMs?: number;
}

export interface Fleet {
  start(): Promise<void>;
  /** The live process of each slot (undefined while a slot is restarting). */
  current(): (ProcessRecord | undefined)[];
  /** Every process ever started, in order. */
  readonly history: ProcessRecord[];
  /** The live process named by the Lease, if any. */
  leader(): Promise<ProcessRecord | undefined>;
  /** Sends `signal` to a process and waits for it to exit (the supervisor restarts it). */
  signal(rec: ProcessRecord, signal: "SIGKILL" | "SIGTERM"): Promise<void>;
  /**
   * Resolves with the ms it took until every slot runs, answered /readyz 200 in a scrape begun after
   * `since` (default: now), and exactly one of them leads, as the Lease and the gauges agree.
   */
  waitStable(timeoutMs: number, since?: number): Promise<number>;
  /** Transitions of "every replica runs and answers /readyz 200" (caches synced, no watch stale), one scrape a second. */
  readonly readiness: { at: number; allReady: boolean }[];
  /** Scrape rounds in which two processes reported leading (each one a finding), with the first few. */
  readonly dualLeadership: { rounds: number; longestRun: number; seen: string[] };
  /** SIGTERM to all, no more restarts; resolves with their exit codes. */
  stop(): Promise<(number | null)[]>;
}

export function createFleet(o: FleetOptions): Fleet {
  const restartDelay = o.restartDelayMs ?? 1000;
  const slots: (ProcessRecord | undefined)[] = Array.from({ length: o.replicas }, () => undefined);
  const failuresInARow: number[] = slots.map(() => 0);
  const history: ProcessRecord[] = [];
  const dual = { rounds: 0, longestRun: 0, seen: [] as string[] };
  const readiness: { at: number; allReady: boolean }[] = [];
  let stopping = false;
  let scraper: Promise<void> | undefined;
  const pending = new Set<ReturnType<typeof setTimeout>>();

  async function spawn(slot: number): Promise<ProcessRecord> {
    const port = await freePort();
    const proc = Bun.spawn(
      [
        DEVCTL,
        "operator",
        "run",
        ...o.args,
        "--metrics-bind-address",
        `127.0.0.1:${port}`,
        "--health-probe-bind-address",
        `127.0.0.1:${port}`,
        // Plain HTTP on loopback, probes and scrapes on one port: these suites measure the operator, not its auth.
        "--metrics-secure=false",
      ],
      { stdout: "pipe", stderr: "pipe", env: { ...process.env, KUBECONFIG: "" } },
    );
    const rec: ProcessRecord = {
      slot,
      pid: proc.pid,
      port,
      proc,
      startedAt: Date.now(),
      logFile: join(o.logDir, `operator-${history.length + 1}-slot${slot}-pid${proc.pid}.log`),
      ready: false,
      errors: [],
      forbidden: [],
      desynced: 0,
      adopted: 0,
      timesLed: 0,
      tail: [],
    };
    history.push(rec);
    slots[slot] = rec;
    const file = createWriteStream(rec.logFile);
    const drained = Promise.all([
      pump(proc.stdout as ReadableStream<Uint8Array>, rec, file),
      pump(proc.stderr as ReadableStream<Uint8Array>, rec, file),
    ]);
    void proc.exited.then(async (code) => {
      await drained;
      file.end();
      onExit(rec, code, proc.signalCode === null ? null : String(proc.signalCode));
    });
    return rec;
  }

  function onExit(rec: ProcessRecord, code: number | null, signal: string | null): void {
    rec.exitedAt = Date.now();
    const text = rec.tail.join("\n");
    let cause: ExitCause;
    if (rec.intent === "SIGKILL" && signal === "SIGKILL") cause = "killed";
    else if (rec.intent === "SIGTERM") cause = stopping ? "stopped" : "handover";
    else if (code === 1 && /lost the lease|could not renew/.test(text)) cause = "lease-lost";
    else if (code === 1 && rec.readyAt === undefined) cause = "start-failed";
    else cause = "crash";
    const excuse =
      cause === "lease-lost" || cause === "start-failed" ? o.explainExit(rec, cause, rec.exitedAt) : undefined;
    const expected =
      cause === "killed" || ((cause === "stopped" || cause === "handover") && code === 0) || excuse !== undefined;
    const detail = `exit code ${code}${signal ? `, signal ${signal}` : ""}; last lines:\n    ${rec.tail.slice(-6).join("\n    ")}`;
    rec.exit = { code, signal, cause, expected, ...(excuse ? { excuse } : {}), detail };
    o.log(
      `operator pid ${rec.pid} (slot ${rec.slot}) exited: ${cause}${excuse ? ` (${excuse})` : ""}${expected ? "" : " (UNEXPECTED)"}, code ${code}${signal ? ` ${signal}` : ""}`,
    );
    if (slots[rec.slot] === rec) slots[rec.slot] = undefined;
    if (stopping) return;
    failuresInARow[rec.slot] = rec.readyAt === undefined ? (failuresInARow[rec.slot] ?? 0) + 1 : 0;
    const delay = Math.min(restartDelay * 2 ** Math.max(0, (failuresInARow[rec.slot] ?? 0) - 1), 10_000);
    const t = setTimeout(() => {
      pending.delete(t);
      if (!stopping) void spawn(rec.slot);
    }, delay);
    pending.add(t);
  }

  async function pump(stream: ReadableStream<Uint8Array>, rec: ProcessRecord, file: WriteStream): Promise<void> {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of stream) {
      const text = decoder.decode(chunk, { stream: true });
      file.write(text);
      const lines = (partial + text).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) scan(rec, line);
    }
    if (partial) scan(rec, partial);
  }

  function scan(rec: ProcessRecord, line: string): void {
    rec.tail.push(line);
    if (rec.tail.length > 40) rec.tail.shift();
    if (/forbidden/i.test(line))
      rec.forbidden.push({
        at: Date.parse(/"ts":"([^"]+)"/.exec(line)?.[1] ?? "") || Date.now(),
        line: line.slice(0, 400),
      });
    if (!line.startsWith("{")) return;
    let e: { level?: string; msg?: string; ts?: string; identity?: unknown; error?: unknown };
    try {
      e = JSON.parse(line);
    } catch {
      return;
    }
    const msg = String(e.msg ?? "");
    if (e.level === "error") rec.errors.push({ ts: String(e.ts), msg, ...(e.error ? { error: String(e.error) } : {}) });
    if (msg.startsWith("starting the WebApp operator") && typeof e.identity === "string") rec.identity = e.identity;
    if (msg.includes("resourceVersion too old")) rec.desynced++;
    if (msg.startsWith("adopted ")) rec.adopted++;
    if (/ leading as /.test(msg)) rec.timesLed++;
  }

  async function scrapeAll(): Promise<void> {
    let runOfDual = 0;
    while (!stopping) {
      const round = Date.now();
      const live = slots.filter((r): r is ProcessRecord => r !== undefined && r.exitedAt === undefined);
      await scrapeRound(live, round, fetch);
      const allReady = live.length === o.replicas && live.every((r) => r.ready && r.exitedAt === undefined);
      if (readiness.at(-1)?.allReady !== allReady) readiness.push({ at: Date.now(), allReady });
      const leaders = live.filter((r) => r.exitedAt === undefined && r.scrapedAt === round && r.scrape?.leading === 1);
      if (leaders.length > 1) {
        dual.rounds++;
        if (dual.seen.length < 5)
          dual.seen.push(`${new Date(round).toISOString()}: pids ${leaders.map((r) => r.pid).join(", ")} both leading`);
        runOfDual++;
        dual.longestRun = Math.max(dual.longestRun, runOfDual);
      } else runOfDual = 0;
      await Bun.sleep(1000);
    }
  }

  async function leaseHolder(): Promise<string | undefined> {
    const lease = await o.client
      .get<KubeObject & { spec?: { holderIdentity?: string } }>(LEASE, o.leaseName, o.leaseNamespace)
      .catch(() => undefined);
    return lease?.spec?.holderIdentity || undefined;
  }

  const fleet: Fleet = {
    history,
    readiness,
    dualLeadership: dual,
    async start() {
      for (let i = 0; i < o.replicas; i++) await spawn(i);
      scraper ??= scrapeAll();
    },
    current: () => [...slots],
    async leader() {
      const holder = await leaseHolder();
      return slots.find((r) => r && r.exitedAt === undefined && r.identity === holder);
    },
    async signal(rec, signal) {
      rec.intent = signal;
      rec.proc.kill(signal);
      await rec.proc.exited;
      while (rec.exit === undefined) await Bun.sleep(20);
    },
    async waitStable(timeoutMs, since = Date.now()) {
      const started = Date.now();
      while (Date.now() - started < timeoutMs) {
        const live = slots.filter((r): r is ProcessRecord => r !== undefined && r.exitedAt === undefined);
        const readyNow = (r: ProcessRecord) => r.ready && (r.readySeenAt ?? 0) >= since && r.identity;
        if (live.length === o.replicas && live.every(readyNow)) {
          const holder = await leaseHolder();
          const leaders = live.filter((r) => r.scrape?.leading === 1);
          if (leaders.length === 1 && leaders[0]!.identity === holder) return Date.now() - started;
        }
        await Bun.sleep(250);
      }
      throw new Error(
        `the operators were not stable within ${timeoutMs} ms (want ${o.replicas} ready replicas and exactly one leader): ${slots.map((r) => (r ? `pid ${r.pid} ready=${r.ready} (last seen ready ${r.readySeenAt ? new Date(r.readySeenAt).toISOString() : "never"}) leading=${r.scrape?.leading}` : "restarting")).join("; ")}`,
      );
    },
    async stop() {
      stopping = true;
      for (const t of pending) clearTimeout(t);
      const live = slots.filter((r): r is ProcessRecord => r !== undefined && r.exitedAt === undefined);
      const codes = await Promise.all(
        live.map(async (r) => {
          r.intent = "SIGTERM";
          r.proc.kill("SIGTERM");
          return r.proc.exited;
        }),
      );
      await scraper;
      return codes;
    },
  };
  return fleet;
}
