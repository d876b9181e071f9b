/**
 * The fake API server (src/operator/_fake-apiserver.ts) against a real one. The reconciler's unit tests are only as
 * good as the fake's answers: it answered 409 to an apply naming another object's uid where kube-apiserver answers
 * 422 on metadata.uid, so no unit test could catch the pass that applied a replaced Deployment's uid (3398dc8, found
 * by the chaos soak). Here the same requests, through the same client, go to both, and what each answers is compared:
 * - a refusal: its HTTP code, its reason, the fields of its causes, and which of a few phrases its message has;
 * - an acceptance: what the step reads of the object (generation, whether the resourceVersion moved, a field).
 * The requests are the ones the operator sends or handles (kube/client.ts): GET, server-side apply with and without
 * a uid or resourceVersion, JSON merge patch (object and status), JSON patch with a test, POST, PUT, DELETE with
 * preconditions. The objects: a Deployment with 0 replicas (the controller-manager still writes its status, which no
 * step compares; steps that need the object still wait until it is done), and WebApps, a custom resource with a status
 * subresource, whose status the operator writes (status-write.ts).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { KubeError } from "../src/kube/errors.ts";
import type { KubeClient, KubeObject, PatchOptions, PatchType, ResourceType } from "../src/kube/types.ts";
import { createFakeApiServer } from "../src/operator/_fake-apiserver.ts";
import { DEPLOYMENTS, ensureCrd, eventually, kube, tempNamespace, WEBAPPS } from "./_support.ts";

const MANAGER = "conformance-test";
/** Words of an answer's message that the operator or its users may go by. */
const PHRASES = [
  "not found",
  "already exists",
  "uid mismatch",
  "field is immutable",
  "does not match",
  "has been modified",
] as const;

/** One server under test: its client, and what earlier steps learned of it (uids, resourceVersions). */
interface Side {
  client: KubeClient;
  namespace: string;
  memo: Record<string, string>;
  /** Resolves once nobody else writes the object (the controller-manager's status writes after a change are done). */
  settled: (name: string) => Promise<void>;
}

/** What a step observed; equal across the two servers when the fake answers as the real one does. */
type Observation = Record<string, unknown>;

const deployment = (ns: string, name: string, spec: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
  ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: ns, labels: { conformance: name }, ...meta },
    spec: {
      replicas: 0,
      selector: { matchLabels: { conformance: name } },
      template: {
        metadata: { labels: { conformance: name } },
        spec: { containers: [{ name: "app", image: "registry.invalid/app:v1" }] },
      },
      ...spec,
    },
  }) as KubeObject;

/** What a step reads of an object it got back: generation, and whether the resourceVersion moved since `since`. */
function seen(s: Side, obj: KubeObject, since?: string): Observation {
  const rv = obj.metadata.resourceVersion ?? "";
  const out: Observation = { generation: obj.metadata.generation };
  if (since !== undefined) out.resourceVersionMoved = rv !== s.memo[since];
  s.memo.rv = rv;
  return out;
}

const spec = (obj: KubeObject) => obj.spec as { minReadySeconds?: number; replicas?: number };

/** A patch of the Deployment "web". */
const patchWeb = (s: Side, patch: unknown, type: PatchType, opts?: PatchOptions) =>
  s.client.patch<KubeObject>(DEPLOYMENTS, "web", s.namespace, patch, type, opts);

/** A JSON patch of spec.minReadySeconds to `value` on the condition that it is `expected`. */
const minReadySeconds = (expected: number, value: number) => [
  { op: "test", path: "/spec/minReadySeconds", value: expected },
  { op: "replace", path: "/spec/minReadySeconds", value },
];

/** Notes the object's resourceVersion now, for a step that says whether its write moved it (`seen(..., "rv")`). */
async function noteVersion(s: Side, rt: ResourceType, name: string): Promise<void> {
  s.memo.rv = (await s.client.get(rt, name, s.namespace)).metadata.resourceVersion ?? "";
}

