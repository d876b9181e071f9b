import { describe, expect, test } from "bun:test";
import { DEPLOYMENT_RESOURCE, SERVICE_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import type { KubeList, KubeObject } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import type { Informer } from "../runtime/informer.ts";
import type { Logger } from "../runtime/logger.ts";
import { createFakeKube, WatchScript } from "../runtime/_fake-kube.ts";
import { desiredDeployment } from "./desired.ts";
import { webAppCaches } from "./manager.ts";
import { testApp } from "./_test-fixtures.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const page = (items: KubeObject[]): KubeList => ({ metadata: { resourceVersion: "10" }, items });
const managedFields = [{ manager: "kubectl", operation: "Update" }];

function ourDeployment(): KubeObject {
  const d = desiredDeployment(testApp());
  return {
    ...d,
    metadata: { ...d.metadata, uid: "ours", resourceVersion: "1", managedFields },
    status: { replicas: 3 },
  };
}
const theirDeployment: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "theirs", namespace: "default", uid: "theirs", resourceVersion: "2", managedFields },
  spec: { replicas: 9 },
  status: { replicas: 9 },
};

/** Starts one informer of the caches, answers its LIST with `items` and waits for it to sync. */
async function synced(
  kube: ReturnType<typeof createFakeKube>,
  informer: Informer<KubeObject>,
  items: KubeObject[],
  stop: AbortSignal,
) {
  const done = informer.start(stop);
  kube.answerList(page(items));
  kube.answerWatch(new WatchScript());
  await informer.waitForSync(stop);
  return { done };
}

describe("the operator's caches", () => {
  test("watch WebApps and every Deployment and Service, with no label selector, all namespaces in one stream", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const caches = webAppCaches(kube, { namespaces: [], logger: quiet }, clock);
    const stop = new AbortController();
    const running = [
      await synced(kube, caches.webapps, [], stop.signal),
      await synced(kube, caches.children.Deployment, [ourDeployment(), theirDeployment], stop.signal),
      await synced(kube, caches.children.Service, [], stop.signal),
    ];
    const lists = kube.calls.filter((c) => c.method === "list" || c.method === "watch");
    expect(lists.map((c) => `${c.method} ${c.rt.plural}`)).toEqual([
      "list webapps",
      "watch webapps",
      "list deployments",
      "watch deployments",
      "list services",
      "watch services",
    ]);
    for (const c of lists) {
      expect(c.args.labelSelector).toBeUndefined();
      expect(c.args.fieldSelector).toBeUndefined();
      expect(c.args.namespace).toBeUndefined();
    }
    expect(lists.map((c) => c.rt)).toContain(WEBAPP_RESOURCE);
    expect(lists.map((c) => c.rt)).toContain(SERVICE_RESOURCE);
    const ours = caches.children.Deployment.get("default/test-app-deployment");
    expect(ours?.spec).toEqual(ourDeployment().spec);
    expect(ours?.status).toEqual({ replicas: 3 });
    expect(ours?.metadata.managedFields).toEqual(managedFields); // reduced to manager/operation (ownership.ts)
    expect(caches.children.Deployment.get("default/theirs")).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "theirs", namespace: "default", uid: "theirs", resourceVersion: "2" },
    });
    stop.abort();
    await Promise.all(running.map((r) => r.done));
  });

  test("WebApps are cached without managedFields; one informer per watched namespace", async () => {
    const clock = createFakeClock(0);
    const kube = createFakeKube(() => clock.now());
    const caches = webAppCaches(kube, { namespaces: ["default", "b"], logger: quiet }, clock);
    const stop = new AbortController();
    const app = testApp();
    const running = caches.webapps.start(stop.signal);
    kube.answerList(page([{ ...app, metadata: { ...app.metadata, managedFields } } as KubeObject]));
    kube.answerList(page([]));
    kube.answerWatch(new WatchScript());
    kube.answerWatch(new WatchScript());
    await caches.webapps.waitForSync(stop.signal);
    expect(kube.calls.filter((c) => c.method === "list").map((c) => c.args.namespace)).toEqual(["default", "b"]);
    expect(caches.webapps.get("default/test-app")).toEqual(app as KubeObject & typeof app);
    expect(DEPLOYMENT_RESOURCE.plural).toBe("deployments");
    stop.abort();
    await running;
  });
});
