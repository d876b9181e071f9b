/**
 * Many WebApps at once: 500 created together all converge (Deployment, Service, Available=True), and
 * a full resync afterwards issues no writes at all — measured from the operator's own /metrics.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  SERVICES,
  WEBAPPS,
  conditionOf,
  ensureCrd,
  eventually,
  kube,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

const N = 500;
const RESYNC_S = 20;
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("scale");
  op = await startOperator([
    "--namespaces",
    ns.name,
    "--leader-elect=false",
    "--concurrency",
    "8",
    "--resync-period",
    `${RESYNC_S}s`,
  ]);
});
afterAll(async () => {
  expect(await op?.stop()).toBe(0);
  await ns?.drop();
});

/** Runs `fn` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

test(`${N} WebApps created at once all converge, and a following resync writes nothing`, async () => {
  const names = Array.from({ length: N }, (_, i) => `app-${String(i).padStart(3, "0")}`);
  const started = Date.now();
  await pool(names, 16, (name) =>
    kube.create(WEBAPPS, webapp(name, ns.name, { image: "nginx:1.25", replicas: 1, port: 8080 })),
  );
  await eventually(
    async () => {
      const list = await kube.listAll<WebAppLike>(WEBAPPS, { namespace: ns.name });
      return list.items.length === N && list.items.every((w) => conditionOf(w, "Available")?.status === "True");
    },
    240_000,
    `all ${N} WebApps to be Available`,
  );
  const seconds = (Date.now() - started) / 1000;
  console.error(`${N} WebApps converged in ${seconds.toFixed(1)} s (${(N / seconds).toFixed(0)} WebApps/s)`);
  expect((await kube.listAll<KubeObject>(DEPLOYMENTS, { namespace: ns.name })).items).toHaveLength(N);
  expect((await kube.listAll<KubeObject>(SERVICES, { namespace: ns.name })).items).toHaveLength(N);

  // Let the last status writes land, then watch a whole resync go by.
  await Bun.sleep(2000);
  const writes = await op.writes();
  const reconciles = await op.counter("controller_runtime_reconcile_total");
  await eventually(
    async () => (await op.counter("controller_runtime_reconcile_total")) >= reconciles + N,
    (RESYNC_S * 1.1 + 30) * 1000,
    "a full resync",
  );
  expect(await op.writes()).toBe(writes);
  expect(await op.counter("controller_runtime_reconcile_errors_total")).toBe(0);
}, 420_000);
