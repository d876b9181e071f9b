import { describe, expect, test } from "bun:test";
import { KubeError } from "../kube/errors.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import {
  findInstallations,
  INSTALLATION_SELECTOR,
  installPreflight,
  leaseNamespaceFor,
  otherInstallationProblem,
  terminatingProblem,
  type Installation,
} from "./installations.ts";
import { buildManifests, INSTALL_RESOURCES } from "./manifests.ts";
import { uninstall, waitUntilGone } from "./uninstall.ts";

const DEPLOYMENTS = INSTALL_RESOURCES.Deployment as ResourceType;
const NAMESPACES = INSTALL_RESOURCES.Namespace as ResourceType;
const at = (namespace: string, version = "0.1.0"): Installation => ({
  namespace,
  version,
  image: `ghcr.io/devctl/devctl:${version}`,
  replicas: 2,
});
const deploymentIn = (namespace: string) =>
  buildManifests({ namespace, image: "ghcr.io/devctl/devctl:0.1.0", replicas: 2, version: "0.1.0" }).find(
    (o) => o.kind === "Deployment",
  ) as KubeObject;

describe("otherInstallationProblem", () => {
  test("an operator in another namespace is named, with how to move it and --force", () => {
    const p = otherInstallationProblem("platform", [at("devctl-system")]);
    expect(p).toBe(
      "a devctl operator is already installed in namespace devctl-system (version 0.1.0, image ghcr.io/devctl/devctl:0.1.0); " +
        "a second one in namespace platform would reconcile every WebApp as well, and the two would fight. " +
        "To move it: devctl operator uninstall -n devctl-system --wait, then devctl operator install -n platform. " +
        "To install a second one anyway (for example with --namespaces set apart), pass --force",
    );
  });

  test("the same namespace (an upgrade) and an empty cluster are fine", () => {
    expect(otherInstallationProblem("devctl-system", [at("devctl-system")])).toBeUndefined();
    expect(otherInstallationProblem("devctl-system", [])).toBeUndefined();
  });
});

describe("terminatingProblem", () => {
  test("a namespace being deleted is refused, saying so and what to do", () => {
    const p = terminatingProblem({
      metadata: { name: "devctl-system", deletionTimestamp: "2026-12-01T10:00:00Z" },
      status: { phase: "Terminating" },
    });
    expect(p).toStartWith(
      "namespace devctl-system is being deleted (Terminating since 2026-12-01T10:00:00Z); nothing was applied. Wait until it is gone",
    );
    expect(p).toContain("devctl operator uninstall -n devctl-system --wait");
    expect(terminatingProblem({ metadata: { name: "x" }, status: { phase: "Active" } })).toBeUndefined();
    expect(terminatingProblem(undefined)).toBeUndefined();
  });
});

describe("leaseNamespaceFor", () => {
  test("joins the one installed operator's election", () => {
    expect(leaseNamespaceFor([at("devctl-system")])).toEqual({ kind: "join", namespace: "devctl-system" });
  });

  test("refuses with none, several, or no right to look, saying what to pass", () => {
    for (const input of [[], [at("a"), at("b")], { forbidden: "forbidden: cannot list deployments.apps" }]) {
      const c = leaseNamespaceFor(input);
      expect(c.kind).toBe("refuse");
      expect((c as { message: string }).message).toContain(
        "operator run outside a cluster with leader election needs --lease-namespace",
      );
      expect((c as { message: string }).message).toContain("--leader-elect=false");
    }
    expect((leaseNamespaceFor([at("a"), at("b")]) as { message: string }).message).toContain("installed in a, b");
  });
});

