/**
 * `devctl operator status`: what is installed and whether it works, read from the cluster.
 *
 * Properties:
 * - readStatus() only reads: the operator Deployment (version label, image, replicas, rollout state), the
 *   leader-election Lease (holder, last renew, and whether that renewal is still within the lease
 *   duration), the CRD, every WebApp counted by its conditions, and the hardened install's parts
 *   (hardening.ts: the namespace's Pod Security labels, the PodDisruptionBudget, the NetworkPolicy).
 * - A missing part is a value (undefined), not an error: "not installed" is an answer.
 * - formatStatus() is pure; times are relative to the `now` it is given, in kubectl's age format.
 */
import { CRD_NAME, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { SCHEMA_VERSION_ANNOTATION } from "../api/crd.ts";
import { isForbidden, isNotFound } from "../kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../kube/types.ts";
import { humanDuration } from "../printers/format.ts";
import { OPERATOR_CONTAINER_NAME } from "./deployment.ts";
import { APP_NAME, APP_NAME_LABEL, INSTALL_RESOURCES, LEASE_NAME, OPERATOR_NAME, VERSION_LABEL } from "./manifests.ts";
import { findInstallations, type Installation } from "./installations.ts";
import { podState, type PodLike, type PodState } from "./pods.ts";
import { statusProblems } from "./problems.ts";
import type { DeploymentLike } from "./rollout.ts";
import { readDeployment, type RolloutState, rolloutState } from "../readiness/deployment.ts";
import { type KstatusStatus, kstatusOf } from "../readiness/kstatus.ts";
import { LEASES, NAMESPACES, NETWORK_POLICIES, POD_DISRUPTION_BUDGETS, PODS } from "../kube/resources.ts";
import {
  metricsLabelArg,
  NETWORK_POLICY_ANNOTATION,
  NETWORK_POLICY_ENABLED,
  POD_SECURITY_ENFORCE_LABEL,
} from "./hardening.ts";

export interface OperatorStatus {
  namespace: string;
  deployment?: {
    version: string;
    image: string;
    desired: number;
    ready: number;
    updated: number;
    available: number;
    /** As `kubectl rollout status` judges it (readiness/deployment.ts), as `install --wait` does. */
    rollout: RolloutState;
    /** Installed with --network-policy (the Deployment's NETWORK_POLICY_ANNOTATION). */
    networkPolicy?: boolean;
  };
  /** The hardened install's parts as found; undefined where this identity may not read them. */
  hardening?: Hardening;
  /** The operator's pods (pods.ts), sorted by name. */
  pods?: PodState[];
  /** Every devctl operator in the cluster; undefined when Deployments may not be listed cluster-wide. */
  installations?: Installation[];
  leader?: { holder: string; renewTime?: string; leaseDurationSeconds: number };
  crd?: { schemaVersion: string; established: boolean };
  /** Undefined when the CRD is not installed; the reason when WebApps could not be listed. */
  webapps?:
    | {
        total: number;
        available: number;
        degraded: number;
        progressing: number;
        noStatus: number;
        /** By kstatus's verdict (readiness/kstatus.ts), as Flux or helm --wait would count them. */
        kstatus: Record<KstatusStatus, number>;
      }
    | { error: string };
}

export interface Hardening {
  /** The install namespace's labels (undefined when the namespace could not be read). */
  namespaceLabels?: Record<string, string>;
  /** Whether the PodDisruptionBudget and the NetworkPolicy exist (undefined: may not be read). */
  disruptionBudget?: boolean;
  networkPolicy?: boolean;
}

interface Lease extends KubeObject {
  spec?: { holderIdentity?: string; renewTime?: string; leaseDurationSeconds?: number };
}
interface Conditioned extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

/** Optional reads: an identity that may not make them still sees the rest. */
const ifForbidden = (e: unknown): undefined => {
  if (isForbidden(e)) return undefined;
  throw e;
};

async function maybe<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

export async function readStatus(client: KubeClient, namespace: string, signal?: AbortSignal): Promise<OperatorStatus> {
  const sig = signal ? { signal } : {};
  const [dep, lease, crd, list, pods, installations, hardening] = await Promise.all([
    maybe(client.get<DeploymentLike>(INSTALL_RESOURCES.Deployment as ResourceType, OPERATOR_NAME, namespace, signal)),
    maybe(client.get<Lease>(LEASES, LEASE_NAME, namespace, signal)),
    maybe(
      client.get<Conditioned>(INSTALL_RESOURCES.CustomResourceDefinition as ResourceType, CRD_NAME, undefined, signal),
    ),
    // Counting WebApps needs list in every namespace; without it status still shows the rest.
    maybe(client.listAll<Conditioned>(WEBAPP_RESOURCE, sig)).catch((e: unknown) => {
      if (isForbidden(e)) return { error: (e as Error).message };
      throw e;
    }),
    client
      .listAll<PodLike>(PODS, { namespace, labelSelector: `${APP_NAME_LABEL}=${APP_NAME}`, ...sig })
      .catch(ifForbidden),
    findInstallations(client, signal).catch(ifForbidden),
    readHardening(client, namespace, signal),
  ]);
  const status: OperatorStatus = { namespace, hardening };
  if (dep) {
    const containers =
      (dep.spec as { template?: { spec?: { containers?: { name: string; image: string }[] } } } | undefined)?.template
        ?.spec?.containers ?? [];
    const c = containers.find((x) => x.name === OPERATOR_CONTAINER_NAME) ?? containers[0];
    status.deployment = {
      version: dep.metadata.labels?.[VERSION_LABEL] ?? "unknown",
      image: c?.image ?? "unknown",
      desired: dep.spec?.replicas ?? 1,
      ready: dep.status?.readyReplicas ?? 0,
      updated: dep.status?.updatedReplicas ?? 0,
      available: dep.status?.availableReplicas ?? 0,
      rollout: rolloutState(readDeployment(dep)),
      ...(dep.metadata.annotations?.[NETWORK_POLICY_ANNOTATION] === NETWORK_POLICY_ENABLED
        ? { networkPolicy: true }
        : {}),
    };
  }
  if (pods)
    status.pods = pods.items
      .sort((a, b) => (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""))
      .map((p) => podState(p));
  if (installations) status.installations = installations;
  if (lease?.spec) {
    status.leader = {
      holder: lease.spec.holderIdentity ?? "",
      ...(lease.spec.renewTime ? { renewTime: lease.spec.renewTime } : {}),
      leaseDurationSeconds: lease.spec.leaseDurationSeconds ?? 15,
    };
  }
  if (crd) {
    status.crd = {
      schemaVersion: crd.metadata.annotations?.[SCHEMA_VERSION_ANNOTATION] ?? "unknown",
      established: crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") ?? false,
    };
  }
  if (list && "error" in list) status.webapps = { error: list.error };
  else if (list) {
    const count = (type: string) =>
      list.items.filter((w) => w.status?.conditions?.some((c) => c.type === type && c.status === "True")).length;
    status.webapps = {
      total: list.items.length,
      available: count("Available"),
      degraded: count("Degraded"),
      progressing: count("Progressing"),
      noStatus: list.items.filter((w) => !w.status?.conditions?.length).length,
      kstatus: countKstatus(list.items),
    };
  }
  return status;
}

/** The namespace's labels, and whether the PodDisruptionBudget and the NetworkPolicy are there. */
async function readHardening(client: KubeClient, namespace: string, signal?: AbortSignal): Promise<Hardening> {
  const present = (rt: ResourceType) =>
    client.get(rt, OPERATOR_NAME, namespace, signal).then(
      () => true,
      (e: unknown) => (isNotFound(e) ? false : ifForbidden(e)),
    );
  const [ns, pdb, netpol] = await Promise.all([
    maybe(client.get(NAMESPACES, namespace, undefined, signal)).catch(ifForbidden),
    present(POD_DISRUPTION_BUDGETS),
    present(NETWORK_POLICIES),
  ]);
  return {
    ...(ns ? { namespaceLabels: { ...(ns.metadata.labels ?? {}) } } : {}),
    ...(pdb !== undefined ? { disruptionBudget: pdb } : {}),
    ...(netpol !== undefined ? { networkPolicy: netpol } : {}),
  };
}

const ROLLOUT_WORD: Record<RolloutState["kind"], string> = {
  progressing: "in progress",
  complete: "complete",
  failed: "failed",
};

function countKstatus(items: readonly KubeObject[]): Record<KstatusStatus, number> {
  const counts: Record<KstatusStatus, number> = { Current: 0, InProgress: 0, Failed: 0, Terminating: 0 };
  for (const w of items) counts[kstatusOf(w).status]++;
  return counts;
}

export function formatStatus(s: OperatorStatus, now: number): string {
  const lines: [string, string][] = [];
  const d = s.deployment;
  lines.push(["Namespace", s.namespace]);
  if (!d)
    lines.push([
      "Operator",
      `not installed (no Deployment ${OPERATOR_NAME} in namespace ${s.namespace}): run devctl operator install`,
    ]);
  else {
    lines.push(["Version", d.version]);
    lines.push(["Image", d.image]);
    lines.push(["Replicas", `${d.ready}/${d.desired} ready (${d.updated} up to date, ${d.available} available)`]);
    lines.push(["Rollout", `${ROLLOUT_WORD[d.rollout.kind]}: ${d.rollout.message}`]);
  }
  lines.push(["Leader", formatLeader(s.leader, now)]);
  if (d && s.hardening) lines.push(["Hardening", formatHardening(s.hardening, d.networkPolicy ?? false)]);
  lines.push([
    "CRD",
    s.crd
      ? `${CRD_NAME} (schema version ${s.crd.schemaVersion}${s.crd.established ? ", Established" : ", not Established"})`
      : `${CRD_NAME} not installed`,
  ]);
  const w = s.webapps;
  if (w && "error" in w) lines.push(["WebApps", `unknown: ${w.error}`]);
  else if (w) {
    const parts = [`${w.available} Available`, `${w.degraded} Degraded`, `${w.progressing} Progressing`];
    if (w.noStatus) parts.push(`${w.noStatus} without status yet`);
    const k = w.kstatus;
    const gitops = `${k.Current} Current, ${k.InProgress} InProgress, ${k.Failed} Failed, ${k.Terminating} Terminating`;
    lines.push(["WebApps", `${w.total} in all namespaces: ${parts.join(", ")}; for kstatus: ${gitops}`]);
  }
  const problems = statusProblems(s, now);
  if (problems.length) lines.push(["Problems", problems.join("\n  ")]);
  const width = Math.max(...lines.map(([k]) => k.length)) + 2;
  return lines.map(([k, v]) => `${`${k}:`.padEnd(width)}${v.replace(/\n {2}/g, `\n${" ".repeat(width)}`)}`).join("\n");
}

/** What is in place; what is missing is a problem (problems.ts hardeningProblems). */
function formatHardening(h: Hardening, wantsNetworkPolicy: boolean): string {
  const enforced = h.namespaceLabels?.[POD_SECURITY_ENFORCE_LABEL];
  const parts = [
    h.namespaceLabels === undefined
      ? "Pod Security unknown"
      : `Pod Security ${enforced ? `"${enforced}" enforced` : "not enforced"}`,
    h.disruptionBudget === undefined
      ? "PodDisruptionBudget unknown"
      : h.disruptionBudget
        ? "PodDisruptionBudget (maxUnavailable 1)"
        : "no PodDisruptionBudget",
    h.networkPolicy === undefined
      ? "NetworkPolicy unknown"
      : h.networkPolicy
        ? `NetworkPolicy (metrics only from namespaces labelled ${metricsLabelArg()})`
        : `no NetworkPolicy${wantsNetworkPolicy ? "" : " (install --network-policy adds one)"}`,
  ];
  return parts.join(", ");
}

function formatLeader(l: OperatorStatus["leader"], now: number): string {
  if (!l) return `none yet (no Lease ${LEASE_NAME})`;
  if (!l.holder) return "none (the last leader released the lease)";
  if (!l.renewTime) return `${l.holder} (never renewed)`;
  const renewed = Date.parse(l.renewTime);
  const ago = now - renewed;
  const expired = ago > l.leaseDurationSeconds * 1000;
  const note = expired ? ` (expired: not renewed within ${l.leaseDurationSeconds}s, no replica is leading)` : "";
  return `${l.holder}, last renewed ${humanDuration(ago)} ago at ${l.renewTime}${note}`;
}
