/**
 * What `devctl operator status` flags as wrong with an installation, as pure values; any problem
 * makes status exit 1.
 *
 * Properties:
 * - A stuck rollout: the Deployment's progress deadline passed, or a pod cannot pull its image or
 *   crash-loops (pods.ts's verdict, the same one `install --wait` fails on).
 * - Ready pods with no leader: no Lease, no holder, an expired renewal, or a holder that is no pod
 *   of this install (an operator outside the cluster leads: a second fleet).
 * - Two operators: devctl operators installed in more than one namespace.
 * - An image whose tag is a version other than the installed version label.
 * - A hardened part missing (hardening.ts): a Pod Security label of the namespace other than "restricted",
 *   no PodDisruptionBudget, or no NetworkPolicy when the Deployment says it was installed with one. A part
 *   this identity may not read is not judged.
 * Each problem is one line that says what to do.
 */
import { LEASE_NAME } from "../api/names.ts";
import { OPERATOR_NAME } from "./manifests.ts";
import { describeLeft, labelCommand, missingLabels } from "./namespace-labels.ts";
import { holderPod, podLine, type PodState } from "./pods.ts";
import type { OperatorStatus } from "./status.ts";

/** The version in an image reference's tag ("ghcr.io/x/devctl:0.1.0" → "0.1.0"); undefined if the tag is no version. */
export function imageVersion(image: string): string | undefined {
  const name = image.split("@")[0] ?? "";
  const tag = name.slice(name.lastIndexOf("/") + 1).split(":")[1];
  return tag && /^v?\d+\.\d+\.\d+/.test(tag) ? tag.replace(/^v/, "") : undefined;
}

export function statusProblems(s: OperatorStatus, now: number): string[] {
  const d = s.deployment;
  if (!d) return [];
  const problems: string[] = [];
  const ns = s.namespace;
  const stuck = (s.pods ?? []).filter((p) => p.kind === "pull-failed" || p.kind === "crash-looping");
  if (d.rollout.kind === "failed")
    problems.push(
      `the rollout is stuck: ${d.rollout.message}; see kubectl -n ${ns} describe deployment webapp-operator`,
    );
  for (const p of stuck) problems.push(`the rollout is stuck: ${podLine(p)}; ${stuckAdvice(p, ns)}`);
  const leader = leaderProblem(s, now);
  if (leader) problems.push(leader);
  const others = s.installations ?? [];
  if (others.length > 1)
    problems.push(
      `${others.length} devctl operators are installed (namespaces ${others.map((i) => i.namespace).join(", ")}): ` +
        "each reconciles every WebApp. Keep one: devctl operator uninstall -n NAMESPACE --wait for the others",
    );
  problems.push(...hardeningProblems(s));
  const tagged = imageVersion(d.image);
  if (tagged && tagged !== d.version)
    problems.push(
      `the image ${d.image} is version ${tagged}, but the installation is version ${d.version}: ` +
        "install again with this devctl (devctl operator install), or pass the --image you mean",
    );
  return problems;
}

export function hardeningProblems(s: OperatorStatus): string[] {
  const h = s.hardening;
  if (!h || !s.deployment) return [];
  const ns = s.namespace;
  const again = `devctl operator install -n ${ns}${s.deployment.networkPolicy ? " --network-policy" : ""}`;
  const problems: string[] = [];
  const left = h.namespaceLabels ? missingLabels(h.namespaceLabels) : [];
  if (left.length)
    problems.push(
      `namespace ${ns} does not enforce the "restricted" Pod Security Standard (${describeLeft(left)}); ` +
        `the operator's pods meet it: ${labelCommand(ns, left)}`,
    );
  if (h.disruptionBudget === false)
    problems.push(
      `there is no PodDisruptionBudget ${OPERATOR_NAME} in namespace ${ns}: a node drain may evict every replica at once; ` +
        `restore it with ${again}`,
    );
  if (h.networkPolicy === false && s.deployment.networkPolicy)
    problems.push(
      `the operator was installed with --network-policy but there is no NetworkPolicy ${OPERATOR_NAME} in namespace ${ns}: ` +
        `its metrics port is open to every pod; restore it with ${again}`,
    );
  return problems;
}

function stuckAdvice(p: PodState, ns: string): string {
  return p.kind === "pull-failed"
    ? "build the image with `npm run image`, load it into the cluster and install again with --image <reference>"
    : `read its log with kubectl -n ${ns} logs ${p.pod} --previous`;
}

function leaderProblem(s: OperatorStatus, now: number): string | undefined {
  const ready = (s.pods ?? []).filter((p) => p.kind === "ready").map((p) => p.pod);
  if (!(s.deployment?.ready ?? 0) && !ready.length) return undefined;
  const l = s.leader;
  const none = "ready pods but no leader";
  if (!l)
    return `${none}: there is no Lease ${s.namespace}/${LEASE_NAME}; see kubectl -n ${s.namespace} logs deployment/webapp-operator`;
  if (!l.holder)
    return `${none}: the Lease has no holder; see kubectl -n ${s.namespace} logs deployment/webapp-operator`;
  if (l.renewTime && now - Date.parse(l.renewTime) > l.leaseDurationSeconds * 1000)
    return (
      `${none}: ${l.holder} last renewed the Lease more than ${l.leaseDurationSeconds}s ago; ` +
      `see kubectl -n ${s.namespace} logs deployment/webapp-operator`
    );
  const live = (s.pods ?? []).filter((p) => p.kind !== "terminating").map((p) => p.pod);
  if (s.pods && !holderPod(l.holder, live))
    return (
      `the Lease is held by ${l.holder}, which is no pod of this installation: an operator outside it ` +
      "(devctl operator run elsewhere) leads, and these pods stand by. Stop that process, or uninstall this one"
    );
  return undefined;
}
