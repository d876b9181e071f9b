/**
 * The cluster CLI's commands about the real node and the pinned kubectl (contract in cli.ts).
 */
import { resolve } from "node:path";
import { DEFAULT_NAMESPACE, OPERATOR_NAME } from "../../src/install/manifests.ts";
import { clusterState } from "./control.ts";
import { kubectlPath } from "./kubectl.ts";
import { importIntoRealNode } from "./nodes/real.ts";
import { hasSchedulingFlags, installSteps } from "./nodes/schedule.ts";
import { paths, REPO_ROOT } from "./state.ts";

const DEVCTL = resolve(REPO_ROOT, "dist/devctl");

function kubeconfigEnv(): Record<string, string | undefined> {
  return { ...process.env, KUBECONFIG: process.env.KUBECONFIG || paths.kubeconfig };
}

/** Runs argv with the terminal's stdin and stderr; its stdout goes to `out` (stdout, or stderr for progress). */
function runInherit(argv: string[], out: "stdout" | "stderr" = "stdout"): number {
  const r = Bun.spawnSync(argv, { env: kubeconfigEnv(), stdin: "inherit", stdout: "pipe", stderr: "inherit" });
  process[out].write(r.stdout.toString());
  return r.exitCode ?? 1;
}

export async function nodeCommand(command: string, args: string[]): Promise<number> {
  switch (command) {
    case "status": {
      const state = await clusterState();
      if (!state) {
        process.stderr.write("the local cluster is not up: run `npm run cluster:up`\n");
        return 1;
      }
      if (!state.node) process.stderr.write(`no real node: ${state.noRealNode ?? "unknown reason"}\n`);
      process.stdout.write(`REAL_NODE=${state.node?.name ?? "none"}\n`);
      return 0;
    }
    case "kubectl":
      return runInherit([kubectlPath(), ...args]);
    case "import": {
      const [archive] = args;
      if (!archive) throw new Error("usage: cli.ts import ARCHIVE");
      const imported = await importIntoRealNode(archive);
      if (imported) process.stdout.write(`${imported}\n`);
      return 0;
    }
    case "install-operator": {
      const [image] = args;
      if (!image) throw new Error("usage: cli.ts install-operator IMAGE");
      const help = Bun.spawnSync([DEVCTL, "operator", "install", "--help"], { stdout: "pipe" }).stdout.toString();
      const steps = installSteps(
        { image, namespace: DEFAULT_NAMESPACE, wait: true, deployment: OPERATOR_NAME },
        hasSchedulingFlags(help),
      );
      for (const step of steps) {
        process.stderr.write(`$ ${step.tool} ${step.args.join(" ")}\n`);
        const code = runInherit([step.tool === "devctl" ? DEVCTL : kubectlPath(), ...step.args], "stderr");
        if (code !== 0) return code;
      }
      process.stdout.write(`OPERATOR_NAMESPACE=${DEFAULT_NAMESPACE}\n`);
      return 0;
    }
    default:
      return 2;
  }
}
