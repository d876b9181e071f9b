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
 * Each install goes into a namespace of its own and is uninstalled before the next test.
 */
import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { cleanBetweenTests, cleanups, installWaiting, LEASES, runningPod, setWaiting, suffix } from "./_install.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import { DEPLOYMENTS, devctl, eventually, getOrUndefined, kube, NAMESPACES, tempNamespace } from "./_support.ts";

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
