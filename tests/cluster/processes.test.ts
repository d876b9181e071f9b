import { expect, test } from "bun:test";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts, isRunning, startDetached, stopProcesses, waitUntil } from "./processes.ts";

async function withLog<T>(fn: (log: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "devctl-proc-"));
  try {
    return await fn(join(dir, "out.log"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test("a started process is recognised by its binary, and a PID running another binary is not ours", async () => {
  await withLog(async (log) => {
    const argv = ["/bin/sleep", "30"];
    const pid = await startDetached(argv, log);
    expect(isRunning(pid, "/bin/sleep")).toBe(true);
    expect(isRunning(pid, "/usr/bin/some-other-binary")).toBe(false);
    expect(await stopProcesses([{ pid, argv }])).toEqual([]);
    expect(isRunning(pid, "/bin/sleep")).toBe(false);
  });
});

test("a process that ignores TERM is killed after the grace period", async () => {
  await withLog(async (log) => {
    const argv = ["/bin/sh", "-c", "trap '' TERM; echo trapped; while :; do sleep 0.1; done"];
    const pid = await startDetached(argv, log);
    await waitUntil(async () => (await Bun.file(log).text()).includes("trapped"), 5_000, 10);
    const started = Date.now();
    expect(await stopProcesses([{ pid, argv }], 300)).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});

test("a frozen (SIGSTOPped) process still stops on TERM", async () => {
  await withLog(async (log) => {
    const argv = ["/bin/sleep", "30"];
    const pid = await startDetached(argv, log);
    process.kill(pid, "SIGSTOP");
    const started = Date.now();
    expect(await stopProcesses([{ pid, argv }], 5_000)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

test("free ports are distinct, named, and bindable on 127.0.0.1", () => {
  const ports = freePorts(["a", "b", "c"] as const);
  expect(new Set(Object.values(ports)).size).toBe(3);
  const l = Bun.listen({ hostname: "127.0.0.1", port: ports.a, socket: { data() {} } });
  expect(l.port).toBe(ports.a);
  l.stop(true);
});
