import { describe, expect, test } from "bun:test";
import { KubeError } from "../kube/errors.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { INSTALL_RESOURCES, LEASE_NAME } from "./manifests.ts";
import type { PodLike } from "./pods.ts";
import type { DeploymentLike } from "./rollout.ts";
import { lastLine, waitForOperator } from "./wait.ts";

const DEPLOYMENTS = INSTALL_RESOURCES.Deployment as ResourceType;
const PODS: ResourceType = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
const LEASES: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};
const IMAGE = "devctl:local";
const rolledOut = { observedGeneration: 1, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 };

function setup() {
  const clock = createFakeClock(0);
  const fake = createFakeCluster(() => clock.now());
  // Pods and logs answered from what the test stored (the base fake scripts lists per call).
  fake.list = async <T extends KubeObject>(rt: ResourceType, o?: Parameters<typeof fake.listAll>[1]) =>
    fake.listAll<T>(rt, o);
  const logs = new Map<string, string>();
  const logReads: string[] = [];
  fake.raw = (async (_m: string, path: string) => {
    logReads.push(path);
    const pod = /\/pods\/([^/]+)\/log/.exec(path)?.[1] ?? "";
    const log = logs.get(pod);
    if (log === undefined) throw new KubeError("Other", "previous terminated container not found", 400);
    return log;
  }) as typeof fake.raw;
  const dep = (status: DeploymentLike["status"]): DeploymentLike => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "webapp-operator", namespace: "ns", generation: 1 },
    spec: { replicas: 1, selector: { matchLabels: { app: "x" } } },
    status,
  });
  const pod = (name: string, status: PodLike["status"]): PodLike => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "ns" },
    spec: { containers: [{ name: "operator", image: IMAGE }] },
    status,
  });
  const lines: string[] = [];
  const wait = (timeoutMs = 60_000) =>
    waitForOperator(fake, "webapp-operator", "ns", { clock, timeoutMs, onProgress: (l) => lines.push(l) }).catch(
      (e: Error) => e,
    );
  return { clock, fake, logs, logReads, dep, pod, lines, wait };
}

const runningReady = {
  phase: "Running",
  containerStatuses: [{ name: "operator", ready: true, state: { running: {} } }],
};

