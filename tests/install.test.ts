/**
 * `devctl operator install` on a real API server: pod flags, and what `--wait` waits for.
 *
 * - Bad pod flags are usage errors (exit 2) and nothing is created.
 * - The pod flags (scheduling, pulling, memory) reach the live Deployment, and the real scheduler keeps a pod whose node selector
 *   matches no node Pending: --wait shows the scheduler's message and times out naming it.
 * - Ready pods are not enough: --wait keeps waiting until a process whose identity is one of the
 *   installed pods (the real `devctl operator run`, told its pod name through POD_NAME as the
 *   Deployment does) holds the Lease, and then names that pod.
 * - Pull errors and crash loops fail the wait at once, naming the image and the next step. KWOK plays
 *   the kubelet here: its stages make the pods Running, and the test then writes the waiting state
 *   into the pod's status as a kubelet does (KWOK's stages never touch a pod with an IP again).
 * - Never two operators: install refuses a second namespace (unless --force) and a Terminating one;
 *   `operator run` outside the cluster joins the installed operator's Lease or refuses; status flags
 *   two operators, a foreign image version, a stuck rollout, ready pods with no leader and a leader
 *   outside the installation; `uninstall --wait` returns when the namespace is gone.
 * Each install goes into a namespace of its own and is uninstalled before the next test.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  DEVCTL,
  devctl,
  eventually,
  getOrUndefined,
  kube,
  kubeconfig,
  NAMESPACES,
  PODS,
  tempNamespace,
} from "./_support.ts";

const LEASES = { group: "coordination.k8s.io", version: "v1", plural: "leases", kind: "Lease", namespaced: true };
const CLUSTERROLES = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterroles",
  kind: "ClusterRole",
  namespaced: false,
};
const suffix = Math.random().toString(36).slice(2, 8);
const installed: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

/** Every test starts with no devctl operator installed (install refuses a second one). */
async function uninstallAll(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  for (const ns of installed.splice(0)) devctl(["operator", "uninstall", "-n", ns]);
}
beforeEach(uninstallAll);
afterAll(uninstallAll);

interface Running {
  proc: ReturnType<typeof Bun.spawn>;
  stderr: () => string;
  exited: Promise<number>;
}

/** `devctl operator install … --wait` in the background, its stderr collected as it comes. */
function installWaiting(namespace: string, args: string[]): Running {
  installed.push(namespace);
  let err = "";
  const proc = Bun.spawn([DEVCTL, "operator", "install", "-n", namespace, "--replicas", "1", "--wait", ...args], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdout: "ignore",
    stderr: "pipe",
  });
  const drained = (async () => {
    const d = new TextDecoder();
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) err += d.decode(c, { stream: true });
  })();
  cleanups.push(async () => proc.kill());
  return { proc, stderr: () => err, exited: proc.exited.then(async (code) => (await drained, code)) };
}

interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

/** The install's one pod, once KWOK has made it Running (it has an IP). */
async function runningPod(namespace: string): Promise<PodLike> {
  return eventually(
    async () => (await kube.list<PodLike>(PODS, { namespace })).items.find((p) => p.status?.podIP),
    30_000,
    `a running operator pod in ${namespace}`,
  );
}

/** Writes a container waiting state into the pod's status, as the kubelet would. */
async function setWaiting(pod: PodLike, container: Record<string, unknown>): Promise<void> {
  await kube.patch(
    PODS,
    pod.metadata.name as string,
    pod.metadata.namespace,
    {
      status: {
        conditions: [
          { type: "Ready", status: "False" },
          { type: "ContainersReady", status: "False" },
        ],
        containerStatuses: [{ name: "operator", ready: false, started: false, ...container }],
      },
    },
    "strategic",
    { subresource: "status" },
  );
}

