/**
 * spec.autoscaling (issue #31) against a real API server and kube-controller-manager's HorizontalPodAutoscaler
 * controller. No metrics API runs here (the real-node suite has metrics-server), which leaves the controller one
 * decision it makes without metrics: a Deployment below minReplicas is scaled up to it, through the scale
 * subresource, as it scales on CPU. What is checked:
 * - the WebApp gets <name>-hpa, owned, for its Deployment; the Deployment is created at minReplicas, and the
 *   WebApp turns Ready with status.autoscaling once the controller synced; a Deployment below minReplicas is scaled
 *   up to it by the controller, not by the operator (it leaves the count alone);
 * - a scale through the scale subresource (what the autoscaler does on CPU) is never reverted, and neither is it by
 *   an apply of a changed pod template (a new image);
 * - a WebApp that ran a fixed count, whose Deployment's replicas our apply owned, switched to autoscaling together
 *   with a new image, keeps its pods: the apply that drops spec.replicas from the intent does not reset it to 1;
 * - removing spec.autoscaling without spec.replicas is refused by the API server, saying what to set; with it, the
 *   HorizontalPodAutoscaler is deleted and the Deployment runs the replicas given, our apply owning them again.
 */
import { describe, expect, test } from "bun:test";
import { HORIZONTAL_POD_AUTOSCALERS } from "../src/kube/resources.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { operatorForFile } from "./_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  eventually,
  getOrUndefined,
  kube,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";

interface Deployment extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { readyReplicas?: number; observedGeneration?: number };
}

const requests = { requests: { cpu: "10m" } };
const ns = operatorForFile("autoscaling");

const deployment = (name: string) => getOrUndefined<Deployment>(DEPLOYMENTS, `${name}-deployment`, ns.name);
const webApp = (name: string) => getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name);

/** The field managers that own the Deployment's spec.replicas. */
async function replicaOwners(name: string): Promise<string[]> {
  const d = await deployment(name);
  const entries = (d?.metadata.managedFields ?? []) as { manager?: string; fieldsV1?: { "f:spec"?: object } }[];
  return entries
    .filter((e) => e.fieldsV1?.["f:spec"] && "f:replicas" in e.fieldsV1["f:spec"])
    .map((e) => e.manager ?? "");
}

/** What the HorizontalPodAutoscaler controller does: a write of the Deployment's scale subresource. */
async function scaleAsTheAutoscaler(name: string, replicas: number): Promise<void> {
  await kube.patch(DEPLOYMENTS, `${name}-deployment`, ns.name, { spec: { replicas } }, "merge", {
    subresource: "scale",
    fieldManager: "autoscaler-stand-in",
  });
}

async function setImage(name: string, image: string, extra: Record<string, unknown> = {}): Promise<void> {
  await kube.patch(WEBAPPS, name, ns.name, { spec: { image, ...extra } }, "merge");
}

const rolledOut = (name: string, image: string, replicas: number) =>
  eventually(
    async () => {
      const d = await deployment(name);
      const ready = d?.spec?.template?.spec?.containers?.[0]?.image === image && d.status?.readyReplicas === replicas;
      return ready && d.status?.observedGeneration === d.metadata.generation ? d : undefined;
    },
    60_000,
    `${name}'s Deployment rolled out with ${image}, ${replicas} ready`,
  );

