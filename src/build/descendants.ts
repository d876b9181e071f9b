/**
 * The processes a process started and that still run, read from /proc (Linux; elsewhere none are found).
 *
 * Properties:
 * - Same session only: a descendant that detached into a session of its own (a cluster component, started
 *   with setsid by tests/cluster/processes.ts) is not one of them, nor is anything it started: the clean-up
 *   that detached it knows when to stop it (a cluster this run did not start must survive it).
 * - No PID mix-ups: each process is known by its PID and its start time, so a PID the kernel hands to
 *   someone else after it exited is never signalled.
 * - stopDescendants signals the descendants found when it is called, all at once (so one that dies first
 *   cannot orphan the others out of reach), and only those: what they start while stopping (a clean-up of
 *   their own) is theirs to wait for.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface ProcEntry {
  pid: number;
  ppid: number;
  session: number;
  /** Clock ticks after boot; with the PID, the process's identity. */
  start: number;
  /** Z (zombie) or X (dead): exited, only not reaped yet. */
  state: string;
}

/** The fields of /proc/<pid>/stat we use; undefined for a line that does not parse. */
export function parseStat(line: string): ProcEntry | undefined {
  const close = line.lastIndexOf(")"); // the command name in parentheses may itself hold spaces and ")"
  const pid = Number.parseInt(line, 10);
  const f = line.slice(close + 2).split(" "); // f[0] is field 3 of proc(5): state
  const [state, ppid, session, start] = [f[0], Number(f[1]), Number(f[3]), Number(f[19])];
  if (close < 0 || !state || ![pid, ppid, session, start].every(Number.isSafeInteger)) return undefined;
  return { pid, ppid, session, start, state };
}

/** Every process of the machine (those that vanish while being read are left out). */
export function readProcTable(procDir = "/proc"): ProcEntry[] {
  let names: string[];
  try {
    names = readdirSync(procDir).filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      return parseStat(readFileSync(`${procDir}/${n}/stat`, "utf8")) ?? [];
    } catch {
      return [];
    }
  });
}

const live = (p: ProcEntry) => p.state !== "Z" && p.state !== "X";

/** The live descendants of `root` in root's own session, parents before their children. */
export function descendantsIn(table: readonly ProcEntry[], root: number): ProcEntry[] {
  const session = table.find((p) => p.pid === root)?.session;
  if (session === undefined) return [];
  const children = new Map<number, ProcEntry[]>();
  for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: ProcEntry[] = [];
  const todo = [root];
  for (let pid = todo.shift(); pid !== undefined; pid = todo.shift()) {
    for (const c of children.get(pid) ?? []) {
      if (c.session !== session) continue; // detached: neither it nor what it started
      if (live(c)) found.push(c);
      todo.push(c.pid); // a zombie's children are re-parented away from it; any left are still ours
    }
  }
  return found;
}

export function descendants(root = process.pid, procDir = "/proc"): ProcEntry[] {
  return descendantsIn(readProcTable(procDir), root);
}

/** True while this very process (same PID, same start time) runs. */
export function stillRunning(p: ProcEntry, procDir = "/proc"): boolean {
  try {
    const now = parseStat(readFileSync(`${procDir}/${p.pid}/stat`, "utf8"));
    return now !== undefined && now.start === p.start && live(now);
  } catch {
    return false;
  }
}

function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
}

/**
 * SIGTERM (then SIGCONT, so a stopped one can act on it) to each descendant of `root`, up to `graceMs` for all of
 * them to exit, then SIGKILL to the rest. Resolves to the PIDs of those still running afterwards (empty on success).
 */
export async function stopDescendants(root = process.pid, graceMs = 40_000): Promise<number[]> {
  const targets = descendants(root);
  const running = () => targets.filter((p) => stillRunning(p));
  for (const p of targets) {
    send(p.pid, "SIGTERM");
    send(p.pid, "SIGCONT");
  }
  const until = async (deadline: number) => {
    while (running().length > 0 && Date.now() < deadline) await Bun.sleep(50);
  };
  await until(Date.now() + graceMs);
  for (const p of running()) send(p.pid, "SIGKILL");
  await until(Date.now() + 5_000);
  return running().map((p) => p.pid);
}