describe("devctl operator install: pod flags", () => {
  test("a bad pod flag is a usage error naming it, and nothing is created", async () => {
    const ns = `install-bad-${suffix}`;
    for (const [flag, value, says] of [
      ["--toleration", "dedicated=ops:NoRun", '--toleration "dedicated=ops:NoRun": the effect must be one of'],
      ["--node-selector", "pool", '--node-selector "pool" must be key=value'],
      ["--image-pull-policy", "never", '--image-pull-policy "never" must be one of: Always, IfNotPresent, Never'],
      ["--image-pull-secret", "Reg_Cred", '--image-pull-secret "Reg_Cred" is not a Secret name'],
      ["--memory-limit", "48Mi", "memory limit 48Mi is below the operator's idle footprint"],
      ["--memory-request", "1Gi --memory-limit 512Mi", "memory request 1Gi is above the limit 512Mi"],
    ] as const) {
      const r = devctl(["operator", "install", "-n", ns, flag, ...value.split(" ")]);
      expect({ flag, code: r.code, says: r.stderr.includes(says) }).toEqual({ flag, code: 2, says: true });
    }
    expect(await getOrUndefined(NAMESPACES, ns)).toBeUndefined();
  });

  test("the flags reach the Deployment, and a selector no node matches keeps --wait on the scheduler's message until the timeout", async () => {
    const ns = `install-pending-${suffix}`;
    const run = installWaiting(ns, [
      "--node-selector",
      "devctl.test/pool=none",
      "--toleration",
      "devctl.test/dedicated=ops:NoSchedule",
      "--image-pull-policy",
      "IfNotPresent",
      "--image-pull-secret",
      "regcred",
      "--memory-request",
      "320Mi",
      "--memory-limit",
      "1Gi",
      "--timeout",
      "8s",
    ]);
    const started = Date.now();
    const code = await run.exited;
    const err = run.stderr();
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(err).toMatch(
      /^ {2}pod webapp-operator-\S+: Pending: 0\/\d+ nodes are available: .*node affinity\/selector/m,
    );
    expect(err).toMatch(/error: deployment \S+ is not leading after \d+ s: .*Pending: 0\/\d+ nodes are available/);
    const dep = await kube.get<KubeObject & { spec: any }>(DEPLOYMENTS, "webapp-operator", ns);
    const spec = dep.spec.template.spec;
    expect(spec.nodeSelector).toEqual({ "devctl.test/pool": "none" });
    expect(spec.tolerations).toEqual([
      { key: "devctl.test/dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" },
    ]);
    expect(spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(spec.containers[0].imagePullPolicy).toBe("IfNotPresent");
    expect(spec.containers[0].resources).toEqual({
      requests: { cpu: "50m", memory: "320Mi" },
      limits: { memory: "1Gi" },
    });
  }, 60_000);
});

describe("devctl operator install --wait", () => {
  test("ready pods are not enough: it waits until one of them holds the Lease, then names that pod", async () => {
    const ns = `install-lease-${suffix}`;
    const watched = await tempNamespace("install-lease-apps");
    cleanups.push(watched.drop);
    const run = installWaiting(ns, ["--image", "ghcr.io/devctl/devctl:e2e", "--timeout", "90s"]);
    const pod = await runningPod(ns);
    const podName = pod.metadata.name as string;
    await eventually(
      () => run.stderr().includes("no installed pod holds the Lease yet"),
      30_000,
      "install --wait to say that no pod holds the Lease",
    );
    expect(run.stderr()).toContain(`  pod ${podName}: Ready`);
    await Bun.sleep(2000);
    expect(run.proc.exitCode).toBeNull();

    // The real operator, told its pod's name as the Deployment's downward API tells it.
    const op: OperatorProcess = await startOperator(
      ["--leader-elect", "--lease-namespace", ns, "--namespaces", watched.name],
      { env: { POD_NAME: podName } },
    );
    cleanups.push(() => op.stop());
    const started = Date.now();
    const code = await run.exited;
    expect({ code, stderr: run.stderr() }).toEqual({ code: 0, stderr: expect.any(String) });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.stderr()).toContain(
      `the operator is ready and leading: 1 of 1 replicas ready and available; pod ${podName} holds the Lease`,
    );
    const lease = await kube.get<KubeObject & { spec: { holderIdentity: string } }>(LEASES, "webapp-operator-lock", ns);
    expect(lease.spec.holderIdentity).toStartWith(`${podName}_`);
  }, 120_000);

  test("an image that cannot be pulled fails the wait at once, naming the reason, the image and the next step", async () => {
    const ns = `install-pull-${suffix}`;
    const image = "devctl:not-on-any-node";
    const run = installWaiting(ns, ["--image", image, "--image-pull-policy", "Never", "--timeout", "90s"]);
    const pod = await runningPod(ns);
    await setWaiting(pod, {
      image,
      state: {
        running: null,
        waiting: {
          reason: "ErrImageNeverPull",
          message: `Container image "${image}" is not present with pull policy of Never`,
        },
      },
    });
    const patched = Date.now();
    const code = await run.exited;
    const err = run.stderr();
    expect(code).toBe(1);
    expect(Date.now() - patched).toBeLessThan(10_000);
    expect(err).toContain(`  pod ${pod.metadata.name}: ErrImageNeverPull: Container image "${image}" is not present`);
    expect(err).toContain(`the operator image ${image} cannot be pulled`);
    expect(err).toContain("`npm run image`");
    expect(err).toContain("--image <reference>");
  }, 60_000);

  test("a crash loop fails the wait at once, with restarts, exit code and where to read the log", async () => {
    const ns = `install-crash-${suffix}`;
    const run = installWaiting(ns, ["--image", "ghcr.io/devctl/devctl:e2e", "--timeout", "90s"]);
    const pod = await runningPod(ns);
    await setWaiting(pod, {
      restartCount: 3,
      state: {
        running: null,
        waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" },
      },
      lastState: { terminated: { exitCode: 1, reason: "Error" } },
    });
    const patched = Date.now();
    const code = await run.exited;
    const err = run.stderr();
    expect(code).toBe(1);
    expect(Date.now() - patched).toBeLessThan(10_000);
    expect(err).toContain(
      `keeps crashing: pod ${pod.metadata.name}: CrashLoopBackOff (restarted 3 times, last exit code 1)`,
    );
    expect(err).toContain(`kubectl -n ${ns} logs ${pod.metadata.name} --previous`);
    const status = devctl(["operator", "status", "-n", ns]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(
      `the rollout is stuck: pod ${pod.metadata.name}: CrashLoopBackOff (restarted 3 times`,
    );
  }, 60_000);
});

describe("never two operators", () => {
  const version = () => /^devctl (\S+) /.exec(devctl(["--version"]).stdout)?.[1] ?? "";

  test("install refuses a second namespace naming the first (exit 1, nothing applied); --force installs it, and status flags both and a foreign image version", async () => {
    const first = `install-first-${suffix}`;
    const second = `install-second-${suffix}`;
    installed.push(first);
    expect(devctl(["operator", "install", "-n", first, "--replicas", "1"]).code).toBe(0);

    installed.push(second);
    const refused = devctl(["operator", "install", "-n", second, "--replicas", "1"]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(`error: a devctl operator is already installed in namespace ${first} (version `);
    expect(refused.stderr).toContain(`To move it: devctl operator uninstall -n ${first} --wait`);
    expect(refused.stderr).toContain("pass --force");
    expect(await getOrUndefined(NAMESPACES, second)).toBeUndefined();

    const forced = devctl([
      "operator",
      "install",
      "-n",
      second,
      "--replicas",
      "1",
      "--force",
      "--image",
      "ghcr.io/devctl/devctl:0.0.1",
    ]);
    expect(forced.code).toBe(0);
    const status = devctl(["operator", "status", "-n", second]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(
      `2 devctl operators are installed (namespaces ${[first, second].sort().join(", ")})`,
    );
    if (version() !== "0.0.1")
      expect(status.stdout).toContain(
        `the image ghcr.io/devctl/devctl:0.0.1 is version 0.0.1, but the installation is version ${version()}`,
      );
  }, 60_000);

  test("operator run outside the cluster joins the installed operator's Lease; status says a process outside the installation leads; without an install it refuses", async () => {
    const ns = `install-run-${suffix}`;
    const watched = await tempNamespace("install-run-apps");
    cleanups.push(watched.drop);
    const run = installWaiting(ns, ["--timeout", "60s"]);
    await eventually(
      () => run.stderr().includes("no installed pod holds the Lease yet"),
      30_000,
      "pods ready, no leader",
    );
    const noLeader = devctl(["operator", "status", "-n", ns]);
    expect(noLeader.code).toBe(1);
    expect(noLeader.stdout).toContain("ready pods but no leader: there is no Lease");
    run.proc.kill();

    const op = await startOperator(["--leader-elect", "--namespaces", watched.name]);
    cleanups.push(() => op.stop());
    expect(op.logs()).toContain(`joining the leader election of the operator installed in namespace ${ns}`);
    const lease = await eventually(
      async () =>
        (await getOrUndefined<KubeObject & { spec: { holderIdentity?: string } }>(LEASES, "webapp-operator-lock", ns))
          ?.spec.holderIdentity,
      30_000,
      "the local operator to take the installed operator's Lease",
    );
    expect(lease).toMatch(/^\S+_pid\d+_[0-9a-f]{8}$/);
    const status = devctl(["operator", "status", "-n", ns]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(`the Lease is held by ${lease}, which is no pod of this installation`);
    await op.stop();

    const gone = devctl(["operator", "uninstall", "-n", ns, "--wait", "--timeout", "60s"]);
    expect(gone.code).toBe(0);
    expect(gone.stderr).toContain("and all of them are gone");
    expect(await getOrUndefined(NAMESPACES, ns)).toBeUndefined();

    const alone = devctl([
      "operator",
      "run",
      "--namespaces",
      watched.name,
      "--metrics-bind-address",
      "0",
      "--health-probe-bind-address",
      "0",
    ]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain(
      "operator run outside a cluster with leader election needs --lease-namespace: no devctl operator is installed",
    );
  }, 120_000);

  test("install into a Terminating namespace says so and applies nothing", async () => {
    const ns = `install-terminating-${suffix}`;
    await kube.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const CONFIGMAPS = { group: "", version: "v1", plural: "configmaps", kind: "ConfigMap", namespaced: true };
    // A finalizer nobody removes keeps the namespace Terminating until the test removes it.
    await kube.create(CONFIGMAPS, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "hold", namespace: ns, finalizers: ["devctl.test/hold"] },
    });
    const release = async () => {
      await kube.patch(CONFIGMAPS, "hold", ns, { metadata: { finalizers: null } }, "merge").catch(() => {});
    };
    cleanups.push(release);
    await kube.delete(NAMESPACES, ns);
    const r = devctl(["operator", "install", "-n", ns]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`error: namespace ${ns} is being deleted (Terminating since `);
    expect(r.stderr).toContain("nothing was applied");
    expect(await getOrUndefined(CLUSTERROLES, `webapp-operator-${ns}`)).toBeUndefined();
    await release();
  }, 60_000);
});
