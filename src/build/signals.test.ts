import { describe, expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { descendants, type ProcEntry, stillRunning } from "./descendants.ts";
import {
  exitCodeFor,
  runChild,
  Shutdown,
  type ShutdownHost,
  ShuttingDown,
  STOP_SIGNALS,
  type StopSignal,
} from "./signals.ts";

/** A host that records what the Shutdown did, in order; `children` is what stopChildren() waits for. */
function fakeHost(children: () => Promise<void> = async () => {}) {
  const handlers = new Map<StopSignal, (() => void)[]>();
  const events: string[] = [];
  let exited: (code: number) => void = () => {};
  const exit = new Promise<number>((r) => (exited = r));
  const host: ShutdownHost = {
    onSignal: (s, h) => handlers.set(s, [...(handlers.get(s) ?? []), h]),
    stopChildren: async () => {
      events.push("stop children");
      await children();
    },
    exit: (code) => {
      events.push(`exit ${code}`);
      exited(code);
    },
    log: (line) => events.push(`log ${line}`),
  };
  const deliver = (s: StopSignal) => {
    for (const h of handlers.get(s) ?? []) h();
  };
  return { host, handlers, events, exit, deliver };
}

describe("a Shutdown", () => {
  test("listens to SIGINT, SIGTERM and SIGHUP, and each exits 128 + its number", async () => {
    expect(STOP_SIGNALS.map(exitCodeFor)).toEqual([130, 143, 129]);
    for (const [signal, code] of [
      ["SIGINT", 130],
      ["SIGTERM", 143],
      ["SIGHUP", 129],
    ] as const) {
      const f = fakeHost();
      new Shutdown(f.host);
      expect([...f.handlers.keys()]).toEqual(["SIGINT", "SIGTERM", "SIGHUP"]);
      f.deliver(signal);
      expect(await f.exit).toBe(code);
    }
  });

  test("stops the children first, then runs the clean-ups last registered first, stops children again, then exits", async () => {
    const f = fakeHost();
    const s = new Shutdown(f.host);
    s.onShutdown(() => void f.events.push("clean-up A"));
    s.onShutdown(async () => {
      await Bun.sleep(5);
      f.events.push("clean-up B");
    });
    f.deliver("SIGTERM");
    await f.exit;
    expect(f.events.filter((e) => !e.startsWith("log"))).toEqual([
      "stop children",
      "clean-up B",
      "clean-up A",
      "stop children",
      "exit 143",
    ]);
  });

  test("aborts its signal at once, with a ShuttingDown naming the signal as the reason", () => {
    const f = fakeHost(() => new Promise(() => {}));
    const s = new Shutdown(f.host);
    expect(s.signal.aborted).toBe(false);
    f.deliver("SIGHUP");
    expect(s.signal.aborted).toBe(true);
    expect(s.signal.reason).toBeInstanceOf(ShuttingDown);
    expect(String(s.signal.reason)).toContain("SIGHUP");
  });

  test("a second signal while cleaning up neither skips nor repeats a clean-up, and the first signal's code wins", async () => {
    let release: () => void = () => {};
    const slow = new Promise<void>((r) => (release = r));
    const f = fakeHost();
    const s = new Shutdown(f.host);
    let runs = 0;
    s.onShutdown(async () => {
      runs++;
      await slow;
      f.events.push("slow clean-up done");
    });
    f.deliver("SIGINT");
    await Bun.sleep(5);
    f.deliver("SIGINT");
    f.deliver("SIGTERM");
    expect(f.events).not.toContain("exit 130");
    release();
    expect(await f.exit).toBe(130);
    expect(runs).toBe(1);
    expect(f.events.filter((e) => e.startsWith("exit"))).toEqual(["exit 130"]);
    expect(f.events.indexOf("slow clean-up done")).toBeLessThan(f.events.indexOf("exit 130"));
    expect(f.events.filter((e) => e.includes("already stopping"))).toHaveLength(2);
  });

  test("a failing clean-up is reported and the others still run", async () => {
    const f = fakeHost();
    const s = new Shutdown(f.host);
    s.onShutdown(() => void f.events.push("first registered"));
    s.onShutdown(() => {
      throw new Error("namespace delete refused");
    });
    f.deliver("SIGTERM");
    await f.exit;
    expect(f.events).toContain("log a clean-up failed: namespace delete refused");
    expect(f.events).toContain("first registered");
  });

  test("a clean-up registered while the pass runs still runs", async () => {
    const f = fakeHost();
    const s = new Shutdown(f.host);
    s.onShutdown(() => s.onShutdown(() => void f.events.push("late")));
    f.deliver("SIGTERM");
    await f.exit;
    expect(f.events).toContain("late");
  });

  test("children that cannot be stopped do not keep the clean-ups from running", async () => {
    const f = fakeHost(async () => {
      throw new Error("/proc unreadable");
    });
    const s = new Shutdown(f.host);
    s.onShutdown(() => void f.events.push("clean-up"));
    f.deliver("SIGINT");
    expect(await f.exit).toBe(130);
    expect(f.events).toContain("clean-up");
  });
});

describe("runChild", () => {
  test("returns the exit code and the captured stdout", async () => {
    expect(await runChild(["sh", "-c", "echo out; echo err >&2; exit 3"], { capture: true, quiet: true })).toEqual({
      code: 3,
      stdout: "out\n",
      stderr: "err\n",
    });
  });

  test("a child killed by a signal yields 128 + the signal's number", async () => {
    expect((await runChild(["sh", "-c", "kill -TERM $$"])).code).toBe(143);
  });
});

describe("installShutdown (a real process)", () => {
  test("on a signal the child is stopped and the clean-up runs while the command's own exit(1) is held off; exit 128 + signo", async () => {
    const dir = await mkdtemp(join(tmpdir(), "devctl-signals-unit-"));
    const script = join(dir, "command.ts");
    await Bun.write(
      script,
      `import { installShutdown, runChild } from ${JSON.stringify(join(import.meta.dir, "signals.ts"))};
      const shutdown = installShutdown();
      shutdown.onShutdown(async () => { await Bun.sleep(200); await Bun.write(${JSON.stringify(join(dir, "cleaned"))}, "yes"); });
      const r = await runChild(["sleep", "60"]);
      process.exit(r.code === 0 ? 0 : 1);`,
    );
    const proc = Bun.spawn([process.execPath, "run", script], { stdout: "ignore", stderr: "pipe" });
    try {
      let child: ProcEntry | undefined;
      for (let i = 0; i < 250 && !child; i++) {
        await Bun.sleep(20);
        child = descendants(proc.pid).find((p) => p.ppid === proc.pid);
      }
      expect(child).toBeDefined();
      proc.kill("SIGHUP");
      expect(await proc.exited).toBe(129);
      expect(child && stillRunning(child)).toBe(false);
      expect(await Bun.file(join(dir, "cleaned")).text()).toBe("yes");
      expect(await new Response(proc.stderr).text()).toContain("SIGHUP: stopping what this command started");
    } finally {
      proc.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
    }
  });
});
