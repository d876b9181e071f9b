/**
 * What the operator's pods are doing, and whether `install --wait` is done, as pure values.
 *
 * Properties:
 * - podState() reads one pod's status into one kind: ready, starting, pending (not scheduled, with the
 *   scheduler's message), pull-failed (ErrImagePull, ImagePullBackOff, ErrImageNeverPull,
 *   InvalidImageName), crash-looping (CrashLoopBackOff, with exit code and restarts) or terminating.
 * - podLine() is the progress line of one pod; the same state always gives the same line.
 * - waitVerdict() decides: leading (the rollout is done and a current pod holds the Lease), failed
 *   (the Deployment's progress deadline, or any pod that cannot pull its image or crash-loops: these
 *   do not heal by waiting), or waiting. Failure messages name the image and what to do next.
 * - holderPod(): a Lease holder identity is `<pod name>` or `<pod name>_<suffix>` (the operator's
 *   identity starts with its pod's name), so the holder is matched to a pod by name, never by guess.
 */
import type { KubeObject } from "../kube/types.ts";
import { OPERATOR_CONTAINER_NAME } from "./deployment.ts";
import type { RolloutState } from "../readiness/deployment.ts";
import { IMAGE_PULL_REASONS } from "../readiness/pods.ts";

interface ContainerStatus {
  name: string;
  image?: string;
  ready?: boolean;
  restartCount?: number;
  state?: {
    waiting?: { reason?: string; message?: string };
    running?: { startedAt?: string };
    terminated?: { exitCode?: number; reason?: string };
  };
  lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
}

export interface PodLike extends KubeObject {
  spec?: { containers?: { name: string; image?: string }[]; nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatus[];
  };
}

export type PodState =
  | { kind: "ready"; pod: string }
  | { kind: "starting"; pod: string; detail: string }
  | { kind: "pending"; pod: string; message: string }
  | { kind: "pull-failed"; pod: string; reason: string; message: string; image: string }
  | { kind: "crash-looping"; pod: string; image: string; restarts: number; exitCode?: number; lastLog?: string }
  | { kind: "terminating"; pod: string };

export function podState(p: PodLike): PodState {
  const pod = p.metadata.name ?? "";
  if (p.metadata.deletionTimestamp) return { kind: "terminating", pod };
  const specImage =
    (p.spec?.containers?.find((c) => c.name === OPERATOR_CONTAINER_NAME) ?? p.spec?.containers?.[0])?.image ?? "";
  const statuses = p.status?.containerStatuses ?? [];
  const c = statuses.find((s) => s.name === OPERATOR_CONTAINER_NAME) ?? statuses[0];
  const waiting = c?.state?.waiting;
  const image = specImage || c?.image || "";
  if (waiting?.reason && (IMAGE_PULL_REASONS as readonly string[]).includes(waiting.reason))
    return { kind: "pull-failed", pod, reason: waiting.reason, message: waiting.message ?? "", image };
  if (waiting?.reason === "CrashLoopBackOff") {
    const exitCode = c?.lastState?.terminated?.exitCode;
    return {
      kind: "crash-looping",
      pod,
      image,
      restarts: c?.restartCount ?? 0,
      ...(exitCode !== undefined ? { exitCode } : {}),
    };
  }
  if (waiting?.reason) return { kind: "starting", pod, detail: withMessage(waiting.reason, waiting.message) };
  if (c?.state?.running)
    return c.ready ? { kind: "ready", pod } : { kind: "starting", pod, detail: "Running, not ready yet" };
  if (c?.state?.terminated)
    return { kind: "starting", pod, detail: `container exited (${exitOf(c.state.terminated)})` };
  const unscheduled = p.status?.conditions?.find((x) => x.type === "PodScheduled" && x.status === "False");
  if (unscheduled)
    return { kind: "pending", pod, message: unscheduled.message || unscheduled.reason || "not scheduled yet" };
  return { kind: "starting", pod, detail: p.status?.phase ?? "Pending" };
}