/** The steps, in order, each run against both servers. */
const STEPS: [string, (s: Side) => Promise<Observation>][] = [
  ["GET of a missing object", async (s) => ({ got: await s.client.get(DEPLOYMENTS, "web", s.namespace) })],
  [
    "apply creates, a resourceVersion in it ignored",
    async (s) => {
      const o = await s.client.apply<KubeObject>(
        DEPLOYMENTS,
        deployment(s.namespace, "web", {}, { resourceVersion: "999999" }),
        { fieldManager: MANAGER },
      );
      s.memo.uid = o.metadata.uid ?? "";
      return seen(s, o);
    },
  ],
  [
    "apply without the resourceVersion",
    async (s) => seen(s, await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web"), { fieldManager: MANAGER })),
  ],
  [
    "apply of the same intent: nothing written",
    async (s) => {
      await s.settled("web");
      await noteVersion(s, DEPLOYMENTS, "web");
      return seen(
        s,
        await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web"), { fieldManager: MANAGER }),
        "rv",
      );
    },
  ],
  [
    "apply of a changed spec",
    async (s) =>
      seen(
        s,
        await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web", { minReadySeconds: 5 }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "apply naming a stale resourceVersion",
    async (s) =>
      seen(
        s,
        await s.client.apply(
          DEPLOYMENTS,
          deployment(s.namespace, "web", { minReadySeconds: 5 }, { resourceVersion: "1" }),
          { fieldManager: MANAGER },
        ),
      ),
  ],
  [
    "apply naming the object's uid",
    async (s) =>
      seen(
        s,
        await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web", { minReadySeconds: 5 }, { uid: s.memo.uid }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "merge patch naming a stale resourceVersion",
    async (s) => seen(s, await patchWeb(s, { metadata: { resourceVersion: "1", labels: { extra: "x" } } }, "merge")),
  ],
  [
    "merge patch of a label",
    async (s) => {
      await noteVersion(s, DEPLOYMENTS, "web");
      const o = await patchWeb(s, { metadata: { labels: { extra: "x" } } }, "merge");
      return { ...seen(s, o, "rv"), label: o.metadata.labels?.extra };
    },
  ],
  [
    "merge patch that changes nothing: nothing written",
    async (s) => {
      await s.settled("web");
      await noteVersion(s, DEPLOYMENTS, "web");
      const o = await patchWeb(s, { metadata: { labels: { extra: "x" } } }, "merge");
      return seen(s, o, "rv");
    },
  ],
  [
    "PUT of a changed spec",
    async (s) => {
      await s.settled("web");
      const { metadata, spec: current } = await s.client.get<KubeObject>(DEPLOYMENTS, "web", s.namespace);
      const o = await s.client.replace<KubeObject>(DEPLOYMENTS, {
        ...deployment(s.namespace, "web"),
        metadata,
        spec: { ...(current as object), minReadySeconds: 6 },
      });
      return { ...seen(s, o), minReadySeconds: spec(o).minReadySeconds };
    },
  ],
  [
    "merge patch of the status subresource leaves the spec",
    async (s) => {
      const o = await patchWeb(s, { spec: { minReadySeconds: 9 }, status: { observedGeneration: 2 } }, "merge", {
        subresource: "status",
      });
      return { ...seen(s, o), minReadySeconds: spec(o).minReadySeconds };
    },
  ],
  ["JSON patch whose test fails", async (s) => seen(s, await patchWeb(s, minReadySeconds(7, 8), "json"))],
  [
    "JSON patch whose test holds",
    async (s) => {
      const o = await patchWeb(s, minReadySeconds(6, 8), "json");
      return { ...seen(s, o), minReadySeconds: spec(o).minReadySeconds };
    },
  ],
  [
    "POST of an existing name",
    async (s) => seen(s, await s.client.create(DEPLOYMENTS, deployment(s.namespace, "web"), { fieldManager: MANAGER })),
  ],
  [
    "PUT of a missing object",
    async (s) => seen(s, await s.client.replace(DEPLOYMENTS, deployment(s.namespace, "absent"))),
  ],
  [
    "DELETE with another uid as precondition",
    async (s) => {
      await s.client.delete(DEPLOYMENTS, "web", s.namespace, { preconditions: { uid: "0000-not-its-uid" } });
      return { deleted: true };
    },
  ],
  [
    "DELETE with a stale resourceVersion as precondition",
    async (s) => {
      await s.client.delete(DEPLOYMENTS, "web", s.namespace, { preconditions: { resourceVersion: "1" } });
      return { deleted: true };
    },
  ],
  [
    "DELETE with its uid and resourceVersion as preconditions",
    async (s) => {
      // The JSON patch changed the spec: the controller-manager writes the status after it (a CI run lost this race).
      await s.settled("web");
      const o = await s.client.get(DEPLOYMENTS, "web", s.namespace);
      await s.client.delete(DEPLOYMENTS, "web", s.namespace, {
        preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion },
      });
      return { deleted: true };
    },
  ],
  ["GET after the delete", async (s) => ({ got: await s.client.get(DEPLOYMENTS, "web", s.namespace) })],
  [
    "apply naming the uid of the deleted object, none there",
    async (s) =>
      seen(
        s,
        await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web", {}, { uid: s.memo.uid }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "apply creates the object again",
    async (s) => {
      const o = await s.client.apply<KubeObject>(DEPLOYMENTS, deployment(s.namespace, "web"), {
        fieldManager: MANAGER,
      });
      return { ...seen(s, o), newUid: o.metadata.uid !== s.memo.uid };
    },
  ],
  [
    "apply naming the uid of the deleted object, another there",
    async (s) =>
      seen(
        s,
        await s.client.apply(DEPLOYMENTS, deployment(s.namespace, "web", {}, { uid: s.memo.uid }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "merge patch of a missing object",
    async (s) => seen(s, await s.client.patch(DEPLOYMENTS, "absent", s.namespace, { metadata: {} }, "merge")),
  ],
  [
    "DELETE of a missing object",
    async (s) => {
      await s.client.delete(DEPLOYMENTS, "absent", s.namespace);
      return { deleted: true };
    },
  ],
  [
    "LIST by label",
    async (s) => {
      const list = await s.client.list(DEPLOYMENTS, { namespace: s.namespace, labelSelector: "conformance=web" });
      return { names: list.items.map((o) => o.metadata.name) };
    },
  ],
];

const webApp = (ns: string, name: string, spec: Record<string, unknown> = {}, rest: Record<string, unknown> = {}) =>
  ({
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name, namespace: ns },
    spec: { image: "registry.invalid/app:v1", replicas: 2, port: 8080, ...spec },
    ...rest,
  }) as KubeObject;

/**
 * What a step reads of a WebApp it got back: as `seen`, and its replicas and status.observedGeneration. The CRD
 * defaults that to 0 (crd/webapps.apps.example.com.yaml), which the fake, knowing no schema, does not: absent reads 0.
 */
function seenWebApp(s: Side, obj: KubeObject, since?: string): Observation {
  const observedGeneration = (obj.status as { observedGeneration?: number } | undefined)?.observedGeneration ?? 0;
  return { ...seen(s, obj, since), replicas: spec(obj).replicas, observedGeneration };
}

/** A merge patch of the WebApp "app"; of its status subresource, as status-write.ts sends it, with `status`. */
const patchApp = (s: Side, patch: Record<string, unknown>, opts?: PatchOptions) =>
  s.client.patch<KubeObject>(WEBAPPS, "app", s.namespace, patch, "merge", opts);
const patchStatus = (s: Side, patch: Record<string, unknown>) => patchApp(s, patch, { subresource: "status" });

/**
 * The same for a custom resource with a status subresource, which the operator reads and writes the status of
 * (status-write.ts). Nobody else writes the WebApp: no operator runs here.
 */
const WEBAPP_STEPS: [string, (s: Side) => Promise<Observation>][] = [
  [
    "WebApp: apply creates, a status in it dropped",
    async (s) =>
      seenWebApp(
        s,
        await s.client.apply(WEBAPPS, webApp(s.namespace, "app", {}, { status: { observedGeneration: 7 } }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "WebApp: status patch, a spec change in it ignored",
    async (s) => seenWebApp(s, await patchStatus(s, { spec: { replicas: 5 }, status: { observedGeneration: 1 } })),
  ],
  [
    "WebApp: status patch that changes nothing: nothing written",
    async (s) => seenWebApp(s, await patchStatus(s, { status: { observedGeneration: 1 } }), "rv"),
  ],
  [
    "WebApp: status patch naming a stale resourceVersion",
    async (s) =>
      seenWebApp(s, await patchStatus(s, { metadata: { resourceVersion: "1" }, status: { observedGeneration: 2 } })),
  ],
  [
    "WebApp: merge patch of the status through the object: ignored",
    async (s) => seenWebApp(s, await patchApp(s, { status: { observedGeneration: 9 } }), "rv"),
  ],
  ["WebApp: merge patch of the spec", async (s) => seenWebApp(s, await patchApp(s, { spec: { replicas: 3 } }), "rv")],
  [
    "WebApp: merge patch of an annotation",
    async (s) => seenWebApp(s, await patchApp(s, { metadata: { annotations: { a: "b" } } }), "rv"),
  ],
  [
    "WebApp: apply with a status: the status ignored",
    async (s) =>
      // Whether the resourceVersion moves is not compared: the apply takes spec.replicas over from the merge patch's
      // manager, a change of managedFields, which the fake does not model.
      seenWebApp(
        s,
        await s.client.apply(
          WEBAPPS,
          webApp(s.namespace, "app", { replicas: 3 }, { status: { observedGeneration: 4 } }),
          { fieldManager: MANAGER },
        ),
      ),
  ],
  [
    "WebApp: POST with a status: the status dropped",
    async (s) =>
      seenWebApp(
        s,
        await s.client.create(WEBAPPS, webApp(s.namespace, "other", {}, { status: { observedGeneration: 7 } }), {
          fieldManager: MANAGER,
        }),
      ),
  ],
  [
    "WebApp: PUT without a resourceVersion",
    async (s) => {
      const { metadata } = await s.client.get<KubeObject>(WEBAPPS, "other", s.namespace);
      const { resourceVersion: _unconditional, ...meta } = metadata;
      return seenWebApp(s, await s.client.replace(WEBAPPS, { ...webApp(s.namespace, "other"), metadata: meta }));
    },
  ],
  [
    "WebApp: PUT with a status: the status ignored",
    async (s) => {
      const { metadata } = await s.client.get<KubeObject>(WEBAPPS, "other", s.namespace);
      const o = await s.client.replace<KubeObject>(WEBAPPS, {
        ...webApp(s.namespace, "other", { replicas: 4 }, { status: { observedGeneration: 8 } }),
        metadata,
      });
      return seenWebApp(s, o);
    },
  ],
  [
    "WebApp: PUT naming a stale resourceVersion",
    async (s) => {
      const { metadata } = await s.client.get<KubeObject>(WEBAPPS, "other", s.namespace);
      const stale = { ...metadata, resourceVersion: "1" };
      return seenWebApp(s, await s.client.replace(WEBAPPS, { ...webApp(s.namespace, "other"), metadata: stale }));
    },
  ],
];

/** A step's result: what it observed, or how the server refused it. */
async function run(s: Side, step: (s: Side) => Promise<Observation>): Promise<Observation> {
  try {
    const observed = await step(s);
    // An object a GET returned is not compared whole (times, uids and managedFields differ by nature).
    return "got" in observed ? { got: "an object" } : { ok: observed };
  } catch (e) {
    if (!(e instanceof KubeError)) throw e;
    const message = e.status?.message ?? e.message;
    return {
      refused: {
        code: e.code,
        reason: e.reason,
        // Distinct: kube-apiserver names metadata.uid twice in the 422 to an apply naming another uid.
        causes: [...new Set((e.status?.details?.causes ?? []).map((c) => c.field))].sort(),
        phrases: PHRASES.filter((p) => message.includes(p)),
      },
    };
  }
}

/**
 * The Deployment's controller is done with it: it observed its generation, reports its rollout complete (Progressing,
 * NewReplicaSetAvailable: the last status it writes for a Deployment of 0 replicas until the spec changes), and has
 * not written it for QUIET_MS. A loaded controller-manager may take a while (SETTLE_MS).
 */
async function settled(namespace: string, name: string): Promise<void> {
  type Observed = KubeObject & {
    status?: { observedGeneration?: number; conditions?: { type: string; reason?: string }[] };
  };
  let last = "";
  await eventually(
    async () => {
      const o = await kube.get<Observed>(DEPLOYMENTS, name, namespace);
      const rv = o.metadata.resourceVersion ?? "";
      const done =
        o.status?.observedGeneration === o.metadata.generation &&
        o.status?.conditions?.some((c) => c.type === "Progressing" && c.reason === "NewReplicaSetAvailable");
      const quiet = done && rv === last;
      last = rv;
      if (!quiet) await Bun.sleep(QUIET_MS);
      return quiet;
    },
    SETTLE_MS,
    `the controller-manager to be done with Deployment ${name}`,
  );
}
const QUIET_MS = 1_000;
const SETTLE_MS = 90_000;

let ns: Awaited<ReturnType<typeof tempNamespace>>;
beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("conformance");
});
afterAll(async () => {
  await ns?.drop();
});

test("the fake API server answers each request as kube-apiserver does", async () => {
  const real: Side = { client: kube, namespace: ns.name, memo: {}, settled: (name) => settled(ns.name, name) };
  const fake: Side = {
    client: createFakeApiServer(ns.name).client,
    namespace: ns.name,
    memo: {},
    settled: async () => {},
  };
  const rows: { step: string; real: Observation; fake: Observation }[] = [];
  for (const [name, step] of [...STEPS, ...WEBAPP_STEPS])
    rows.push({ step: name, real: await run(real, step), fake: await run(fake, step) });
  const differ = rows.filter((r) => JSON.stringify(r.real) !== JSON.stringify(r.fake));
  if (differ.length > 0)
    console.error(
      differ.map((r) => `${r.step}\n  real: ${JSON.stringify(r.real)}\n  fake: ${JSON.stringify(r.fake)}`).join("\n"),
    );
  expect(differ.map((r) => r.step)).toEqual([]);
  // The steps reach the cases they are named for (a sequence that went astray would compare nothing of interest).
  const refused = (step: string) => (rows.find((r) => r.step === step)?.real.refused as { code: number })?.code;
  expect(refused("apply naming the uid of the deleted object, none there")).toBe(409);
  expect(refused("apply naming the uid of the deleted object, another there")).toBe(422);
  expect(refused("DELETE with another uid as precondition")).toBe(409);
}, 300_000);