describe("waitForOperator", () => {
  test("ready pods are not enough: it returns once one of them holds the Lease, and says which", async () => {
    const t = setup();
    t.fake.put(DEPLOYMENTS, t.dep(rolledOut));
    t.fake.put(PODS, t.pod("webapp-operator-abc", runningReady));
    const done = t.wait();
    await t.clock.advance(5000);
    t.fake.put(LEASES, {
      metadata: { name: LEASE_NAME, namespace: "ns" },
      spec: { holderIdentity: "webapp-operator-abc_1a2b3c4d" },
    });
    await t.clock.advance(1000);
    expect(await done).toBe("1 of 1 replicas ready and available; pod webapp-operator-abc holds the Lease");
    expect(t.clock.now()).toBe(6000);
    expect(t.lines).toEqual([
      "  pod webapp-operator-abc: Ready",
      "waiting for deployment ns/webapp-operator (0s): 1 of 1 replicas ready and available; no installed pod holds the Lease yet",
    ]);
  });

  test("shows each pod's state when it changes, and fails at once on a pull error naming the image", async () => {
    const t = setup();
    t.fake.put(DEPLOYMENTS, t.dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1 }));
    t.fake.put(PODS, t.pod("webapp-operator-abc", { phase: "Pending" }));
    const done = t.wait();
    await t.clock.advance(2000);
    t.fake.put(
      PODS,
      t.pod("webapp-operator-abc", {
        phase: "Pending",
        containerStatuses: [{ name: "operator", state: { waiting: { reason: "ContainerCreating" } } }],
      }),
    );
    await t.clock.advance(2000);
    t.fake.put(
      PODS,
      t.pod("webapp-operator-abc", {
        phase: "Pending",
        containerStatuses: [
          {
            name: "operator",
            state: { waiting: { reason: "ErrImageNeverPull", message: `image "${IMAGE}" is not present` } },
          },
        ],
      }),
    );
    await t.clock.advance(1000);
    const err = (await done) as Error;
    expect(t.clock.now()).toBe(5000);
    expect(t.lines.filter((l) => l.startsWith("  "))).toEqual([
      "  pod webapp-operator-abc: Pending",
      "  pod webapp-operator-abc: ContainerCreating",
      `  pod webapp-operator-abc: ErrImageNeverPull: image "${IMAGE}" is not present`,
    ]);
    expect(err.name).toBe("InstallError");
    expect(err.message).toContain(
      `the operator image ${IMAGE} cannot be pulled: pod webapp-operator-abc: ErrImageNeverPull: image "${IMAGE}" is not present`,
    );
    expect(err.message).toContain("npm run image");
  });

  test("a crash loop fails at once with the previous container's last log line", async () => {
    const t = setup();
    t.fake.put(DEPLOYMENTS, t.dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1 }));
    t.logs.set("webapp-operator-abc", "starting\nerror: leases.coordination.k8s.io is forbidden\n\n");
    t.fake.put(
      PODS,
      t.pod("webapp-operator-abc", {
        phase: "Running",
        containerStatuses: [
          {
            name: "operator",
            restartCount: 2,
            state: { waiting: { reason: "CrashLoopBackOff" } },
            lastState: { terminated: { exitCode: 1 } },
          },
        ],
      }),
    );
    const err = (await t.wait()) as Error;
    expect(err.message).toContain(
      "keeps crashing: pod webapp-operator-abc: CrashLoopBackOff (restarted 2 times, last exit code 1), last log line: error: leases.coordination.k8s.io is forbidden",
    );
    expect(t.logReads).toEqual([
      "/api/v1/namespaces/ns/pods/webapp-operator-abc/log?container=operator&previous=true&tailLines=20",
    ]);
  });

  test("a log that cannot be read leaves the line out; the failure stays", async () => {
    const t = setup();
    t.fake.put(DEPLOYMENTS, t.dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1 }));
    t.fake.put(
      PODS,
      t.pod("webapp-operator-abc", {
        containerStatuses: [{ name: "operator", restartCount: 1, state: { waiting: { reason: "CrashLoopBackOff" } } }],
      }),
    );
    const err = (await t.wait()) as Error;
    expect(err.message).toContain("pod webapp-operator-abc: CrashLoopBackOff (restarted 1 time). Read its log");
  });

  test("Pending pods wait until the timeout, which names the scheduler's message", async () => {
    const t = setup();
    t.fake.put(DEPLOYMENTS, t.dep({ observedGeneration: 1, replicas: 1, updatedReplicas: 1 }));
    const message = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.";
    t.fake.put(
      PODS,
      t.pod("webapp-operator-abc", {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "False", reason: "Unschedulable", message }],
      }),
    );
    const done = t.wait(15_000);
    await t.clock.advance(20_000);
    const err = (await done) as Error;
    expect(t.lines).toEqual([
      `  pod webapp-operator-abc: Pending: ${message}`,
      "waiting for deployment ns/webapp-operator (0s): 0 of 1 updated replicas are available",
      "waiting for deployment ns/webapp-operator (10s): 0 of 1 updated replicas are available",
    ]);
    expect(err.message).toBe(
      `deployment ns/webapp-operator is not leading after 15 s: 0 of 1 updated replicas are available; pod webapp-operator-abc: Pending: ${message}. ` +
        "Look at `kubectl -n ns describe pods`, or wait longer with --timeout",
    );
  });
});

test("lastLine takes the last non-empty line and cuts a long one", () => {
  expect(lastLine("a\nb\n\n  \n")).toBe("b");
  expect(lastLine("")).toBeUndefined();
  expect(lastLine("x".repeat(500))?.length).toBe(240);
});
