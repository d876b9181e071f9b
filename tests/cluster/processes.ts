/**
 * Processes of the test cluster, handled by PID only (never by name).
 *
 * Contract:
 * - startDetached: the child gets its own session (setsid) and writes stdout+stderr to a log file
 *   (appended); it outlives the caller and does not get the caller's terminal signals. Resolves with
 *   the PID once the binary runs (exec done), rejects if it never does. With `netns` (a path under
 *   /run/netns) it runs inside that network namespace (nsenter --net; same PID).
 * - isRunning(pid, argv0): true only if that PID exists, is not a zombie and still runs argv0,
 *   so a PID the kernel handed to someone else is never mistaken for ours (Linux /proc).
 * - stopProcesses: TERM (then CONT, so a frozen process can act on it), up to `graceMs` to exit,
 *   then KILL; resolves to the PIDs still running afterwards (empty on success).
 * - freePorts(names): one distinct port per name, given out by the kernel on 127.0.0.1 (all held at
 *   once, released before returning).
 * - run: a command to completion; rejects with its exit code and the tail of its output.
 */
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";

export interface Proc {
  pid: number;
  argv: string[];
}

export async function startDetached(argv: string[], logFile: string, netns?: string): Promise<number> {
  const fd = openSync(logFile, "a");
  let pid: number;
  try {
    // nsenter execs argv in the same process, so the PID and argv[0] are argv's from the exec on.
    const spawned = netns ? ["nsenter", `--net=${netns}`, "--", ...argv] : argv;
    const child = Bun.spawn(spawned, { detached: true, stdin: "ignore", stdout: fd, stderr: fd });
    child.unref();
    pid = child.pid;
  } finally {
    closeSync(fd);
  }
  // Between fork and exec the child still shows the caller's command line: wait for the exec, so
  // isRunning() (and with it every later stop) recognises the process from its first moment.
  const argv0 = argv[0] ?? "";
  await waitUntil(() => isRunning(pid, argv0) || !existsSync(`/proc/${pid}`), 5_000, 5).catch(() => undefined);
  if (!isRunning(pid, argv0)) throw new Error(`${argv0} did not start (pid ${pid}); see ${logFile}`);
  return pid;
}

export function isRunning(pid: number, argv0: string): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return false;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return cmdline[0] === argv0;
  } catch {
    return false;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
}

export async function stopProcesses(procs: Proc[], graceMs = 10_000): Promise<number[]> {
  const running = () => procs.filter((p) => isRunning(p.pid, p.argv[0] ?? ""));
  for (const p of running()) {
    signal(p.pid, "SIGTERM");
    signal(p.pid, "SIGCONT");
  }
  await waitUntil(() => running().length === 0, graceMs, 50).catch(() => undefined);
  for (const p of running()) signal(p.pid, "SIGKILL");
  await waitUntil(() => running().length === 0, 5_000, 50).catch(() => undefined);
  return running().map((p) => p.pid);
}

export function freePorts<K extends string>(names: readonly K[]): Record<K, number> {
  const listeners = names.map(() => Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } }));
  const ports = Object.fromEntries(names.map((name, i) => [name, listeners[i]?.port ?? 0])) as Record<K, number>;
  for (const l of listeners) l.stop(true);
  return ports;
}

/** Polls `check` every `intervalMs` until it returns true; rejects after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() >= deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)}s`);
    await Bun.sleep(intervalMs);
  }
}

export async function run(
  argv: string[],
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  const child = Bun.spawn(argv, { cwd: opts.cwd, env: opts.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) {
    throw new Error(`\`${argv.join(" ")}\` failed (exit ${code}):\n${tail(`${out}${err}`, 20)}`);
  }
  return out;
}

export function tail(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

/** The last `lines` lines of a log file, or a note that it is missing. */
export async function tailFile(file: string, lines = 40): Promise<string> {
  const f = Bun.file(file);
  if (!(await f.exists())) return `(no log at ${file})`;
  const size = f.size;
  const text = await f.slice(Math.max(0, size - 64 * 1024)).text();
  return tail(text, lines);
}
