/**
 * Upgrading devctl under running services (issue #31 item 4): WebApps the previous release converged are taken
 * over by this build with no Deployment write and no new ReplicaSet, i.e. no rollout of any app.
 * - The previous release (tests/_previous-release.ts: built from its recorded commit, cached) runs with its own CRD
 *   and converges WebApps of the shapes users have: 1, 2 and 3 replicas, an explicit imagePullPolicy, an image
 *   without a tag.
 * - It is stopped; this build's CRD replaces its CRD, as `devctl operator install` would, and this build starts.
 * - Once this build has reconciled every WebApp (each of 2 replicas or more has its new PodDisruptionBudget, the one
 *   child an upgrade adds), nothing it did touched a Deployment (generation, and the time and operation of our field
 *   manager's entry, unchanged), a Service (resourceVersion unchanged) or the ReplicaSets (the same ones), and every
 *   WebApp is still Ready.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { POD_DISRUPTION_BUDGETS } from "../src/kube/resources.ts";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import { PREVIOUS_RELEASE, previousRelease } from "./_previous-release.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  ensureCrd,
  eventually,
  kube,
  REPLICASETS,
  SERVICES,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";

const APPS: [name: string, spec: Record<string, unknown>][] = [
  ["one", { image: "nginx:1.25", replicas: 1, port: 80 }],
  ["two", { image: "nginx:1.25", replicas: 2, port: 8080 }],
  ["three", { image: "myregistry/myapp:v2.1.0", replicas: 3, port: 8080 }],
  ["pinned", { image: "nginx:1.25", replicas: 2, port: 80, imagePullPolicy: "Always" }],
  ["untagged", { image: "nginx", replicas: 1, port: 80 }],
];
const FIELD_MANAGER = "webapp-operator";

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess | undefined;

beforeAll(async () => {
  ns = await tempNamespace("upgrade");
});

afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  await ensureCrd(); // this build's CRD, for whatever runs next
  expect(code ?? 0).toBe(0);
});

/** What a write to the object would change: its identity, generation and our field manager's entries. */
function fingerprint(o: KubeObject): unknown {
  type Entry = { manager?: string; operation?: string; subresource?: string; time?: string };
  const ours = ((o.metadata.managedFields ?? []) as Entry[])
    .filter((e) => e.manager === FIELD_MANAGER)
    .map((e) => [e.operation, e.subresource ?? "", e.time]);
  return { uid: o.metadata.uid, generation: o.metadata.generation, ours };
}

async function objects(rt: ResourceType): Promise<Map<string, KubeObject>> {
  const list = await kube.list<KubeObject>(rt, { namespace: ns.name });
  return new Map(list.items.map((o) => [o.metadata.name as string, o]));
}

async function allReady(): Promise<WebAppLike[]> {
  return eventually(
    async () => {
      const list = (await kube.list<WebAppLike>(WEBAPPS, { namespace: ns.name })).items;
      const ready = list.filter(
        (w) => conditionOf(w, "Ready")?.status === "True" && w.status?.observedGeneration === w.metadata.generation,
      );
      return ready.length === APPS.length ? list : undefined;
    },
    90_000,
    `all ${APPS.length} WebApps Ready`,
  );
}

describe(`an upgrade from the previous release (${PREVIOUS_RELEASE.what})`, () => {
  test("takes over its WebApps with no Deployment write and no new ReplicaSet", async () => {
    const previous = await previousRelease();
    await ensureCrd(previous.crd);
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"], { binary: previous.binary });
    for (const [name, spec] of APPS) await kube.create(WEBAPPS, webapp(name, ns.name, spec));
    await allReady();
    // Let the Deployment controller finish writing their status, so what follows compares settled objects.
    await Bun.sleep(2_000);
    const deployments = await objects(DEPLOYMENTS);
    const services = await objects(SERVICES);
    const replicaSets = await objects(REPLICASETS);
    expect(deployments.size).toBe(APPS.length);
    expect(await op.stop()).toBe(0);
    op = undefined;

    await ensureCrd();
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
    const wantBudget = APPS.filter(([, spec]) => (spec.replicas as number) >= 2).map(([name]) => `${name}-pdb`);
    await eventually(
      async () => {
        const names = [...(await objects(POD_DISRUPTION_BUDGETS)).keys()].sort();
        return JSON.stringify(names) === JSON.stringify([...wantBudget].sort());
      },
      60_000,
      "this build's PodDisruptionBudgets (it has reconciled every WebApp)",
    );
    await allReady();
    await Bun.sleep(2_000); // anything still in flight from its first passes lands

    const after = await objects(DEPLOYMENTS);
    for (const [name, before] of deployments)
      expect([name, fingerprint(after.get(name) as KubeObject)]).toEqual([name, fingerprint(before)]);
    const svcAfter = await objects(SERVICES);
    for (const [name, before] of services)
      expect([name, svcAfter.get(name)?.metadata.resourceVersion]).toEqual([name, before.metadata.resourceVersion]);
    expect([...(await objects(REPLICASETS)).keys()].sort()).toEqual([...replicaSets.keys()].sort());
  });
});
