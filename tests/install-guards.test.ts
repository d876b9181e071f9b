/**
 * Never two devctl operators reconciling the same WebApps, on a real API server:
 * - install refuses a second namespace (unless --force, exit 1 naming the first and how to move it)
 *   and a Terminating namespace, before applying anything;
 * - `operator run` outside the cluster joins the installed operator's Lease, or refuses without one;
 * - status flags two operators, a foreign image version, ready pods with no leader and a leader
 *   outside the installation (exit 1); `uninstall --wait` returns when the namespace is gone.
 * Each install goes into a namespace of its own and is uninstalled before the next test.
 */
import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { cleanBetweenTests, CLUSTERROLES, cleanups, installed, installWaiting, LEASES, suffix } from "./_install.ts";
import { startOperator } from "./_operator.ts";
import { devctl, eventually, getOrUndefined, kube, NAMESPACES, tempNamespace } from "./_support.ts";

cleanBetweenTests();

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
