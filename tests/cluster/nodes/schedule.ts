/**
 * How `devctl operator install` puts the operator onto the real node: the node's label as node
 * selector, a toleration of exactly its taint (never a blanket one), pull policy Never (the image is
 * imported, never pulled).
 *
 * Contract:
 * - installArgs(image, namespace, wait): install's command line with the scheduling flags, when this
 *   devctl has them (issue #10 item 3); else the steps that give the same Deployment: a plain install,
 *   a `kubectl patch` of the same fields (server-side apply leaves another manager's fields alone),
 *   then the waiting install.
 */
import { NODE_LABEL, NODE_TAINT } from "./real-config.ts";

export const SCHEDULING_FLAGS = [
  "--node-selector",
  `${NODE_LABEL.key}=${NODE_LABEL.value}`,
  "--toleration",
  `${NODE_TAINT.key}=${NODE_TAINT.value}:${NODE_TAINT.effect}`,
  "--image-pull-policy",
  "Never",
];

export const SCHEDULING_PATCH = JSON.stringify({
  spec: {
    template: {
      spec: {
        nodeSelector: { [NODE_LABEL.key]: NODE_LABEL.value },
        tolerations: [{ ...NODE_TAINT, operator: "Equal" }],
        containers: [{ name: "operator", imagePullPolicy: "Never" }],
      },
    },
  },
});

export type Step = { tool: "devctl" | "kubectl"; args: string[] };

export function hasSchedulingFlags(installHelp: string): boolean {
  return installHelp.includes("--node-selector") && installHelp.includes("--image-pull-policy");
}

export function installSteps(
  o: { image: string; namespace: string; wait: boolean; extra?: string[]; deployment: string },
  withFlags: boolean,
): Step[] {
  const base = ["operator", "install", "-n", o.namespace, "--image", o.image, ...(o.extra ?? [])];
  const wait = o.wait ? ["--wait"] : [];
  if (withFlags) return [{ tool: "devctl", args: [...base, ...SCHEDULING_FLAGS, ...wait] }];
  return [
    { tool: "devctl", args: base },
    { tool: "kubectl", args: ["-n", o.namespace, "patch", "deployment", o.deployment, "-p", SCHEDULING_PATCH] },
    ...(o.wait ? [{ tool: "devctl" as const, args: [...base, ...wait] }] : []),
  ];
}
