/**
 * `bun run tests/cluster/cli.ts up|down|status|kubectl|import|install-operator` (npm run cluster:up,
 * cluster:down, kubectl).
 *
 * Contract:
 * - up: progress on stderr; on success the LAST line of stdout is `KUBECONFIG=<absolute path>`.
 *   Exits non-zero on failure after stopping what it started (the message names the component and
 *   shows the tail of its log). SIGINT, SIGTERM or SIGHUP during `up` stops what it started and exits 128 + signo
 *   (src/build/signals.ts); a cluster it only reused is left running.
 * - down: stops the recorded processes, removes .cluster/ (keeps the binary cache); exits non-zero
 *   if a process could not be stopped.
 * - status: `REAL_NODE=<node name>` when the running cluster has its real node, else `REAL_NODE=none`
 *   (the reason on stderr); exits 1 when no cluster is up.
 * - kubectl ARGS…: the pinned kubectl v1.36.3 with the local cluster's kubeconfig (unless KUBECONFIG
 *   is set); its exit code.
 * - import ARCHIVE: `ctr images import` into the real node; prints what was imported, or nothing.
 * - install-operator IMAGE: `devctl operator install --image IMAGE --wait` onto the real node
 *   (nodes/schedule.ts); the last stdout line is `OPERATOR_NAMESPACE=<namespace>`.
 * Scripts under src/build use these instead of importing tests/ (src/layering.test.ts).
 */
import { installShutdown, type Shutdown } from "../../src/build/signals.ts";
import { messageOf } from "../../src/kube/errors.ts";
import { down, type Log, stopRecorded, up } from "./lifecycle.ts";
import { nodeCommand } from "./node-cli.ts";
import { readState, removeState } from "./state.ts";

const started = Date.now();
const log: Log = (line) => {
  const s = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[cluster ${s}s] ${line}\n`);
};

/** What `up` does on SIGINT, SIGTERM or SIGHUP: up() gives up at its next step, and what it started is stopped. */
function stopUpOnSignal(shutdown: Shutdown, upDone: Promise<string>): void {
  shutdown.onShutdown(async () => {
    log("interrupted: stopping what was started");
    await upDone.catch(() => undefined); // aborted, up() stops what it started itself (failUp)
    const state = await readState(); // and if it had not yet recorded it, or could not stop it:
    if (state && !state.ready) {
      await stopRecorded(state, log);
      await removeState();
    }
  });
}

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case "up": {
      const shutdown = installShutdown(log);
      const upDone = up(log, shutdown.signal);
      stopUpOnSignal(shutdown, upDone);
      const kubeconfig = await upDone;
      process.stdout.write(`KUBECONFIG=${kubeconfig}\n`);
      return 0;
    }
    case "down":
      await down(log);
      log(`down in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      return 0;
    case "status":
    case "kubectl":
    case "import":
    case "install-operator":
      return nodeCommand(command, process.argv.slice(3));
    default:
      process.stderr.write("usage: bun run tests/cluster/cli.ts up|down|status|kubectl|import|install-operator\n");
      return 2;
  }
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cluster ${process.argv[2]}: ${messageOf(err)}\n`);
    process.exit(1);
  },
);
