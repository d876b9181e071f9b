/**
 * Stopping a long-running command on a signal. `npm test`, `npm start`, `npm run bench`, `npm run chaos` and
 * `cluster:up` stop what they started on SIGINT (Ctrl-C), SIGTERM (`timeout`, a CI cancel) and SIGHUP (a closed
 * terminal), and exit 128 + the signal's number, as a shell reports a command the signal killed.
 *
 * Guarantees of a Shutdown (one per process: installShutdown()):
 * - Once: the first of the three signals starts the one pass of clean-ups and aborts `signal`; a later one is
 *   only reported, so a second Ctrl-C never cuts a clean-up short (SIGKILL remains for that).
 * - In order: (1) the processes this one started that still run (descendants.ts: its descendants in its own
 *   session) get SIGTERM and GRACE_MS to exit, then SIGKILL — a child with clean-ups of its own, such as
 *   `cluster:up`, runs them meanwhile; (2) the clean-ups given to onShutdown() run, the last registered first,
 *   each awaited; one that fails is reported and the next still runs; (3) whatever was started meanwhile is
 *   stopped the same way; (4) exit 128 + signo.
 * - Nothing else ends the process first: once stopping, process.exit() throws ShuttingDown, errors escaping the
 *   command's own flow are ignored (that flow fails as its children and cluster go away), and runChild() refuses
 *   to start a child. Clean-ups start theirs with Bun.spawn.
 */
import { constants } from "node:os";
import { stopDescendants } from "./descendants.ts";
import { messageOf } from "../kube/errors.ts";

export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** How long the processes this one started get to stop after SIGTERM: an operator's default drain (30 s) and some. */
export const GRACE_MS = 40_000;

/** 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export function exitCodeFor(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/**
 * The reason `signal` aborts with, and what process.exit() and runChild() throw once the shutdown began: only the
 * shutdown ends the process. Errors of this class that escape the command's flow are not reported.
 */
export class ShuttingDown extends Error {
  override name = "ShuttingDown";
}

export type CleanUp = () => unknown;

/** What a Shutdown needs from its process; tests pass fakes. */
export interface ShutdownHost {
  /** Calls `handler` on every delivery of `signal`. */
  onSignal(signal: StopSignal, handler: () => void): void;
  /** Stops the processes this one started (step 1 and 3). */
  stopChildren(): Promise<unknown>;
  exit(code: number): void;
  log(line: string): void;
}

export class Shutdown {
  readonly #host: ShutdownHost;
  /** Aborted by the first signal, with a ShuttingDown naming it as its reason; never reset. */
  readonly #stop = new AbortController();
  /** The first signal; set together with #pass. */
  #first: StopSignal | undefined;
  /** Clean-ups not run yet, in the order registered; the pass takes them from the end. */
  readonly #cleanUps: CleanUp[] = [];
  /** The one pass, from the first signal to the exit; undefined until then. */
  #pass: Promise<void> | undefined;

  constructor(host: ShutdownHost) {
    this.#host = host;
    for (const s of STOP_SIGNALS) host.onSignal(s, () => void this.stop(s));
  }

  /** Aborted once a signal arrived: the command's flow stops starting things. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** Runs `fn` on a signal, before the clean-ups registered earlier; one registered while the pass runs still runs. */
  onShutdown(fn: CleanUp): void {
    this.#cleanUps.push(fn);
  }

  /** What a signal does (the handlers call it): the pass, started once; later calls return the same pass. */
  stop(signal: StopSignal): Promise<void> {
    if (this.#pass) {
      this.#host.log(`${signal}: already stopping on ${this.#first}; the clean-up continues`);
      return this.#pass;
    }
    this.#host.log(`${signal}: stopping what this command started`);
    this.#first = signal;
    this.#stop.abort(new ShuttingDown(`stopping on ${signal}`));
    this.#pass = this.#run(signal);
    return this.#pass;
  }

  async #run(signal: StopSignal): Promise<void> {
    await this.#host.stopChildren().catch((e) => this.#host.log(`stopping child processes: ${messageOf(e)}`));
    for (let fn = this.#cleanUps.pop(); fn; fn = this.#cleanUps.pop()) {
      try {
        await fn();
      } catch (e) {
        this.#host.log(`a clean-up failed: ${messageOf(e)}`);
      }
    }
    await this.#host.stopChildren().catch((e) => this.#host.log(`stopping child processes: ${messageOf(e)}`));
    this.#host.exit(exitCodeFor(signal));
  }
}

let installed: Shutdown | undefined;

/** This process's Shutdown, its signal handlers installed on the first call. `log` gets its progress lines. */
export function installShutdown(log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Shutdown {
  if (installed) return installed;
  const exit = process.exit.bind(process);
  const shutdown = new Shutdown({
    onSignal: (signal, handler) => process.on(signal, handler),
    stopChildren: () => stopDescendants(process.pid, GRACE_MS),
    exit,
    log,
  });
  shutdown.signal.addEventListener(
    "abort",
    () => {
      process.exit = ((code?: number) => {
        throw new ShuttingDown(`exit(${code ?? ""}) while stopping on a signal`);
      }) as typeof process.exit;
      const ignore = (e: unknown) => {
        if (!(e instanceof ShuttingDown)) {
          log(`(while stopping) ${messageOf(e)}`);
        }
      };
      process.on("uncaughtException", ignore);
      process.on("unhandledRejection", ignore);
    },
    { once: true },
  );
  installed = shutdown;
  return shutdown;
}

export interface ChildResult {
  code: number;
  /** What it wrote to stdout, when captured ("" otherwise). */
  stdout: string;
  /** What it wrote to stderr, when kept `quiet` ("" otherwise). */
  stderr: string;
}

/**
 * Runs `cmd` to its end without blocking the signal handlers (Bun.spawnSync would hold them until it returns).
 * stdout is inherited, or captured with `capture` (and then also echoed with `echo`); stderr is inherited, or
 * captured with `quiet`. Refuses (ShuttingDown) once the shutdown began. A child killed by a signal yields 128 + signo.
 */
export async function runChild(
  cmd: string[],
  opts: {
    cwd?: string;
    env?: Record<string, string | undefined>;
    capture?: boolean;
    echo?: boolean;
    quiet?: boolean;
  } = {},
): Promise<ChildResult> {
  if (installed?.signal.aborted) throw new ShuttingDown(`not starting ${cmd.join(" ")}: stopping on a signal`);
  const child = Bun.spawn(cmd, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdin: "ignore",
    stdout: opts.capture ? "pipe" : "inherit",
    stderr: opts.quiet ? "pipe" : "inherit",
  });
  const read = async (stream: unknown, echo: boolean): Promise<string> => {
    if (!(stream instanceof ReadableStream)) return "";
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of stream as ReadableStream<Uint8Array>) {
      const s = decoder.decode(chunk, { stream: true });
      text += s;
      if (echo) process.stdout.write(s);
    }
    return text;
  };
  const [stdout, stderr] = await Promise.all([read(child.stdout, opts.echo === true), read(child.stderr, false)]);
  return { code: await child.exited, stdout, stderr };
}