const withMessage = (reason: string, message?: string) => (message ? `${reason}: ${message}` : reason);
const exitOf = (t: { exitCode?: number; reason?: string }) =>
  `exit code ${t.exitCode ?? "unknown"}${t.reason ? `, ${t.reason}` : ""}`;
const times = (n: number) => `${n} time${n === 1 ? "" : "s"}`;

export function podLine(s: PodState): string {
  switch (s.kind) {
    case "ready":
      return `pod ${s.pod}: Ready`;
    case "starting":
      return `pod ${s.pod}: ${s.detail}`;
    case "pending":
      return `pod ${s.pod}: Pending: ${s.message}`;
    case "pull-failed":
      return `pod ${s.pod}: ${withMessage(s.reason, s.message)}`;
    case "crash-looping":
      return (
        `pod ${s.pod}: CrashLoopBackOff (restarted ${times(s.restarts)}` +
        `${s.exitCode !== undefined ? `, last exit code ${s.exitCode}` : ""})` +
        `${s.lastLog ? `, last log line: ${s.lastLog}` : ""}`
      );
    case "terminating":
      return `pod ${s.pod}: Terminating`;
  }
}

/** The pod whose name the Lease holder identity starts with, if any. */
export function holderPod(holder: string | undefined, pods: readonly string[]): string | undefined {
  if (!holder) return undefined;
  return pods.find((p) => holder === p || holder.startsWith(`${p}_`));
}

export type WaitVerdict =
  | { kind: "leading"; pod: string; message: string }
  | { kind: "waiting"; message: string }
  | { kind: "failed"; message: string };

export interface WaitInput {
  namespace: string;
  rollout: RolloutState;
  pods: readonly PodState[];
  /** holderIdentity of the leader-election Lease; undefined when there is no Lease or no holder. */
  holder: string | undefined;
}

export function waitVerdict(w: WaitInput): WaitVerdict {
  const live = w.pods.filter((p) => p.kind !== "terminating").map((p) => p.pod);
  const leader = holderPod(w.holder, live);
  if (w.rollout.kind === "complete" && leader)
    return { kind: "leading", pod: leader, message: `${w.rollout.message}; pod ${leader} holds the Lease` };
  const pull = w.pods.find((p) => p.kind === "pull-failed");
  if (pull) return { kind: "failed", message: pullFailure(pull, w.namespace) };
  const crash = w.pods.find((p) => p.kind === "crash-looping");
  if (crash) return { kind: "failed", message: crashFailure(crash, w.namespace) };
  if (w.rollout.kind === "failed") return { kind: "failed", message: w.rollout.message };
  if (w.rollout.kind === "progressing") return { kind: "waiting", message: w.rollout.message };
  return {
    kind: "waiting",
    message: `${w.rollout.message}; no installed pod holds the Lease yet${w.holder ? ` (held by ${w.holder})` : ""}`,
  };
}

function pullFailure(p: Extract<PodState, { kind: "pull-failed" }>, namespace: string): string {
  const never = p.reason === "ErrImageNeverPull" ? " (image pull policy Never: it must already be on the node)" : "";
  return (
    `the operator image ${p.image} cannot be pulled: ${podLine(p)}${never}. ` +
    "Build the image with `npm run image`, load it into the cluster (kind load image-archive, ctr images import, " +
    `or push it to a registry the nodes can reach), then install again with --image <reference>` +
    `; the pod's events: kubectl -n ${namespace} describe pod ${p.pod}`
  );
}

function crashFailure(p: Extract<PodState, { kind: "crash-looping" }>, namespace: string): string {
  return (
    `the operator container of image ${p.image} keeps crashing: ${podLine(p)}. ` +
    `Read its log with \`kubectl -n ${namespace} logs ${p.pod} --previous\`; if the image is not this devctl's ` +
    "(devctl version), build it with `npm run image`, load it into the cluster and install again with --image <reference>"
  );
}
