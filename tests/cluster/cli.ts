/**
 * `bun run tests/cluster/cli.ts up|down|status|kubectl|import|install-operator` (npm run cluster:up,
 * cluster:down, kubectl).
 *
 * Contract:
 * - up: progress on stderr; on success the LAST line of stdout is `KUBECONFIG=<absolute path>`.
 *   Exits non-zero on failure after stopping what it started (the message names the component and
 *   shows the tail of its log). Ctrl-C during `up` stops what was started.
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
import { down, type Log, stopRecorded, up } from "./lifecycle.ts";
import { nodeCommand } from "./node-cli.ts";
import { readState, removeState } from "./state.ts";

const started = Date.now();
const log: Log = (line) => {
  const s = ((Date.now() - started) / 1000).toFixed(1).padStart(6);
  process.stderr.write(`[cluster ${s}s] ${line}\n`);
};

/** Set once Ctrl-C/TERM arrives during `up`; from then on only the interrupt path reports and exits. */
let interrupted: Promise<never> | undefined;
const onInterrupt = () => {
  interrupted ??= interruptedUp();
};

async function interruptedUp(): Promise<never> {
  log("interrupted: stopping what was started");
  const state = await readState();
  if (state && !state.ready) {
    await stopRecorded(state).catch((err) => log(String(err)));
    await removeState();
  }
  process.exit(130);
}

async function main(command: string | undefined): Promise<number> {
  switch (command) {
    case "up": {
      process.on("SIGINT", onInterrupt);
      process.on("SIGTERM", onInterrupt);
      const kubeconfig = await up(log);
      if (interrupted) return interrupted;
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
  async (err: unknown) => {
    if (interrupted) return interrupted;
    process.stderr.write(`cluster ${process.argv[2]}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
