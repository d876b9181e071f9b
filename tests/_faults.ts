/**
 * Support for the runtime's fault suites (leader-election.test.ts, watch-faults.test.ts): reading an
 * operator process's JSON log lines and gauges, and the checks every such test ends with.
 *
 * - `logEntries(op)`: the JSON lines logged so far, parsed (other lines are skipped).
 * - `identityOf(op)`: the leader-election identity the process announced at start.
 * - `leaderStatus(op)`: its leader_election_master_status gauge (1 leading, 0 standby).
 * - `unexpectedErrors(op, allowed)`: error-level lines that match none of `allowed`.
 * - `expectHealthy(op, allowed)`: the process still runs (it only exits when a test asks) and logged no
 *   unexpected error-level line.
 * - `since(op)`: a marker; `logsSince(marker)` returns the entries logged after it.
 */
import { expect } from "bun:test";
import type { OperatorProcess } from "./_operator.ts";
import { eventually } from "./_support.ts";

export interface LogEntry {
  ts: string;
  level: string;
  msg: string;
  [field: string]: unknown;
}

export function logEntries(op: OperatorProcess, fromOffset = 0): LogEntry[] {
  const out: LogEntry[] = [];
  for (const line of op.logs().slice(fromOffset).split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const e = JSON.parse(line) as LogEntry;
      if (typeof e.msg === "string" && typeof e.level === "string") out.push(e);
    } catch {
      // a line cut by the read so far; it is complete on the next read
    }
  }
  return out;
}

export async function identityOf(op: OperatorProcess): Promise<string> {
  return eventually(
    () => {
      const start = logEntries(op).find((e) => e.msg.startsWith("starting the WebApp operator"));
      return typeof start?.identity === "string" ? start.identity : undefined;
    },
    10_000,
    "the operator to log its identity",
  );
}

export async function leaderStatus(op: OperatorProcess): Promise<number | undefined> {
  try {
    const line = (await op.metricsText()).split("\n").find((l) => l.startsWith("leader_election_master_status{"));
    return line === undefined ? undefined : Number(line.split(" ").at(-1));
  } catch {
    return undefined;
  }
}

export function isRunning(op: OperatorProcess): boolean {
  return op.proc.exitCode === null && op.proc.signalCode === null;
}

export function unexpectedErrors(op: OperatorProcess, allowed: readonly RegExp[] = []): string[] {
  return logEntries(op)
    .filter((e) => e.level === "error" && !allowed.some((re) => re.test(e.msg)))
    .map((e) => `${e.ts} ${e.msg}${e.error ? ` (${String(e.error)})` : ""}`);
}

export function expectHealthy(op: OperatorProcess, allowed: readonly RegExp[] = []): void {
  if (!isRunning(op))
    throw new Error(
      `the operator exited unasked (code ${op.proc.exitCode}, signal ${op.proc.signalCode}):\n${op.logs().slice(-4000)}`,
    );
  expect(unexpectedErrors(op, allowed)).toEqual([]);
}

/** A point in a process's log: the end of its last complete line. */
export interface LogMarker {
  op: OperatorProcess;
  offset: number;
}
export const since = (op: OperatorProcess): LogMarker => ({ op, offset: op.logs().lastIndexOf("\n") + 1 });
export const logsSince = (m: LogMarker): LogEntry[] => logEntries(m.op, m.offset);

/** Messages of entries matching `re`. */
export const matching = (entries: readonly LogEntry[], re: RegExp): string[] =>
  entries.filter((e) => re.test(e.msg)).map((e) => e.msg);

/** Wraps a test body: when it fails, the last lines each operator logged are printed before the error. */
export function showingLogs(
  ops: () => readonly (OperatorProcess | undefined)[],
  body: () => Promise<void>,
): () => Promise<void> {
  return async () => {
    try {
      await body();
    } catch (e) {
      for (const op of ops()) {
        if (op)
          console.error(
            `--- operator pid ${op.proc.pid}: last log lines ---\n${op.logs().split("\n").slice(-80).join("\n")}`,
          );
      }
      throw e;
    }
  };
}
