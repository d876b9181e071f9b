/**
 * Which nodes the local cluster gets on this machine.
 *
 * Contract:
 * - planNodes() installs what the cluster needs (prereqs.ts) and rejects, naming each missing tool,
 *   when the control plane itself cannot run.
 * - The real node is planned where realNodeSupport() allows and its tools are present or installable;
 *   else the plan is KWOK's fake node alone, with the reason (also when another cluster's kubelet runs
 *   on this machine: REAL_NODE_OWNER names it). On CI (CI=true) a machine that could
 *   not run the real node is an error unless DEVCTL_REAL_NODE=0 says so explicitly.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REAL_NODE_OWNER } from "./nodes/real.ts";
import { isRunning } from "./processes.ts";
import { paths } from "./state.ts";
import { checkGo, describeMissing, ensurePrerequisites, onCi, REAL_NODE_ENV, realNodeSupport } from "./prereqs.ts";

export type NodePlan = { kind: "with-real-node" } | { kind: "kwok-only"; reason: string };

const GO_MOD = join(import.meta.dir, "go", "kube", "go.mod");

/** The cluster dir of another cluster whose kubelet runs here, per the machine-wide owner file. */
function otherRealNode(): string | undefined {
  if (!existsSync(REAL_NODE_OWNER)) return undefined;
  try {
    const owner = JSON.parse(readFileSync(REAL_NODE_OWNER, "utf8")) as { dir: string; pid: number; argv0: string };
    return owner.dir !== paths.dir && isRunning(owner.pid, owner.argv0) ? owner.dir : undefined;
  } catch {
    return undefined;
  }
}

export async function planNodes(log: (line: string) => void): Promise<NodePlan> {
  const goProblem = await checkGo(GO_MOD);
  if (goProblem) throw new Error(goProblem);
  const absent = await ensurePrerequisites(["cluster", "suites"], log);
  if (absent.length > 0)
    throw new Error(`the local cluster needs tools this machine lacks:\n${describeMissing(absent)}`);
  const support = realNodeSupport();
  let plan: NodePlan;
  if (support.kind === "unsupported") {
    plan = { kind: "kwok-only", reason: support.reason };
  } else if (otherRealNode()) {
    plan = {
      kind: "kwok-only",
      reason: `the real node of ${otherRealNode()} runs on this machine (a kubelet uses host-wide paths: one per machine)`,
    };
  } else {
    const missingForNode = await ensurePrerequisites(["realNode", "image"], log);
    plan =
      missingForNode.length === 0
        ? { kind: "with-real-node" }
        : { kind: "kwok-only", reason: `missing tools:\n${describeMissing(missingForNode)}` };
  }
  if (plan.kind === "kwok-only" && onCi() && process.env[REAL_NODE_ENV] !== "0") {
    throw new Error(
      `CI=true but this machine cannot run the real node (${plan.reason}); set ${REAL_NODE_ENV}=0 to run without it on purpose`,
    );
  }
  return plan;
}
