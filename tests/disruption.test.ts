/**
 * A WebApp's PodDisruptionBudget (issue #31) against a real API server and kube-controller-manager's disruption
 * controller, the way a node drain meets it (`kubectl drain` evicts through the eviction subresource):
 * - a WebApp of 3 replicas gets test-app-pdb, owned, maxUnavailable 1; the disruption controller counts its 3
 *   healthy pods and allows one disruption, and an eviction is allowed;
 * - spec.disruptionBudget.minAvailable 3 replaces maxUnavailable on the same object (no second one): the controller
 *   allows no disruption, and an eviction is refused (429, the budget). (A second eviction right after the first is
 *   no deterministic check here: KWOK's replacement pod is ready at once, and the controller may count it healthy
 *   in between; a CI run saw that.)
 * - scaled to 1 replica it has none: the operator deletes it, with a Deleted event saying why.
 * The pods are KWOK's (ready as soon as they are bound), which is all the disruption controller reads.
 */
import { describe, expect, test } from "bun:test";
import { POD_DISRUPTION_BUDGETS } from "../src/kube/resources.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { operatorForFile } from "./_operator.ts";
import {
  conditionOf,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  PODS,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";

interface Budget extends KubeObject {
  spec?: { maxUnavailable?: number; minAvailable?: number; unhealthyPodEvictionPolicy?: string };
  status?: { currentHealthy?: number; disruptionsAllowed?: number; observedGeneration?: number };
}

const NAME = "shop";
const PDB = `${NAME}-pdb`;
const ns = operatorForFile("disruption");

/** The eviction `kubectl drain` sends for a pod: the HTTP status the API server answers with. */
async function evict(pod: string): Promise<number> {
  const body = { apiVersion: "policy/v1", kind: "Eviction", metadata: { name: pod, namespace: ns.name } };
  try {
    await kube.raw("POST", `/api/v1/namespaces/${ns.name}/pods/${pod}/eviction`, body);
    return 201;
  } catch (e) {
    return (e as { code?: number }).code ?? 0;
  }
}

const budget = () => getOrUndefined<Budget>(POD_DISRUPTION_BUDGETS, PDB, ns.name);

describe("a WebApp's PodDisruptionBudget", () => {
  test("3 replicas: owned, maxUnavailable 1; the disruption controller allows one disruption, and an eviction passes", async () => {
    await kube.create(WEBAPPS, webapp(NAME, ns.name, { image: "nginx:1.25", replicas: 3, port: 80 }));
    const pdb = await eventually(
      async () => {
        const b = await budget();
        return b && b.status?.currentHealthy === 3 && b.status?.disruptionsAllowed === 1 ? b : undefined;
      },
      60_000,
      "the budget, with 3 healthy pods counted",
    );
    expect(pdb.spec).toMatchObject({ maxUnavailable: 1, unhealthyPodEvictionPolicy: "AlwaysAllow" });
    expect(pdb.metadata.ownerReferences?.[0]).toMatchObject({ kind: "WebApp", name: NAME, controller: true });
    const ready = await eventually(
      async () => {
        const wa = await getOrUndefined<WebAppLike>(WEBAPPS, NAME, ns.name);
        return conditionOf(wa, "Ready")?.status === "True" ? wa : undefined;
      },
      60_000,
      "the WebApp Ready",
    );
    expect(conditionOf(ready, "Available")?.status).toBe("True");

    const pods = (await kube.list<KubeObject>(PODS, { namespace: ns.name, labelSelector: `app=${NAME}` })).items;
    const [first] = pods.map((p) => p.metadata.name as string).sort();
    expect(await evict(first as string)).toBe(201);
  });

  test("minAvailable 3 instead: the same object carries it, maxUnavailable gone, and a drain's eviction is refused", async () => {
    const uid = (await budget())?.metadata.uid;
    await kube.patch(WEBAPPS, NAME, ns.name, { spec: { disruptionBudget: { minAvailable: 3 } } }, "merge");
    const changed = await eventually(
      async () => {
        const b = await budget();
        return b?.spec?.minAvailable === 3 && b.status?.disruptionsAllowed === 0 ? b : undefined;
      },
      60_000,
      "minAvailable 3 on the budget, and no disruption allowed",
    );
    expect(changed.spec?.maxUnavailable).toBeUndefined();
    expect(changed.metadata.uid).toBe(uid as string);
    const pods = (await kube.list<KubeObject>(PODS, { namespace: ns.name, labelSelector: `app=${NAME}` })).items;
    const live = pods.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name as string);
    expect(await evict(live.sort()[0] as string)).toBe(429);
  });

  test("scaled to 1 replica: the budget is deleted, with a Deleted event saying why", async () => {
    await kube.patch(WEBAPPS, NAME, ns.name, { spec: { replicas: 1, disruptionBudget: null } }, "merge");
    await eventually(async () => (await budget()) === undefined, 30_000, "the budget deleted");
    const events = await eventsOnceSeen(ns.name, NAME, (e) => e.reason === "Deleted", "the Deleted event");
    expect(events.find((e) => e.reason === "Deleted")?.message).toBe(
      `PodDisruptionBudget ${PDB} deleted: the WebApp runs fewer than 2 replicas`,
    );
  });
});