describe("spec.autoscaling", () => {
  test("an owned HorizontalPodAutoscaler; created at minReplicas, Ready with its counts; the controller keeps the minimum", async () => {
    const spec = {
      image: "nginx:1.25",
      port: 80,
      resources: requests,
      autoscaling: { minReplicas: 2, maxReplicas: 4 },
    };
    await kube.create(WEBAPPS, webapp("web", ns.name, spec));
    const hpa = await eventually(
      () => getOrUndefined<KubeObject>(HORIZONTAL_POD_AUTOSCALERS, "web-hpa", ns.name),
      30_000,
      "web-hpa",
    );
    expect(hpa.metadata.ownerReferences?.[0]).toMatchObject({ kind: "WebApp", name: "web", controller: true });
    expect(hpa.spec).toMatchObject({
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web-deployment" },
      minReplicas: 2,
      maxReplicas: 4,
    });
    // Created at the minimum, the count ours (the create's entry) until someone else changes it.
    const created = await eventually(() => deployment("web"), 30_000, "web-deployment");
    expect(created.spec?.replicas).toBe(2);
    expect(await replicaOwners("web")).toEqual(["webapp-operator"]);
    const ready = await eventually(
      async () => {
        const w = await webApp("web");
        const counted = w?.status?.autoscaling?.currentReplicas === 2 && w.status?.readyReplicas === 2;
        return counted && conditionOf(w, "Ready")?.status === "True" ? w : undefined;
      },
      60_000,
      "web Ready with 2 replicas, as its autoscaler counts them",
    );
    // No metrics API on this cluster: the autoscaler says so, and so does the WebApp, Ready all the same.
    expect(conditionOf(ready, "Available")?.message).toContain("autoscaled between 2 and 4 pods");
    await eventually(
      async () => {
        const message = conditionOf(await webApp("web"), "Available")?.message ?? "";
        return message.includes("the autoscaler is not scaling on metrics (FailedGetResourceMetric") ? true : undefined;
      },
      60_000,
      "the autoscaler's FailedGetResourceMetric in the Available message",
    );
    // Below its minimum: the controller scales it back up, through the scale subresource; the operator leaves it.
    await scaleAsTheAutoscaler("web", 1);
    await eventually(
      async () => ((await deployment("web"))?.spec?.replicas === 2 ? true : undefined),
      60_000,
      "the HorizontalPodAutoscaler controller scaling web-deployment back to 2",
    );
    const owners = await replicaOwners("web");
    expect(owners).not.toContain("webapp-operator");
    expect(owners).not.toContain("autoscaler-stand-in");
  });

  test("a scale through the scale subresource is never reverted, nor by the apply of a new image", async () => {
    await scaleAsTheAutoscaler("web", 4);
    await Bun.sleep(3_000);
    expect((await deployment("web"))?.spec?.replicas).toBe(4);
    await setImage("web", "nginx:1.26");
    const d = await rolledOut("web", "nginx:1.26", 4);
    expect(d.spec?.replicas).toBe(4);
    await eventually(
      async () => ((await webApp("web"))?.status?.autoscaling?.currentReplicas === 4 ? true : undefined),
      60_000,
      "status.autoscaling.currentReplicas 4",
    );
  });

  test("switching a fixed count to autoscaling with a new image keeps the pods: the apply does not reset replicas", async () => {
    await kube.create(
      WEBAPPS,
      webapp("fixed", ns.name, { image: "nginx:1.25", port: 80, replicas: 3, resources: requests }),
    );
    await rolledOut("fixed", "nginx:1.25", 3);
    // A drift the operator reverts with an apply: our Apply entry owns spec.replicas from then on.
    await kube.patch(DEPLOYMENTS, "fixed-deployment", ns.name, { spec: { replicas: 1 } }, "merge");
    await eventually(
      async () =>
        (await replicaOwners("fixed")).includes("webapp-operator") && (await deployment("fixed"))?.spec?.replicas === 3
          ? true
          : undefined,
      30_000,
      "the scale reverted by our apply",
    );
    await setImage("fixed", "nginx:1.26", { replicas: null, autoscaling: { minReplicas: 1, maxReplicas: 5 } });
    const d = await rolledOut("fixed", "nginx:1.26", 3);
    expect(d.spec?.replicas).toBe(3);
    const owners = await replicaOwners("fixed");
    expect(owners).toContain("webapp-operator-replicas-keeper");
    expect(owners).not.toContain("webapp-operator");
  });

  test("removing autoscaling needs spec.replicas, said by the API server; with it the Deployment runs that many", async () => {
    const refused = await kube
      .patch(WEBAPPS, "web", ns.name, { spec: { autoscaling: null } }, "merge")
      .then(() => "accepted")
      .catch((e: Error) => e.message);
    expect(refused).toContain("spec.autoscaling was removed without spec.replicas: set spec.replicas");
    await kube.patch(WEBAPPS, "web", ns.name, { spec: { autoscaling: null, replicas: 3 } }, "merge");
    await eventually(
      async () => ((await getOrUndefined(HORIZONTAL_POD_AUTOSCALERS, "web-hpa", ns.name)) ? undefined : true),
      30_000,
      "web-hpa deleted",
    );
    await rolledOut("web", "nginx:1.26", 3);
    expect(await replicaOwners("web")).toContain("webapp-operator");
    // The status mirrors the Deployment's, which counts the 4th pod until the ReplicaSet controller has let it go:
    // Ready (rolled out, as kubectl says) may come a moment before 3.
    await eventually(
      async () => {
        const w = await webApp("web");
        const ready = conditionOf(w, "Ready")?.status === "True";
        return ready && w?.status?.autoscaling === undefined && w?.status?.replicas === 3 ? w : undefined;
      },
      30_000,
      "web Ready with 3 replicas and without status.autoscaling",
    );
  });
});
