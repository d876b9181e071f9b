/**
 * Failures only pods show, surfaced on the WebApp within 60 s: pods held by a KWOK stage
 * (tests/cluster/stages/pod-waiting.yaml) in ErrImagePull, ImagePullBackOff, InvalidImageName,
 * CrashLoopBackOff and CreateContainerConfigError, and pods the real scheduler cannot place (a LimitRange
 * gives them a CPU request no node has). Each WebApp is Stalled and Degraded with the pod's reason and
 * message, kstatus says Failed, one Warning event is recorded; fixing the image clears it. And a pod that the node
 * lifecycle controller marked not ready (its node's heartbeat went stale) makes its WebApp not Ready until the
 * pod is ready again (tests/cluster/stages/pod-ready-again.yaml plays the kubelet there).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { webAppSelector } from "../src/operator/desired.ts";
import { kstatus } from "./kstatus/kstatus.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  PODS,
  WEBAPPS,
  conditionOf,
  ensureCrd,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

const LIMIT_RANGES: ResourceType = {
  group: "",
  version: "v1",
  plural: "limitranges",
  kind: "LimitRange",
  namespaced: true,
};
const WITHIN_MS = 60_000;

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let full: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("podfail");
  full = await tempNamespace("podfull");
  // Every container in `full` requests 1000 CPUs: the scheduler finds no node for it.
  const limits: KubeObject = {
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: { name: "huge-requests", namespace: full.name },
    spec: { limits: [{ type: "Container", defaultRequest: { cpu: "1000" }, default: { cpu: "1000" } }] },
  };
  await kube.create(LIMIT_RANGES, limits);
  op = await startOperator(["--namespaces", `${ns.name},${full.name}`, "--leader-elect=false"]);
});
afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  await full?.drop();
  expect(code).toBe(0);
});

/** Waits until the WebApp is Stalled with `reason`; returns it and how long that took. */
async function stalled(name: string, namespace: string, reason: string): Promise<[WebAppLike, number]> {
  const started = Date.now();
  const w = await eventually(
    async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, namespace);
      return conditionOf(w, "Stalled")?.reason === reason ? w : undefined;
    },
    WITHIN_MS,
    `${name} to be Stalled ${reason}`,
  );
  return [w, Date.now() - started];
}

describe("a WebApp whose pods cannot run", () => {
  const cases: [string, string][] = [
    ["errimagepull", "ErrImagePull"],
    ["imagepullbackoff", "ImagePullBackOff"],
    ["invalidimagename", "InvalidImageName"],
    ["crashloop", "CrashLoopBackOff"],
    ["configerror", "CreateContainerConfigError"],
  ];
  const image = (reason: string) => `stage.devctl.test/waiting:${reason}`;

  test("is Stalled and Degraded within 60 s with the pod's reason and message, Failed for kstatus, with one Warning", async () => {
    for (const [name, reason] of cases)
      await kube.create(WEBAPPS, webapp(name, ns.name, { image: image(reason), replicas: 2, port: 80 }));
    const took: Record<string, number> = {};
    for (const [name, podReason] of cases) {
      const want = podReason === "ErrImagePull" ? "ImagePullBackOff" : podReason; // the kubelet alternates the two
      const [w, ms] = await stalled(name, ns.name, want);
      took[name] = ms;
      const message = conditionOf(w, "Stalled")?.message ?? "";
      expect(message).toContain(
        `container app ${podReason}: set by the devctl test stage for image ${image(podReason)}`,
      );
      expect(message).toMatch(new RegExp(`^pod ${name}-deployment-\\S+ \\(and 1 more pods\\): `));
      expect(conditionOf(w, "Degraded")).toMatchObject({ status: "True", reason: want });
      expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: want });
      expect(conditionOf(w, "Reconciling")).toBeUndefined();
      expect((await kstatus([w]))[0]?.status).toBe("Failed");
      const events = await eventsOnceSeen(ns.name, name, (e) => e.type === "Warning", `a Warning event about ${name}`);
      const warnings = events.filter((e) => e.type === "Warning");
      expect(warnings.map((e) => [e.reason, e.count ?? 1])).toEqual([[want, 1]]);
    }
    console.error(`pod failures surfaced after (ms, from the first check): ${JSON.stringify(took)}`);
  });

  test("recovers when the image is fixed: Stalled is cleared and the WebApp becomes Ready", async () => {
    const started = Date.now();
    await kube.patch(WEBAPPS, "crashloop", ns.name, { spec: { image: "nginx:1.25" } }, "merge");
    const w = await eventually(
      async () => {
        const w = await getOrUndefined<WebAppLike>(WEBAPPS, "crashloop", ns.name);
        return conditionOf(w, "Ready")?.status === "True" ? w : undefined;
      },
      WITHIN_MS,
      "crashloop to be Ready",
    );
    expect(conditionOf(w, "Stalled")).toBeUndefined();
    expect(conditionOf(w, "Degraded")?.status).toBe("False");
    console.error(`recovered in ${Date.now() - started} ms`);
  });
});

describe("a WebApp whose pods no node can take", () => {
  test("is Stalled Unschedulable with the scheduler's message within 60 s", async () => {
    await kube.create(WEBAPPS, webapp("big", full.name, { image: "nginx:1.25", replicas: 1, port: 80 }));
    const [w, ms] = await stalled("big", full.name, "Unschedulable");
    expect(conditionOf(w, "Stalled")?.message).toMatch(
      /cannot be scheduled: 0\/\d+ nodes are available: .*Insufficient cpu/,
    );
    expect((await kstatus([w]))[0]?.status).toBe("Failed");
    console.error(`unschedulable surfaced after ${ms} ms`);
  });
});

describe("a WebApp whose pod its node's controller marked not ready", () => {
  const readyIs = (name: string, status: string) => async () => {
    const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name);
    return conditionOf(w, "Ready")?.status === status ? w : undefined;
  };
  const podReady = (p: KubeObject) =>
    (p.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
      (c) => c.type === "Ready",
    )?.status;

  test("is not Ready while the pod is, and Ready again once the pod's readiness is reported again", async () => {
    await kube.create(WEBAPPS, webapp("node-lost", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 }));
    await eventually(readyIs("node-lost", "True"), WITHIN_MS, "node-lost to be Ready");
    const before = await kube.list(PODS, { namespace: ns.name, labelSelector: webAppSelector("node-lost") });
    expect(before.items).toHaveLength(1);
    const podName = (before.items[0] as KubeObject).metadata.name ?? "";
    // What the node lifecycle controller writes on a node whose heartbeat is stale (MarkPodsNotReady): the
    // pod's Ready condition False, nothing else; its containers still say ready.
    const marked = Date.now();
    await kube.patch(
      PODS,
      podName,
      ns.name,
      { status: { conditions: [{ type: "Ready", status: "False", lastTransitionTime: new Date().toISOString() }] } },
      "strategic",
      { subresource: "status" },
    );
    // The stage waits 5 s before it reports the pod ready again: the WebApp must say so before then.
    await eventually(readyIs("node-lost", "False"), 5_000, "node-lost to be not Ready while its pod is not");
    const notReadyAfter = Date.now() - marked;
    await eventually(readyIs("node-lost", "True"), 30_000, "node-lost to be Ready again");
    const after = await kube.list(PODS, { namespace: ns.name, labelSelector: webAppSelector("node-lost") });
    expect(after.items.map((p) => [p.metadata.name, podReady(p)])).toEqual([[podName, "True"]]);
    console.error(
      `not Ready ${notReadyAfter} ms after the pod was marked, Ready again after ${Date.now() - marked} ms`,
    );
  });
});
