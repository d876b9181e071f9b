/**
 * Why a pod cannot run, read from its status the way `kubectl describe pod` shows it. Pure.
 *
 * Properties:
 * - podFailure() reports a container (init containers first) waiting for one of POD_FAILURE_REASONS, or a pod
 *   the scheduler cannot place (PodScheduled=False, reason Unschedulable, with the scheduler's message);
 *   anything else (ContainerCreating, PodInitializing, running) is not a failure.
 * - ErrImagePull and ImagePullBackOff are one failure (ImagePullBackOff): the kubelet alternates between them.
 * - A container that was restarted and is down again (terminated, waiting for its back-off to end) is in a crash loop
 *   (CrashLoopBackOff) before the kubelet says so, and stays in it while it has run for less than RESTART_SETTLE_MS
 *   since its restart (given `now`): a real kubelet shows a container that exits at once as waiting, terminated or
 *   just started, in turns, and only the first is named CrashLoopBackOff.
 * - Reads any JSON defensively; a missing field is absent.
 */
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { PODS } from "../kube/resources.ts";
import { array, record } from "./_json.ts";

export const POD_RESOURCE: ResourceType = PODS;

/** Waiting reasons that say the image cannot be pulled (install --wait fails on them as the WebApp status does). */
export const IMAGE_PULL_REASONS = [
  "ErrImagePull",
  "ImagePullBackOff",
  "ErrImageNeverPull",
  "InvalidImageName",
] as const;

/**
 * Waiting reasons that do not resolve without someone acting (the kubelet retries them with back-off), the scheduler's
 * Unschedulable, and ProbeFailed: a running container that a readiness or startup probe keeps out of service.
 */
export const POD_FAILURE_REASONS = [
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CrashLoopBackOff",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
  "Unschedulable",
  "ProbeFailed",
] as const;
export type PodFailureReason = (typeof POD_FAILURE_REASONS)[number];

/** `reason` is one of POD_FAILURE_REASONS (a condition's reason, a container's waiting reason). */
export const isPodFailureReason = (reason: string): reason is PodFailureReason =>
  (POD_FAILURE_REASONS as readonly string[]).includes(reason);

export interface PodFailure {
  pod: string;
  reason: PodFailureReason;
  /** The kubelet's or the scheduler's own words, with the container's name. */
  message: string;
}

const ALIASES: Record<string, PodFailureReason> = { ErrImagePull: "ImagePullBackOff" };
/** How long a restarted container must run before it no longer counts as crash looping (the kubelet's first back-off). */
export const RESTART_SETTLE_MS = 10_000;

export function podFailure(pod: KubeObject, now?: number): PodFailure | undefined {
  const name = pod.metadata.name ?? "";
  const status = record(pod.status);
  const containers = [...array(status.initContainerStatuses), ...array(status.containerStatuses)].map(record);
  for (const c of containers) {
    const waiting = record(record(c.state).waiting);
    const raw = typeof waiting.reason === "string" ? waiting.reason : "";
    const reason = ALIASES[raw] ?? (isPodFailureReason(raw) ? raw : undefined);
    if (!reason) continue;
    const detail = typeof waiting.message === "string" && waiting.message ? `: ${waiting.message}` : "";
    return { pod: name, reason, message: `container ${String(c.name)} ${raw}${detail}` };
  }
  for (const c of containers) {
    const exited = crashLooping(c, now);
    if (exited) return { pod: name, reason: "CrashLoopBackOff", message: `container ${String(c.name)} ${exited}` };
  }
  const scheduled = array(status.conditions)
    .map(record)
    .find((c) => c.type === "PodScheduled");
  if (scheduled?.status === "False" && scheduled.reason === "Unschedulable") {
    const message = typeof scheduled.message === "string" ? scheduled.message : "";
    return { pod: name, reason: "Unschedulable", message: `cannot be scheduled: ${message}` };
  }
  return undefined;
}

/** "exited with code 2 (Error) after 3 restarts" for a restarted container that is down again or just started. */
function crashLooping(c: Record<string, unknown>, now: number | undefined): string | undefined {
  const restarts = typeof c.restartCount === "number" ? c.restartCount : 0;
  if (restarts < 1) return undefined;
  const state = record(c.state);
  const down = state.terminated !== undefined;
  const startedAt = Date.parse(String(record(state.running).startedAt));
  const justStarted = state.running !== undefined && now !== undefined && now - startedAt < RESTART_SETTLE_MS;
  if (!down && !justStarted) return undefined;
  const last = record(down ? state.terminated : record(c.lastState).terminated);
  const code = typeof last.exitCode === "number" ? ` with code ${last.exitCode}` : "";
  const why = typeof last.reason === "string" && last.reason ? ` (${last.reason})` : "";
  return `exited${code}${why} after ${restarts} restart${restarts === 1 ? "" : "s"}`;
}

