/**
 * `devctl webapp rollout` (issue #32 item 3):
 * - restart: the WebApp's restart request reaches the pod template and rolls the pods once, its spec untouched;
 *   `kubectl rollout restart` of the Deployment is never reverted by the operator; dry runs change nothing; a WebApp
 *   that does not exist is an error that names it.
 * - status: exit 0 once rolled out; 1 with the reason when the WebApp is Stalled; 1 after --timeout while no operator
 *   reports on it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RESTARTED_AT_ANNOTATION } from "../src/api/webapp.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  devctl,
  ensureCrd,
  eventually,
  kube,
  kubectl,
  REPLICASETS,
  SERVICES,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";

const KUBECTL_RESTARTED_AT = "kubectl.kubernetes.io/restartedAt";
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("restart");
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
});
afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  expect(code).toBe(0);
});

type Dep = KubeObject & { spec: { template: { metadata: { annotations?: Record<string, string> } } } };
const deployment = () => kube.get<Dep>(DEPLOYMENTS, "shop-deployment", ns.name);
const templateAnnotations = async () => (await deployment()).spec.template.metadata.annotations ?? {};
const replicaSets = async () => (await kube.listAll<KubeObject>(REPLICASETS, { namespace: ns.name })).items.length;
const available = (name: string) =>
  eventually(
    async () => conditionOf(await kube.get<WebAppLike>(WEBAPPS, name, ns.name), "Available")?.status === "True",
    60_000,
    `${name} Available`,
  );
/** A pass of the operator over the WebApp after now: an annotation of no meaning changes it. */
async function aPass(value: string): Promise<void> {
  const before = await op.counter("controller_runtime_reconcile_total");
  expect(kubectl(["annotate", "--overwrite", "-n", ns.name, "webapp/shop", `example.com/touched=${value}`]).code).toBe(
    0,
  );
  await eventually(async () => (await op.counter("controller_runtime_reconcile_total")) > before, 30_000, "a pass");
  await Bun.sleep(1000); // anything that pass writes has landed
}

test("a restart rolls the pods once with the WebApp's spec untouched, and kubectl's restart is not reverted", async () => {
  const created = await kube.create(WEBAPPS, webapp("shop", ns.name, { image: "nginx:1.25", replicas: 2, port: 8080 }));
  const done = devctl(["webapp", "rollout", "status", "shop", "-n", ns.name, "--timeout", "60s"]);
  expect(done).toMatchObject({ code: 0, stdout: 'webapp "shop" successfully rolled out\n' });
  expect(conditionOf(await kube.get<WebAppLike>(WEBAPPS, "shop", ns.name), "Available")?.status).toBe("True");
  expect(await templateAnnotations()).toEqual({});
  const generation = (await deployment()).metadata.generation ?? 0;
  expect(await replicaSets()).toBe(1);

  const r = devctl(["webapp", "rollout", "restart", "shop", "-n", ns.name]);
  expect(r).toMatchObject({ code: 0, stdout: "webapp.apps.example.com/shop restarted\n" });
  const wa = await kube.get<WebAppLike>(WEBAPPS, "shop", ns.name);
  const at = wa.metadata.annotations?.[RESTARTED_AT_ANNOTATION] ?? "";
  expect(Number.isNaN(Date.parse(at))).toBe(false);
  expect(wa.metadata.generation).toBe(created.metadata.generation); // the spec is unchanged
  await eventually(async () => (await templateAnnotations())[RESTARTED_AT_ANNOTATION] === at, 30_000, "the template");
  expect((await deployment()).metadata.generation).toBe(generation + 1);
  await eventually(async () => (await replicaSets()) === 2, 30_000, "a second ReplicaSet");
  await available("shop");

  // kubectl's own restart of the Deployment: a field the operator does not own, so no pass takes it back.
  expect(kubectl(["rollout", "restart", "-n", ns.name, "deployment/shop-deployment"]).code).toBe(0);
  const kubectlAt = (await templateAnnotations())[KUBECTL_RESTARTED_AT] ?? "";
  expect(kubectlAt).not.toBe("");
  const afterKubectl = (await deployment()).metadata.generation;
  await aPass("1");
  expect(await templateAnnotations()).toEqual({ [RESTARTED_AT_ANNOTATION]: at, [KUBECTL_RESTARTED_AT]: kubectlAt });
  expect((await deployment()).metadata.generation).toBe(afterKubectl);
  await eventually(async () => (await replicaSets()) === 3, 30_000, "kubectl's ReplicaSet");
  await available("shop");
});

test("dry runs change nothing; a WebApp that does not exist is an error naming it", async () => {
  const before = (await kube.get<WebAppLike>(WEBAPPS, "shop", ns.name)).metadata.annotations?.[RESTARTED_AT_ANNOTATION];
  for (const [mode, note] of [
    ["client", "dry run"],
    ["server", "server dry run"],
  ]) {
    const r = devctl(["webapp", "rollout", "restart", "shop", "-n", ns.name, `--dry-run=${mode}`]);
    expect(r).toMatchObject({ code: 0, stdout: `webapp.apps.example.com/shop restarted (${note})\n` });
  }
  expect((await kube.get<WebAppLike>(WEBAPPS, "shop", ns.name)).metadata.annotations?.[RESTARTED_AT_ANNOTATION]).toBe(
    before,
  );
  const missing = devctl(["webapp", "rollout", "restart", "nope", "-n", ns.name]);
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toContain("nope");
  expect(missing.stderr.toLowerCase()).toContain("not found");
});

test("rollout status: a Stalled WebApp fails with its reason; with no operator reporting, --timeout fails", async () => {
  // Someone else's Service holds the name the WebApp's Service needs: Stalled ResourceExists.
  await kube.create(SERVICES, {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "taken-svc", namespace: ns.name },
    spec: { ports: [{ port: 80 }] },
  });
  await kube.create(WEBAPPS, webapp("taken", ns.name, { image: "nginx:1.25", replicas: 1, port: 8080 }));
  const failed = devctl(["webapp", "rollout", "status", "taken", "-n", ns.name, "--timeout", "60s"]);
  expect(failed.code).toBe(1);
  expect(failed.stdout).toBe("");
  expect(failed.stderr).toContain('webapp "taken" rollout failed: ResourceExists: Service taken-svc exists');

  const elsewhere = await tempNamespace("no-operator");
  try {
    await kube.create(WEBAPPS, webapp("alone", elsewhere.name, { image: "nginx:1.25", replicas: 1, port: 8080 }));
    const started = Date.now();
    const r = devctl(["webapp", "rollout", "status", "alone", "-n", elsewhere.name, "--timeout", "2s"]);
    expect(r.code).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000); // the whole --timeout
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.stderr).toContain('timed out after 2s waiting for webapp "alone" to roll out');
    expect(r.stderr).toContain("Waiting for the operator to report on");
    const once = devctl(["webapp", "rollout", "status", "alone", "-n", elsewhere.name, "--watch=false"]);
    expect(once).toMatchObject({ code: 0, stdout: expect.stringContaining("Waiting for the operator to report on") });
  } finally {
    await elsewhere.drop();
  }
});
