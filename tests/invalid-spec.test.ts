/**
 * WebApps that get past validation (a CRD installed without its schema, or an older one) are
 * reported, not crashed on: Degraded/InvalidSpec naming the field, a Warning event, no children,
 * no retry storm, and other WebApps in the same namespace still converge.
 * The suite swaps the cluster's CRD for a schema-less one and restores the real one afterwards.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildWebAppCrd } from "../src/api/crd.ts";
import { kstatus } from "./kstatus/kstatus.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  WEBAPPS,
  conditionOf,
  ensureCrd,
  eventsFor,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

/**
 * The real CRD with every check removed, as an old or hand-made one might be: no schema, and no scale
 * subresource (whose path the API server checks for a non-negative integer): anything is stored as sent.
 */
function schemalessCrd(): string {
  const crd = buildWebAppCrd() as unknown as {
    spec: { versions: { schema: unknown; subresources?: Record<string, unknown> }[] };
  };
  for (const v of crd.spec.versions) {
    v.subresources = { status: {} };
    v.schema = {
      openAPIV3Schema: {
        type: "object",
        properties: {
          spec: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          status: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        },
      },
    };
  }
  return JSON.stringify(crd);
}

beforeAll(async () => {
  await ensureCrd();
  const r = kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], schemalessCrd());
  if (r.code !== 0) throw new Error(r.stderr);
  ns = await tempNamespace("invalid");
  // The API server may take a moment to serve the new schema.
  await eventually(
    async () => {
      await kube.create(WEBAPPS, webapp("probe", ns.name, { image: "x", port: 0 }), { dryRun: true });
      return true;
    },
    20_000,
    "the schema-less CRD to be served",
  );
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
});
afterAll(async () => {
  expect(await op?.stop()).toBe(0);
  await ns?.drop();
  await ensureCrd();
});

const cases: [string, Record<string, unknown>, string][] = [
  ["zero-replicas", { image: "nginx:1.25", replicas: 0, port: 80 }, "spec.replicas"],
  ["negative-replicas", { image: "nginx:1.25", replicas: -1, port: 80 }, "spec.replicas"],
  ["big-port", { image: "nginx:1.25", replicas: 1, port: 70000 }, "spec.port"],
  ["zero-port", { image: "nginx:1.25", replicas: 1, port: 0 }, "spec.port"],
  ["no-image", { replicas: 1, port: 80 }, "spec.image"],
  ["empty-image", { image: "", replicas: 1, port: 80 }, "spec.image"],
  ["wrong-type", { image: "nginx:1.25", replicas: "three", port: 80 }, "spec.replicas"],
];

/** Reconciles counted from just before the invalid WebApps were created until just after they were reported. */
let reconcilesAtCreation = 0;
let reconcilesAtReport = 0;
let reportedAt = 0;

test("each invalid WebApp is Degraded with reason InvalidSpec naming the field, and gets no children", async () => {
  reconcilesAtCreation = await op.counter("controller_runtime_reconcile_total");
  for (const [name, spec] of cases) await kube.create(WEBAPPS, webapp(name, ns.name, spec));
  for (const [name, , field] of cases) {
    const w = await eventually(
      async () => {
        const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name);
        return conditionOf(w, "Degraded")?.reason === "InvalidSpec" ? w : undefined;
      },
      30_000,
      `${name} to be reported InvalidSpec`,
    );
    expect(conditionOf(w, "Degraded")?.message).toContain(field);
    expect(conditionOf(w, "Stalled")).toMatchObject({ status: "True", reason: "InvalidSpec" });
    expect((await kstatus([w]))[0]?.status).toBe("Failed"); // what Flux or helm --wait reports
    expect(await getOrUndefined(DEPLOYMENTS, `${name}-deployment`, ns.name)).toBeUndefined();
  }
  reportedAt = Date.now();
  reconcilesAtReport = await op.counter("controller_runtime_reconcile_total");
  await eventually(
    async () =>
      (await eventsFor(ns.name, "big-port")).some(
        (e) => e.type === "Warning" && e.reason === "InvalidSpec" && e.message.includes("spec.port"),
      ),
    10_000,
    "a Warning event",
  );
});

test("right after they were created, the invalid WebApps cause no retry storm: no retries, about one reconcile each", async () => {
  // The window in which a retry loop would be fastest: the queue's backoff starts at 5 ms and doubles,
  // so a spec error retried would run ~10 times per WebApp within these 3 s.
  await Bun.sleep(Math.max(0, reportedAt + 3000 - Date.now()));
  const reconciles = (await op.counter("controller_runtime_reconcile_total")) - reconcilesAtCreation;
  const sinceReport = (await op.counter("controller_runtime_reconcile_total")) - reconcilesAtReport;
  console.error(
    `invalid specs: ${reconciles} reconciles for ${cases.length} WebApps from creation to 3 s after the report, ${sinceReport} of them after it`,
  );
  // Each is reconciled on creation and once more for the update event of its own status write.
  expect(reconciles).toBeLessThanOrEqual(cases.length * 2 + 2);
  expect(sinceReport).toBeLessThanOrEqual(cases.length);
  expect(await op.counter("workqueue_retries_total")).toBe(0);
  expect(await op.counter("controller_runtime_reconcile_errors_total")).toBe(0);
});

test("a valid WebApp beside them converges, and the invalid ones are not reconciled again meanwhile", async () => {
  const reconcilesBefore = await op.counter("controller_runtime_reconcile_total");
  await kube.create(WEBAPPS, webapp("fine", ns.name, { image: "nginx:1.25", replicas: 2, port: 80 }));
  await eventually(
    async () => conditionOf(await getOrUndefined<WebAppLike>(WEBAPPS, "fine", ns.name), "Available")?.status === "True",
    30_000,
    "fine to be Available",
  );
  await Bun.sleep(3000);
  // A handful of reconciles for "fine" (its children's events), none repeating for the invalid ones.
  expect((await op.counter("controller_runtime_reconcile_total")) - reconcilesBefore).toBeLessThan(20);
  expect(await op.counter("controller_runtime_reconcile_errors_total")).toBe(0);
  expect(op.proc.exitCode).toBeNull();
});

test("fixing an invalid WebApp makes it converge", async () => {
  await kube.patch(WEBAPPS, "big-port", ns.name, { spec: { port: 8080 } }, "merge");
  await eventually(
    async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, "big-port", ns.name);
      return conditionOf(w, "Available")?.status === "True" && conditionOf(w, "Degraded")?.status === "False";
    },
    30_000,
    "big-port to converge once fixed",
  );
});