/** What to do about each failure, for the WebApp's message. */
export const POD_FAILURE_HINT: Record<PodFailureReason, string> = {
  ImagePullBackOff: "check spec.image (name, tag) and that the nodes can pull it",
  InvalidImageName: "fix spec.image: it is not a valid image reference",
  ErrImageNeverPull:
    "the image is not on the node and its pull policy is Never: import it onto the node, " +
    "or set spec.imagePullPolicy to IfNotPresent so it is pulled",
  CrashLoopBackOff: "the container keeps exiting: read its logs (kubectl logs --previous)",
  CreateContainerConfigError: "the container's configuration is broken (a missing Secret or ConfigMap?)",
  CreateContainerError: "the runtime could not create the container: see kubectl describe pod",
  RunContainerError: "the runtime could not start the container: see kubectl describe pod",
  Unschedulable: "no node can take the pod: add capacity or lower spec.replicas",
  ProbeFailed: "check spec.healthCheck (or the probes) against what the app serves, and the app's logs (kubectl logs)",
};

/**
 * What to do about a failure: its reason's hint, or a closer one where the kubelet's words say more. A container
 * that must run as non-root (spec.podSecurity: restricted) from an image whose user is root, or is a name the
 * kubelet cannot check ("image will run as root", "image has non-numeric user"), is not a missing Secret.
 */
export function podFailureHint(reason: PodFailureReason, message: string): string {
  if (reason === "CreateContainerConfigError" && message.includes("runAsNonRoot")) return NON_ROOT_HINT;
  return POD_FAILURE_HINT[reason];
}

const NON_ROOT_HINT =
  "the pod must run as a non-root user (spec.podSecurity: restricted sets runAsNonRoot): use an image whose USER " +
  "is a numeric id other than 0 (e.g. USER 65532), as the kubelet cannot check a user name";

/**
 * How long a container must have run before a failure of its probe counts (a start takes a moment: an app that is not
 * listening yet fails its first probes). Measured on the kubelet's clock alone: from the container's startedAt to the
 * time of the kubelet's Unhealthy event, both written by the kubelet (probeFailure). The operator's clock, which
 * may be skewed against the node's, is never compared with them: a node whose clock is ahead no longer delays the
 * diagnosis by the skew, one that is behind no longer makes it early.
 */
export const PROBE_SETTLE_MS = 10_000;

/** A container that runs unready behind a probe: its name, and when it started on the kubelet's clock (NaN: unknown). */
export interface UnreadyContainer {
  name: string;
  startedAt: number;
}

/**
 * The first container of a pod that runs, has a readiness or startup probe and is not ready: the probe keeps it
 * out of service, or it is starting. Whether the probe fails is for probeFailure to say, from the kubelet's events.
 */
export function unreadyContainer(pod: KubeObject): UnreadyContainer | undefined {
  const probed = new Set(
    array(record(pod.spec).containers)
      .map(record)
      .filter((c) => c.readinessProbe !== undefined || c.startupProbe !== undefined)
      .map((c) => String(c.name)),
  );
  for (const c of array(record(pod.status).containerStatuses).map(record)) {
    const running = record(c.state).running;
    if (c.ready === true || !probed.has(String(c.name)) || running === undefined) continue;
    return { name: String(c.name), startedAt: Date.parse(String(record(running).startedAt)) };
  }
  return undefined;
}

/** A readiness or startup probe's event: the probes that keep a container unready. */
const gatesReady = (e: Record<string, unknown>) => /^(Readiness|Startup) probe/.test(String(e.message));

/**
 * ProbeFailed for `container` of `pod` from the kubelet's newest Unhealthy event about it ("Readiness probe failed:
 * HTTP probe failed with statuscode: 404"), or undefined when there is none (the probe has not failed yet). Only an
 * event the kubelet reported PROBE_SETTLE_MS or more after the container started counts (both times the kubelet's):
 * a failure while it was starting, or of an earlier run of the container (before a restart), does not. The
 * container is unready, so a readiness or startup probe's event, the probes that keep it so, goes before a newer
 * liveness one (a health check on one path fails both, and which the kubelet reported last is chance).
 */
export function probeFailure(
  pod: string,
  container: UnreadyContainer,
  events: readonly KubeObject[],
): PodFailure | undefined {
  // An unknown start (no startedAt) does not hold a failure back.
  const settled = Number.isNaN(container.startedAt) ? Number.NEGATIVE_INFINITY : container.startedAt + PROBE_SETTLE_MS;
  const newest = events
    .map((e) => e as unknown as Record<string, unknown>)
    .filter((e) => {
      const about = record(e.involvedObject);
      return (
        e.reason === "Unhealthy" &&
        about.name === pod &&
        String(about.fieldPath).endsWith(`{${container.name}}`) &&
        reportedAt(e) >= settled
      );
    })
    .sort((a, b) => Number(gatesReady(b)) - Number(gatesReady(a)) || reportedAt(b) - reportedAt(a))[0];
  if (!newest || typeof newest.message !== "string") return undefined;
  return { pod, reason: "ProbeFailed", message: `container ${container.name}: ${newest.message.trim()}` };
}

/**
 * When the reporter (the kubelet) last saw what an event says, on its clock: the series' last observation, else
 * lastTimestamp (core/v1 events), else eventTime; the API server's creationTimestamp only when none is there.
 */
function reportedAt(e: Record<string, unknown>): number {
  const at =
    record(e.series).lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? record(e.metadata).creationTimestamp;
  return Date.parse(String(at)) || 0;
}