describe("installPreflight", () => {
  const setup = () => {
    const fake = createFakeCluster();
    const lists: { labelSelector?: string }[] = [];
    const listAll = fake.listAll.bind(fake);
    fake.listAll = async <T extends KubeObject>(rt: ResourceType, o?: Parameters<typeof fake.listAll>[1]) => {
      lists.push({ ...(o?.labelSelector ? { labelSelector: o.labelSelector } : {}) });
      return listAll<T>(rt, o);
    };
    return { fake, lists };
  };

  test("refuses when an operator is installed elsewhere, by the devctl labels, and --force lets it through", async () => {
    const { fake, lists } = setup();
    fake.put(DEPLOYMENTS, deploymentIn("devctl-system"));
    const err = await installPreflight(fake, "platform", { force: false }).catch((e: Error) => e);
    expect((err as Error).name).toBe("InstallError");
    expect((err as Error).message).toContain("already installed in namespace devctl-system");
    expect(lists).toEqual([{ labelSelector: INSTALLATION_SELECTOR }]);
    expect(await installPreflight(fake, "platform", { force: true })).toBeUndefined();
    expect(await installPreflight(fake, "devctl-system", { force: false })).toBeUndefined();
    expect(fake.calls.filter((c) => c.method !== "get" && c.method !== "list")).toEqual([]);
  });

  test("a Terminating namespace is refused even with --force", async () => {
    const { fake } = setup();
    fake.put(NAMESPACES, { metadata: { name: "ns", deletionTimestamp: "2026-12-01T10:00:00Z" } });
    const err = await installPreflight(fake, "ns", { force: true }).catch((e: Error) => e);
    expect((err as Error).message).toStartWith("namespace ns is being deleted");
  });

  test("an identity that may not list Deployments cluster-wide is told, and not stopped", async () => {
    const { fake } = setup();
    fake.listAll = async () => {
      throw new KubeError("Forbidden", "forbidden: cannot list deployments.apps at the cluster scope", 403);
    };
    const notes: string[] = [];
    await installPreflight(fake, "ns", { force: false, onNote: (l) => notes.push(l) });
    expect(notes).toEqual([
      "could not check for devctl operators in other namespaces: forbidden: cannot list deployments.apps at the cluster scope",
    ]);
  });

  test("findInstallations skips a Deployment being deleted", async () => {
    const { fake } = setup();
    const d = deploymentIn("old");
    fake.put(DEPLOYMENTS, { ...d, metadata: { ...d.metadata, deletionTimestamp: "2026-12-01T10:00:00Z" } });
    fake.put(DEPLOYMENTS, deploymentIn("new"));
    expect((await findInstallations(fake)).map((i) => i.namespace)).toEqual(["new"]);
  });
});

describe("waitUntilGone", () => {
  test("returns once every deleted object and the operator's pods are gone, saying what it waits for", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    for (const o of buildManifests({ namespace: "ns", image: "i", replicas: 1 }))
      fake.put(INSTALL_RESOURCES[o.kind as string] as ResourceType, {
        ...o,
        metadata: { ...o.metadata, managedFields: [{ manager: "devctl" }] },
      });
    const results = await uninstall(fake, "ns", { deleteCrd: false });
    // The namespace lingers while Terminating, with one pod still shutting down.
    fake.put(NAMESPACES, { metadata: { name: "ns", deletionTimestamp: "2026-12-01T10:00:00Z" } });
    const pods: KubeObject[] = [{ metadata: { name: "webapp-operator-abc", namespace: "ns" } }];
    fake.list = (async () => ({ metadata: {}, items: [...pods] })) as typeof fake.list;
    const lines: string[] = [];
    let done = false;
    const waiting = waitUntilGone(fake, "ns", results, {
      clock,
      timeoutMs: 60_000,
      onProgress: (l) => lines.push(l),
    }).then(() => (done = true));
    await clock.advance(3000);
    expect(done).toBe(false);
    pods.length = 0;
    await clock.advance(1000);
    expect(done).toBe(false);
    fake.objects.delete("namespaces//ns");
    await clock.advance(1000);
    await waiting;
    expect(lines).toEqual([
      "waiting for namespace/ns, pod/webapp-operator-abc to be gone (0s)",
      "waiting for namespace/ns to be gone (4s)",
    ]);
  });

  test("times out naming what is left", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    fake.put(NAMESPACES, { metadata: { name: "ns", deletionTimestamp: "x" } });
    fake.list = (async () => ({ metadata: {}, items: [] })) as typeof fake.list;
    const results = [
      { name: "namespace/ns", action: "already being deleted" as const, ref: { rt: NAMESPACES, name: "ns" } },
    ];
    const p = waitUntilGone(fake, "ns", results, { clock, timeoutMs: 5000 }).catch((e: Error) => e);
    await clock.advance(6000);
    expect(((await p) as Error).message).toStartWith("still there after 5 s: namespace/ns.");
  });
});
