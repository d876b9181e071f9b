/**
 * The operator collects children the garbage collector left behind, on the real control plane: with
 * kube-controller-manager frozen (SIGSTOP: its garbage collector sees nothing, as after an API-server
 * restart that hid a deletion from it), a WebApp is deleted; the operator deletes its Deployment and
 * Service itself (uid precondition, an OrphanDeleted event and a log line each), and leaves alone an
 * object labelled as ours that no WebApp controls, an unlabelled one the deleted WebApp controls (someone
 * else's) and the children of a live WebApp.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { KubeObject } from "../../src/kube/types.ts";
import { clusterState } from "../cluster/control.ts";
import { logEntries } from "../_faults.ts";
import { startOperator, type OperatorProcess } from "../_operator.ts";
import { describeWhen, LOCAL_CONTROL_PLANE } from "../_skip.ts";
import {
  DEPLOYMENTS,
  SERVICES,
  WEBAPPS,
  ensureCrd,
  eventsFor,
  eventually,
  getOrUndefined,
  kube,
  tempNamespace,
  webapp,
} from "../_support.ts";

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

/** SIGSTOP / SIGCONT to kube-controller-manager (it runs without leader election here, so a pause is safe). */
async function signalControllerManager(signal: "SIGSTOP" | "SIGCONT"): Promise<void> {
  const pid = (await clusterState())?.components["kube-controller-manager"]?.pid;
  if (!pid) throw new Error("no kube-controller-manager in the local cluster's state");
  process.kill(pid, signal);
}

describeWhen(LOCAL_CONTROL_PLANE)("children the garbage collector missed", () => {
  beforeAll(async () => {
    await ensureCrd();
    ns = await tempNamespace("orphans");
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
  });
  afterAll(async () => {
    await signalControllerManager("SIGCONT");
    expect(await op?.stop()).toBe(0);
    await ns?.drop();
  });

  test("are deleted by the operator, with a uid precondition, an event and a log line each; nothing else is touched", async () => {
    const [gone] = await Promise.all(
      ["gone", "kept"].map((name) =>
        kube.create(WEBAPPS, webapp(name, ns.name, { image: "nginx:1.25", replicas: 1, port: 80 })),
      ),
    );
    const impostor: KubeObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "impostor-svc", namespace: ns.name, labels: { app: "x", "managed-by": "webapp-operator" } },
      spec: { selector: { app: "x" }, ports: [{ port: 80 }] },
    };
    const planted = await kube.create(SERVICES, impostor);
    // Someone else's Service controlled by the WebApp that goes, without our label: the operator's caches hold
    // every Service now (no label selector), so the collector must check the label itself.
    const unlabelled = await kube.create<KubeObject>(SERVICES, {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "theirs-svc",
        namespace: ns.name,
        labels: { app: "theirs" },
        ownerReferences: [
          {
            apiVersion: "apps.example.com/v1",
            kind: "WebApp",
            name: "gone",
            uid: gone!.metadata.uid!,
            controller: true,
          },
        ],
      },
      spec: { selector: { app: "theirs" }, ports: [{ port: 80 }] },
    });
    const children = async (name: string) =>
      [
        await getOrUndefined(DEPLOYMENTS, `${name}-deployment`, ns.name),
        await getOrUndefined(SERVICES, `${name}-svc`, ns.name),
      ].filter((c) => c !== undefined);
    await eventually(async () => (await children("gone")).length === 2, 30_000, "gone's children");
    await eventually(async () => (await children("kept")).length === 2, 30_000, "kept's children");
    const kept = await children("kept");

    await signalControllerManager("SIGSTOP");
    const t0 = Date.now();
    await kube.delete(WEBAPPS, "gone", ns.name);
    await eventually(async () => (await children("gone")).length === 0, 90_000, "the orphans to be collected");
    console.error(`orphans: both children of the deleted WebApp collected ${Date.now() - t0} ms after its deletion`);

    for (const child of ["gone-deployment", "gone-svc"]) {
      // The recorder writes events in the background and log lines arrive through a pipe: wait for both.
      const events = await eventually(
        async () => {
          const found = (await eventsFor(ns.name, child)).filter((e) => e.reason === "OrphanDeleted");
          return found.length > 0 ? found : undefined;
        },
        15_000,
        `the OrphanDeleted event of ${child}`,
      );
      await eventually(
        async () => logEntries(op).some((l) => l.msg.startsWith("deleted ") && l.msg.includes(child)),
        5_000,
        `the log line of ${child}'s deletion`,
      );
      expect(events.map((e) => e.type)).toEqual(["Normal"]);
      expect(events[0]?.message).toContain("its controller WebApp gone");
      expect(logEntries(op).filter((l) => l.msg.startsWith("deleted ") && l.msg.includes(child)).length).toBe(1);
    }
    // Untouched: the live WebApp's children (same objects), the labelled Service no WebApp controls and the
    // unlabelled one the deleted WebApp controls.
    expect((await children("kept")).map((c) => c.metadata.uid)).toEqual(kept.map((c) => c.metadata.uid));
    expect((await getOrUndefined(SERVICES, "impostor-svc", ns.name))?.metadata.uid).toBe(planted.metadata.uid);
    expect((await getOrUndefined(SERVICES, "theirs-svc", ns.name))?.metadata.uid).toBe(unlabelled.metadata.uid);
    expect(logEntries(op).filter((l) => l.msg.startsWith("deleted ")).length).toBe(2);
  }, 150_000);
});
