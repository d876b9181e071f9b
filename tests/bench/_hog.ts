/**
 * A CPU hog for the busy-machine measurement: one process spinning on one core beside the operator and
 * the control plane, as in the "one busy-loop CPU hog beside both".
 *
 * Properties:
 * - Bounded: the process stops by itself after `seconds`, whatever happens to the bench (killed,
 *   crashed): it checks the clock between short bursts of work, so it overshoots by milliseconds at most.
 * - Stopped by the bench too: `stop()` kills it (SIGKILL) and waits for its exit; every hog still
 *   running when the bench process exits is killed then (an `exit` handler), so none outlives a run
 *   that ends normally or by process.exit.
 * - It is plain Bun (the bench's own executable) running a busy loop: no extra tool needed.
 */

const running = new Set<ReturnType<typeof Bun.spawn>>();
let hooked = false;

export interface Hog {
  pid: number;
  /** Kills the hog (if it still runs) and waits until it is gone. */
  stop(): Promise<void>;
}

/** The hog's program: spin until `seconds` have passed, then exit 0. */
export function hogSource(seconds: number): string {
  return `const end = Date.now() + ${Math.round(seconds * 1000)}; let x = 0; while (Date.now() < end) { for (let i = 0; i < 100000; i++) x = (x + i) | 0; } process.exit(x === 0.5 ? 1 : 0);`;
}

export function startHog(seconds: number): Hog {
  if (!(seconds > 0)) throw new RangeError(`startHog(${seconds}): the bound must be more than 0 s`);
  if (!hooked) {
    hooked = true;
    process.on("exit", () => {
      for (const p of running) p.kill("SIGKILL");
    });
  }
  const proc = Bun.spawn([process.execPath, "-e", hogSource(seconds)], { stdout: "ignore", stderr: "ignore" });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  return {
    pid: proc.pid,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await proc.exited;
      running.delete(proc);
    },
  };
}
