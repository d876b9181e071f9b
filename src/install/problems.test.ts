import { describe, expect, test } from "bun:test";
import { POD_SECURITY_LABELS } from "./hardening.ts";
import { imageVersion, statusProblems } from "./problems.ts";
import { formatStatus, type OperatorStatus } from "./status.ts";

const NOW = Date.parse("2024-05-01T12:00:10Z");
const healthy: OperatorStatus = {
  namespace: "devctl-system",
  deployment: {
    version: "0.1.0",
    image: "ghcr.io/devctl/devctl:0.1.0",
    desired: 2,
    ready: 2,
    updated: 2,
    available: 2,
    rollout: { kind: "complete", reason: "RolloutComplete", message: "2 of 2 replicas ready and available" },
  },
  pods: [
    { kind: "ready", pod: "webapp-operator-7d9-aaaaa" },
    { kind: "ready", pod: "webapp-operator-7d9-bbbbb" },
  ],
  leader: { holder: "webapp-operator-7d9-bbbbb_1a2b", renewTime: "2024-05-01T12:00:07Z", leaseDurationSeconds: 15 },
  installations: [{ namespace: "devctl-system", version: "0.1.0", image: "ghcr.io/devctl/devctl:0.1.0", replicas: 2 }],
};

describe("statusProblems", () => {
  test("a healthy installation has none, and status shows no Problems line", () => {
    expect(statusProblems(healthy, NOW)).toEqual([]);
    expect(formatStatus(healthy, NOW)).not.toContain("Problems");
  });

  test("a stuck rollout: the progress deadline, a pull error, a crash loop", () => {
    const s: OperatorStatus = {
      ...healthy,
      deployment: {
        ...healthy.deployment!,
        rollout: {
          kind: "failed",
          reason: "ProgressDeadlineExceeded",
          message: "rollout stalled: ReplicaSet x has timed out progressing.",
        },
      },
      pods: [
        ...healthy.pods!,
        {
          kind: "pull-failed",
          pod: "webapp-operator-8e1-ccccc",
          reason: "ImagePullBackOff",
          message: "",
          image: "x:1",
        },
        { kind: "crash-looping", pod: "webapp-operator-8e1-ddddd", image: "x:1", restarts: 4, exitCode: 1 },
      ],
    };
    expect(statusProblems(s, NOW)).toEqual([
      "the rollout is stuck: rollout stalled: ReplicaSet x has timed out progressing.; see kubectl -n devctl-system describe deployment webapp-operator",
      "the rollout is stuck: pod webapp-operator-8e1-ccccc: ImagePullBackOff; build the image with `npm run image`, load it into the cluster and install again with --image <reference>",
      "the rollout is stuck: pod webapp-operator-8e1-ddddd: CrashLoopBackOff (restarted 4 times, last exit code 1); read its log with kubectl -n devctl-system logs webapp-operator-8e1-ddddd --previous",
    ]);
  });

  test("ready pods with no leader: no Lease, no holder, an expired renewal", () => {
    const { leader: _l, ...noLease } = healthy;
    expect(statusProblems(noLease, NOW)).toEqual([
      "ready pods but no leader: there is no Lease devctl-system/webapp-operator-lock; see kubectl -n devctl-system logs deployment/webapp-operator",
    ]);
    expect(statusProblems({ ...healthy, leader: { holder: "", leaseDurationSeconds: 15 } }, NOW)[0]).toStartWith(
      "ready pods but no leader: the Lease has no holder",
    );
    const stale = { ...healthy, leader: { ...healthy.leader!, renewTime: "2024-05-01T11:59:00Z" } };
    expect(statusProblems(stale, NOW)[0]).toStartWith(
      "ready pods but no leader: webapp-operator-7d9-bbbbb_1a2b last renewed the Lease more than 15s ago",
    );
  });

  test("a Lease held outside the installation: another fleet leads", () => {
    const s = { ...healthy, leader: { ...healthy.leader!, holder: "laptop_pid4242_1a2b" } };
    expect(statusProblems(s, NOW)).toEqual([
      "the Lease is held by laptop_pid4242_1a2b, which is no pod of this installation: an operator outside it (devctl operator run elsewhere) leads, and these pods stand by. Stop that process, or uninstall this one",
    ]);
  });

  test("two operators, and an image of another version", () => {
    const s: OperatorStatus = {
      ...healthy,
      deployment: { ...healthy.deployment!, image: "ghcr.io/devctl/devctl:v0.0.9" },
      installations: [
        ...healthy.installations!,
        { namespace: "platform", version: "0.1.0", image: "ghcr.io/devctl/devctl:0.1.0", replicas: 1 },
      ],
    };
    expect(statusProblems(s, NOW)).toEqual([
      "2 devctl operators are installed (namespaces devctl-system, platform): each reconciles every WebApp. Keep one: devctl operator uninstall -n NAMESPACE --wait for the others",
      "the image ghcr.io/devctl/devctl:v0.0.9 is version 0.0.9, but the installation is version 0.1.0: install again with this devctl (devctl operator install), or pass the --image you mean",
    ]);
    const text = formatStatus(s, NOW);
    expect(text).toContain("\nProblems:  2 devctl operators are installed");
    expect(text).toContain("\n           the image ghcr.io/devctl/devctl:v0.0.9 is version 0.0.9");
  });

  test("a hardened part missing: each is one problem with the command that restores it", () => {
    const ok = { namespaceLabels: { ...POD_SECURITY_LABELS }, disruptionBudget: true, networkPolicy: true };
    const wanting = { ...healthy, deployment: { ...healthy.deployment!, networkPolicy: true } };
    expect(statusProblems({ ...wanting, hardening: ok }, NOW)).toEqual([]);
    const labels = { ...POD_SECURITY_LABELS, "pod-security.kubernetes.io/enforce": "privileged" };
    expect(statusProblems({ ...wanting, hardening: { ...ok, namespaceLabels: labels } }, NOW)).toEqual([
      'namespace devctl-system does not enforce the "restricted" Pod Security Standard ' +
        '(pod-security.kubernetes.io/enforce is "privileged"); the operator\'s pods meet it: ' +
        "kubectl label namespace devctl-system pod-security.kubernetes.io/enforce=restricted --overwrite",
    ]);
    expect(statusProblems({ ...wanting, hardening: { ...ok, disruptionBudget: false } }, NOW)).toEqual([
      "there is no PodDisruptionBudget webapp-operator in namespace devctl-system: a node drain may evict every " +
        "replica at once; restore it with devctl operator install -n devctl-system --network-policy",
    ]);
    expect(statusProblems({ ...wanting, hardening: { ...ok, networkPolicy: false } }, NOW)).toEqual([
      "the operator was installed with --network-policy but there is no NetworkPolicy webapp-operator in namespace " +
        "devctl-system: its metrics port is open to every pod; restore it with devctl operator install -n devctl-system --network-policy",
    ]);
    // Not installed with it: no NetworkPolicy is no problem; parts that could not be read are not judged.
    expect(statusProblems({ ...healthy, hardening: { ...ok, networkPolicy: false } }, NOW)).toEqual([]);
    expect(statusProblems({ ...healthy, hardening: {} }, NOW)).toEqual([]);
  });

  test("not installed is no list of problems (status says how to install)", () => {
    expect(statusProblems({ namespace: "x" }, NOW)).toEqual([]);
  });
});

test("imageVersion reads a version tag and nothing else", () => {
  expect(imageVersion("ghcr.io/devctl/devctl:0.1.0")).toBe("0.1.0");
  expect(imageVersion("localhost:5000/devctl:v1.2.3-rc.1")).toBe("1.2.3-rc.1");
  expect(imageVersion("devctl:local")).toBeUndefined();
  expect(imageVersion("localhost:5000/devctl")).toBeUndefined();
  expect(imageVersion("devctl@sha256:abc")).toBeUndefined();
});
