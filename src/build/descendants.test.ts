import { describe, expect, test } from "bun:test";
import {
  descendants,
  descendantsIn,
  type ProcEntry,
  parseStat,
  readProcTable,
  stillRunning,
  stopDescendants,
} from "./descendants.ts";

const entry = (pid: number, ppid: number, session = 1, state = "S"): ProcEntry => ({
  pid,
  ppid,
  session,
  start: pid * 10,
  state,
});

describe("the process table", () => {
  test("a stat line is read past a command name holding spaces and parentheses", () => {
    const line = "4242 (bun (test) x) S 4100 4242 4000 34816 4242 4194304 1 0 0 0 5 3 0 0 20 0 7 0 987654 1 2 3";
    expect(parseStat(line)).toEqual({ pid: 4242, ppid: 4100, session: 4000, start: 987654, state: "S" });
    expect(parseStat("garbage")).toBeUndefined();
  });

  test("descendants are found through every generation, parents first, and never the root itself", () => {
    const table = [entry(1, 0), entry(10, 1), entry(11, 10), entry(12, 11), entry(13, 10), entry(20, 1)];
    expect(descendantsIn(table, 10).map((p) => p.pid)).toEqual([11, 13, 12]);
  });

  test("a detached descendant (another session) and what it started are left to whoever detached it", () => {
    const table = [entry(10, 1, 5), entry(11, 10, 5), entry(12, 10, 12), entry(13, 12, 12), entry(14, 11, 5)];
    expect(descendantsIn(table, 10).map((p) => p.pid)).toEqual([11, 14]);
  });

  test("a child that exited but is not reaped yet is not a descendant to stop", () => {
    expect(descendantsIn([entry(10, 1), entry(11, 10, 1, "Z"), entry(12, 10)], 10).map((p) => p.pid)).toEqual([12]);
  });

  test("an unknown root has no descendants", () => {
    expect(descendantsIn([entry(10, 1)], 99)).toEqual([]);
  });
});

describe("stopDescendants (real processes)", () => {
  test("stops children and grandchildren, also those ignoring SIGTERM, and leaves a detached one alone", async () => {
    // root -> sh (ignores TERM) -> sleep (inherits the ignore); root -> setsid sleep (a session of its own)
    const script = `sh -c "trap '' TERM; sleep 60 & wait" & setsid sleep 60 & wait`;
    const root = Bun.spawn(["sh", "-c", script], { stdout: "ignore" });
    const tree = () => descendants(root.pid);
    const sessionOf = (pid: number) => readProcTable().find((p) => p.pid === pid)?.session;
    try {
      // Until setsid has run, the detached sleep is still in root's session and counts: wait for the settled tree
      const settled = (t: ReturnType<typeof tree>) => t.length === 2 && t[1]?.ppid === t[0]?.pid;
      for (let i = 0; i < 100 && !settled(tree()); i++) await Bun.sleep(20);
      const found = tree();
      const [shell, sleep] = found;
      expect(shell?.ppid).toBe(root.pid);
      expect(sleep?.ppid).toBe(shell?.pid ?? -1);
      expect(found).toHaveLength(2);
      expect(found.every((p) => p.session === sessionOf(root.pid))).toBe(true);
      const t0 = Date.now();
      expect(await stopDescendants(root.pid, 300)).toEqual([]);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(300); // they ignored TERM: KILL after the grace
      expect(found.some((p) => stillRunning(p))).toBe(false);
      expect(readProcTable().filter((p) => p.ppid === root.pid && p.state !== "Z")).toHaveLength(1); // the detached one
    } finally {
      for (const p of readProcTable()) if (p.ppid === root.pid) process.kill(p.pid, "SIGKILL");
      root.kill("SIGKILL");
    }
  });
});
