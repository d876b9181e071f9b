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
 * - The hardened install (issue #33): the namespace enforces the restricted Pod Security Standard (the
 *   operator's pods are admitted, a pod violating it is refused), the PodDisruptionBudget covers the
 *   operator's pod, --network-policy adds the NetworkPolicy; status reports each one removed with its fix,
 *   install restores them, install without --network-policy deletes the policy, uninstall removes them all.
 *   A namespace that existed before keeps its Pod Security labels, and install and status say what is missing.
 * Each install goes into a namespace of its own and is uninstalled before the next test.
 */
import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import {
  cleanBetweenTests,
  cleanups,
  installed,
  installWaiting,
  LEASES,
  runningPod,
  setWaiting,
  suffix,
} from "./_install.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  devctl,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  NAMESPACES,
  tempNamespace,
} from "./_support.ts";
import { NETWORK_POLICIES, POD_DISRUPTION_BUDGETS, PODS } from "../src/kube/resources.ts";

cleanBetweenTests();

describe("devctl operator install: pod flags", () => {
  test("a bad pod flag is a usage error naming it, and nothing is created", async () => {
    const ns = `install-bad-${suffix}`;
    for (const [flag, value, says] of [
      [
        "--toleration",
        "dedicated=ops:NoRun",
        '--toleration "dedicated=ops:NoRun" is invalid: the effect must be one of',
      ],
      ["--node-selector", "pool", '--node-selector "pool" must be key=value'],
      ["--image-pull-policy", "never", '--image-pull-policy "never" must be one of: Always, IfNotPresent, Never'],
      ["--image-pull-secret", "Reg_Cred", '--image-pull-secret "Reg_Cred" is not a Secret name'],
      ["--memory-limit", "32Mi", "memory limit 32Mi is below the operator's idle footprint"],
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
    console.error(`install --wait returned ${Date.now() - started} ms after the operator was ready`);
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
    console.error(`install --wait failed ${Date.now() - patched} ms after the pod reported ErrImageNeverPull`);
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

const PSA = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
  "pod-security.kubernetes.io/audit": "restricted",
  "pod-security.kubernetes.io/audit-version": "latest",
  "pod-security.kubernetes.io/warn": "restricted",
  "pod-security.kubernetes.io/warn-version": "latest",
};
const lines = (s: string) => s.split("\n").filter(Boolean);
type Obj = KubeObject & Record<string, any>;

describe("the hardened install", () => {
  test("install creates the namespace's Pod Security labels, the PodDisruptionBudget and the NetworkPolicy; a pod violating restricted is refused there", async () => {
    const ns = `install-hardened-${suffix}`;
    installed.push(ns);
    const r = devctl(["operator", "install", "-n", ns, "--replicas", "1", "--network-policy"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({
      code: 0,
      stderr: expect.not.stringContaining("Pod Security"),
    });
    expect(lines(r.stdout).slice(-3)).toEqual([
      "networkpolicy.networking.k8s.io/webapp-operator created",
      "poddisruptionbudget.policy/webapp-operator created",
      "deployment.apps/webapp-operator created",
    ]);
    expect((await kube.get(NAMESPACES, ns)).metadata.labels).toMatchObject(PSA);

    // The operator's pod is admitted under enforce=restricted; one that violates it is refused.
    const pod = await runningPod(ns);
    expect(pod.metadata.labels?.["app.kubernetes.io/name"]).toBe("devctl-operator");
    const refused = await kube
      .create(PODS, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "violates-restricted", namespace: ns },
        spec: { containers: [{ name: "c", image: "busybox:1.36" }] },
      })
      .then(
        () => "admitted",
        (e: Error) => e.message,
      );
    expect(refused).toContain('violates PodSecurity "restricted:latest"');

    // The PodDisruptionBudget covers exactly the operator's pod: the disruption controller counts it.
    const pdb = await eventually(
      async () => {
        const p = await kube.get<Obj>(POD_DISRUPTION_BUDGETS, "webapp-operator", ns);
        return p.status?.expectedPods === 1 ? p : undefined;
      },
      30_000,
      "the PodDisruptionBudget to count the operator's pod",
    );
    expect(pdb.spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: { "app.kubernetes.io/name": "devctl-operator" } },
    });

    // The NetworkPolicy admits the container port the operator serves metrics on, only from labelled namespaces.
    const policy = await kube.get<Obj>(NETWORK_POLICIES, "webapp-operator", ns);
    const dep = await kube.get<Obj>(DEPLOYMENTS, "webapp-operator", ns);
    const container = dep.spec.template.spec.containers[0];
    const metricsPort = Number(/--metrics-bind-address=:(\d+)/.exec(container.args.join(" "))?.[1]);
    const named = container.ports.find((p: { containerPort: number }) => p.containerPort === metricsPort)?.name;
    expect(named).toBeString();
    expect(policy.spec).toEqual({
      podSelector: { matchLabels: { "app.kubernetes.io/name": "devctl-operator" } },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { metrics: "enabled" } } }],
          ports: [{ protocol: "TCP", port: named }],
        },
      ],
    });
    const status = devctl(["operator", "status", "-n", ns]);
    expect(status.stdout).toContain(
      'Hardening: Pod Security "restricted" enforced, PodDisruptionBudget (maxUnavailable 1), ' +
        "NetworkPolicy (metrics only from namespaces labelled metrics=enabled)\n",
    );
    expect(status.stdout).not.toMatch(/Pod Security Standard|no PodDisruptionBudget|no NetworkPolicy/);
  }, 60_000);

  test("status reports each part removed with its fix; install restores them but not a label someone changed; without --network-policy it deletes the policy; uninstall removes them", async () => {
    const ns = `install-tampered-${suffix}`;
    installed.push(ns);
    cleanups.push(() => kube.delete(NAMESPACES, ns).catch(() => {}));
    expect(devctl(["operator", "install", "-n", ns, "--replicas", "1", "--network-policy"]).code).toBe(0);
    await kube.delete(POD_DISRUPTION_BUDGETS, "webapp-operator", ns);
    await kube.delete(NETWORK_POLICIES, "webapp-operator", ns);
    expect(
      kubectl(["label", "namespace", ns, "pod-security.kubernetes.io/enforce=privileged", "--overwrite"]).code,
    ).toBe(0);
    const broken = devctl(["operator", "status", "-n", ns]);
    expect(broken.code).toBe(1);
    const fix = `devctl operator install -n ${ns} --network-policy`;
    expect(broken.stdout).toContain(
      `namespace ${ns} does not enforce the "restricted" Pod Security Standard (pod-security.kubernetes.io/enforce is "privileged"); ` +
        `the operator's pods meet it: kubectl label namespace ${ns} pod-security.kubernetes.io/enforce=restricted --overwrite`,
    );
    expect(broken.stdout).toContain(`there is no PodDisruptionBudget webapp-operator in namespace ${ns}`);
    expect(broken.stdout).toContain(
      `the operator was installed with --network-policy but there is no NetworkPolicy webapp-operator in namespace ${ns}`,
    );
    expect(broken.stdout.split(fix).length - 1).toBe(2);

    // Install again restores what devctl owns; the label someone else changed stays, and install says so.
    const again = devctl(["operator", "install", "-n", ns, "--replicas", "1", "--network-policy"]);
    expect(again.code).toBe(0);
    expect(lines(again.stdout).filter((l) => !l.endsWith(" unchanged"))).toEqual([
      "networkpolicy.networking.k8s.io/webapp-operator created",
      "poddisruptionbudget.policy/webapp-operator created",
    ]);
    expect(again.stderr).toContain(
      `the Pod Security labels of namespace ${ns} are not devctl's to set, so they stay as they are ` +
        '(pod-security.kubernetes.io/enforce is "privileged")',
    );
    expect((await kube.get(NAMESPACES, ns)).metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("privileged");
    const restored = devctl(["operator", "status", "-n", ns]);
    expect(restored.stdout).not.toMatch(/no PodDisruptionBudget|no NetworkPolicy/);
    expect(restored.stdout).toContain('does not enforce the "restricted" Pod Security Standard');
    expect(
      kubectl(["label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted", "--overwrite"]).code,
    ).toBe(0);
    expect(devctl(["operator", "status", "-n", ns]).stdout).not.toContain("Pod Security Standard");

    // Without --network-policy install deletes the one it added, and status no longer wants it.
    const plain = devctl(["operator", "install", "-n", ns, "--replicas", "1"]);
    expect(plain.code).toBe(0);
    expect(lines(plain.stdout)).toContain("networkpolicy.networking.k8s.io/webapp-operator deleted");
    expect(await getOrUndefined(NETWORK_POLICIES, "webapp-operator", ns)).toBeUndefined();
    expect(devctl(["operator", "status", "-n", ns]).stdout).toContain(
      "no NetworkPolicy (install --network-policy adds one)",
    );

    expect(devctl(["operator", "install", "-n", ns, "--replicas", "1", "--network-policy"]).code).toBe(0);
    const gone = devctl(["operator", "uninstall", "-n", ns]);
    expect(gone.code).toBe(0);
    expect(lines(gone.stdout)).toContain("poddisruptionbudget.policy/webapp-operator deleted");
    expect(lines(gone.stdout)).toContain("networkpolicy.networking.k8s.io/webapp-operator deleted");
    expect(await getOrUndefined(POD_DISRUPTION_BUDGETS, "webapp-operator", ns)).toBeUndefined();
    expect(await getOrUndefined(NETWORK_POLICIES, "webapp-operator", ns)).toBeUndefined();
  }, 90_000);

  test("a namespace that existed before keeps its Pod Security labels; install and status say what is missing", async () => {
    const ns = `install-existing-${suffix}`;
    await kube.create(NAMESPACES, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns, labels: { "pod-security.kubernetes.io/enforce": "baseline" } },
    });
    cleanups.push(() => kube.delete(NAMESPACES, ns).catch(() => {}));
    installed.push(ns);
    const r = devctl(["operator", "install", "-n", ns, "--replicas", "1"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `the Pod Security labels of namespace ${ns} are not devctl's to set, so they stay as they are ` +
        '(pod-security.kubernetes.io/enforce is "baseline", pod-security.kubernetes.io/enforce-version is not set, ',
    );
    expect(r.stderr).toContain(
      `to enforce it there: kubectl label namespace ${ns} pod-security.kubernetes.io/enforce=restricted ` +
        "pod-security.kubernetes.io/enforce-version=latest ",
    );
    const labels = (await kube.get(NAMESPACES, ns)).metadata.labels ?? {};
    expect(labels["pod-security.kubernetes.io/enforce"]).toBe("baseline");
    expect(Object.keys(labels).filter((k) => k.startsWith("pod-security."))).toEqual([
      "pod-security.kubernetes.io/enforce",
    ]);
    const status = devctl(["operator", "status", "-n", ns]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain(
      'Hardening: Pod Security "baseline" enforced, PodDisruptionBudget (maxUnavailable 1)',
    );
    expect(status.stdout).toContain(
      `namespace ${ns} does not enforce the "restricted" Pod Security Standard (pod-security.kubernetes.io/enforce is "baseline", `,
    );
    const gone = devctl(["operator", "uninstall", "-n", ns]);
    expect(gone.stdout).toContain(`namespace/${ns} kept`);
  }, 60_000);
});
