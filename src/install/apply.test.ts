import { describe, expect, test } from "bun:test";
import { KubeError } from "../kube/errors.ts";
import type { KubeObject, ResourceType } from "../kube/types.ts";
import { createFakeClock } from "../runtime/clock.ts";
import { createFakeCluster } from "./_fake-cluster.ts";
import { accessChecksFor, applyAll, crdConflict, InstallError } from "./apply.ts";
import { describeChecks } from "./access.ts";
import { buildManifests, INSTALL_RESOURCES, leftOut } from "./manifests.ts";

const CRDS = INSTALL_RESOURCES.CustomResourceDefinition as ResourceType;
const opts = { namespace: "devctl-system", image: "img:1", replicas: 2, version: "1" };
const objects = buildManifests(opts);
const crd = objects[0]!;
const established = { conditions: [{ type: "Established", status: "True" }] };

function cluster() {
  const clock = createFakeClock(0);
  const fake = createFakeCluster(() => clock.now());
  // The API server establishes a CRD as soon as it is stored.
  const apply = fake.apply;
  fake.apply = async (rt, obj, o) => {
    const out = await apply(rt, obj, o);
    if (obj.kind === "CustomResourceDefinition")
      fake.put(rt, { ...(await fake.get(rt, obj.metadata.name as string)), status: established });
    return out as never;
  };
  return { clock, fake };
}

describe("crdConflict", () => {
  const ours = { ...crd, metadata: { ...crd.metadata } } as KubeObject;
  test("a missing CRD or one of ours at the same or an older schema version may be applied", () => {
    expect(crdConflict(undefined)).toBeUndefined();
    expect(crdConflict(ours)).toBeUndefined(); // the same version as this devctl's
    expect(
      crdConflict(
        { ...ours, metadata: { ...ours.metadata, annotations: { "devctl.dev/crd-schema-version": "1" } } },
        "2",
      ),
    ).toBeUndefined();
  });

  test("a CRD of the same name installed by someone else is refused, saying whose it is and what to do", () => {
    const foreign = {
      ...ours,
      metadata: { name: "webapps.apps.example.com", labels: { "app.kubernetes.io/managed-by": "helm" } },
    };
    const msg = crdConflict(foreign, "1");
    expect(msg).toContain("not installed by devctl");
    expect(msg).toContain("app.kubernetes.io/managed-by=helm");
    expect(msg).toContain("kubectl delete crd webapps.apps.example.com");
    expect(crdConflict({ ...ours, metadata: { name: "webapps.apps.example.com" } }, "1")).toContain(
      "managed-by=<none>",
    );
  });

  test("a CRD of ours with a newer schema version is refused: installing would downgrade it", () => {
    const newer = { ...ours, metadata: { ...ours.metadata, annotations: { "devctl.dev/crd-schema-version": "3" } } };
    expect(crdConflict(newer, "2")).toContain("schema version 3");
    expect(crdConflict(newer, "2")).toContain("newer than this devctl's 2");
    const garbage = { ...ours, metadata: { ...ours.metadata, annotations: { "devctl.dev/crd-schema-version": "x" } } };
    expect(crdConflict(garbage, "2")).toBeDefined();
  });
});

describe("applyAll", () => {
  test("applies every object in order with the devctl field manager and force, reporting each as created", async () => {
    const { clock, fake } = cluster();
    const seen: string[] = [];
    const results = await applyAll(fake, objects, {
      clock,
      timeoutMs: 10_000,
      onApplied: (r) => seen.push(`${r.name} ${r.action}`),
    });
    expect(fake.applied).toEqual(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const applies = fake.calls.filter((c) => c.method === "apply");
    expect(applies.map((c) => c.args.options)).toEqual(objects.map(() => ({ fieldManager: "devctl", force: true })));
    expect(results.map((r) => r.action)).toEqual(objects.map(() => "created"));
    expect(seen[0]).toBe("customresourcedefinition.apiextensions.k8s.io/webapps.apps.example.com created");
  });

  test("a second run reports every object unchanged, and a changed one as configured", async () => {
    const { clock, fake } = cluster();
    await applyAll(fake, objects, { clock, timeoutMs: 10_000 });
    const again = await applyAll(fake, objects, { clock, timeoutMs: 10_000 });
    expect(again.map((r) => r.action)).toEqual(objects.map(() => "unchanged"));
    const more = buildManifests({ namespace: "devctl-system", image: "img:2", replicas: 2, version: "1" });
    const third = await applyAll(fake, more, { clock, timeoutMs: 10_000 });
    expect(third.filter((r) => r.action !== "unchanged").map((r) => `${r.name} ${r.action}`)).toEqual([
      "deployment.apps/webapp-operator configured",
    ]);
  });

  test("nothing after the CRD is applied before the CRD is Established", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    const progress: string[] = [];
    const run = applyAll(fake, objects, { clock, timeoutMs: 10_000, onProgress: (l) => progress.push(l) });
    await clock.advance(1000);
    expect(fake.applied).toEqual(["CustomResourceDefinition/webapps.apps.example.com"]);
    expect(progress).toEqual(["waiting for the CustomResourceDefinition webapps.apps.example.com to be Established"]);
    fake.put(CRDS, { ...(await fake.get(CRDS, "webapps.apps.example.com")), status: established });
    await clock.advance(1000);
    await run;
    expect(fake.applied.length).toBe(objects.length);
  });

  test("a CRD that never becomes Established fails after the timeout, with its conditions", async () => {
    const clock = createFakeClock(0);
    const fake = createFakeCluster(() => clock.now());
    const run = applyAll(fake, objects, { clock, timeoutMs: 2000 });
    const failed = run.then(
      () => undefined,
      (e: Error) => e,
    );
    await clock.advance(100);
    fake.put(CRDS, {
      ...(await fake.get(CRDS, "webapps.apps.example.com")),
      status: { conditions: [{ type: "NamesAccepted", status: "False", message: "wa is taken" }] },
    });
    await clock.advance(3000);
    expect((await failed)?.message).toMatch(/not Established within 2 s/);
    await expect(applyAll(fake, objects, { clock, timeoutMs: 0 })).rejects.toThrow("NamesAccepted: wa is taken");
  });

  test("a foreign CRD of the same name stops the install before anything is applied", async () => {
    const { clock, fake } = cluster();
    fake.put(CRDS, {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "webapps.apps.example.com" },
    });
    const err = await applyAll(fake, objects, { clock, timeoutMs: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(InstallError);
    expect(err.message).toContain("not installed by devctl");
    expect(fake.applied).toEqual([]);
  });

  test("missing permissions are all reported at once, naming verbs and resources, before anything is applied", async () => {
    const { clock, fake } = cluster();
    fake.deny = (c) => c.resource === "clusterroles" || (c.resource === "deployments" && c.verb !== "get");
    const err = await applyAll(fake, objects, { clock, timeoutMs: 10_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(InstallError);
    expect(err.message).toContain(
      'get, create, patch clusterroles.rbac.authorization.k8s.io; create, patch deployments.apps in namespace "devctl-system"',
    );
    expect(err.message).toContain('context "fake"');
    expect(fake.applied).toEqual([]);
  });

  test("an API error during apply is passed on as is (its message names the verb and resource)", async () => {
    const { clock, fake } = cluster();
    const forbidden = new KubeError(
      "Forbidden",
      'forbidden: cannot patch clusterroles.rbac.authorization.k8s.io "x"',
      403,
    );
    fake.failWith = (method, rt) => (method === "apply" && rt.plural === "clusterroles" ? forbidden : undefined);
    await expect(applyAll(fake, objects, { clock, timeoutMs: 10_000 })).rejects.toBe(forbidden);
    expect(fake.applied).toEqual([
      "CustomResourceDefinition/webapps.apps.example.com",
      "Namespace/devctl-system",
      "ServiceAccount/webapp-operator",
    ]);
  });
});

describe("applyAll: the hardened parts", () => {
  const NS = INSTALL_RESOURCES.Namespace as ResourceType;
  const NETPOL = INSTALL_RESOURCES.NetworkPolicy as ResourceType;

  test("a namespace that existed before keeps its Pod Security labels; install says what is left and how to add it", async () => {
    const { clock, fake } = cluster();
    fake.put(NS, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: {
        name: "devctl-system",
        labels: { "pod-security.kubernetes.io/enforce": "baseline" },
        managedFields: [{ manager: "kubectl-label", operation: "Update" }] as never,
      },
    });
    const progress: string[] = [];
    await applyAll(fake, objects, { clock, timeoutMs: 10_000, onProgress: (l) => progress.push(l) });
    const sent = fake.calls.find((c) => c.method === "apply" && c.rt.plural === "namespaces")?.args.obj as KubeObject;
    expect(sent.metadata.labels).toEqual({ "app.kubernetes.io/managed-by": "devctl" });
    expect(progress).toEqual([
      "the Pod Security labels of namespace devctl-system are not devctl's to set, so they stay as they are " +
        '(pod-security.kubernetes.io/enforce is "baseline", pod-security.kubernetes.io/enforce-version is not set, ' +
        "pod-security.kubernetes.io/audit is not set, pod-security.kubernetes.io/audit-version is not set, " +
        "pod-security.kubernetes.io/warn is not set, pod-security.kubernetes.io/warn-version is not set). " +
        'The operator\'s pods meet "restricted"; to enforce it there: kubectl label namespace devctl-system ' +
        "pod-security.kubernetes.io/enforce=restricted pod-security.kubernetes.io/enforce-version=latest " +
        "pod-security.kubernetes.io/audit=restricted pod-security.kubernetes.io/audit-version=latest " +
        "pod-security.kubernetes.io/warn=restricted pod-security.kubernetes.io/warn-version=latest --overwrite",
    ]);
  });

  test("a new namespace gets every Pod Security label and install says nothing about them", async () => {
    const { clock, fake } = cluster();
    const progress: string[] = [];
    await applyAll(fake, objects, { clock, timeoutMs: 10_000, onProgress: (l) => progress.push(l) });
    const sent = fake.calls.find((c) => c.method === "apply" && c.rt.plural === "namespaces")?.args.obj as KubeObject;
    expect(sent).toEqual(objects[1]!);
    expect(progress).toEqual([]);
  });

  test("an absent part devctl installed earlier (the NetworkPolicy) is deleted and reported; someone else's is kept", async () => {
    const { clock, fake } = cluster();
    const guarded = buildManifests({ ...opts, networkPolicy: true });
    await applyAll(fake, guarded, { clock, timeoutMs: 10_000 });
    expect(fake.objects.has("networkpolicies/devctl-system/webapp-operator")).toBe(true);
    const absent = leftOut(opts);
    expect(absent.map((o) => o.kind)).toEqual(["NetworkPolicy"]);
    const results = await applyAll(fake, objects, { clock, timeoutMs: 10_000, absent });
    expect(results.at(-1)).toMatchObject({
      name: "networkpolicy.networking.k8s.io/webapp-operator",
      action: "deleted",
    });
    expect(fake.objects.has("networkpolicies/devctl-system/webapp-operator")).toBe(false);

    const again = await applyAll(fake, objects, { clock, timeoutMs: 10_000, absent });
    expect(again.map((r) => r.action)).not.toContain("deleted");
    fake.put(NETPOL, { ...absent[0]!, metadata: { name: "webapp-operator", namespace: "devctl-system", labels: {} } });
    const theirs = await applyAll(fake, objects, { clock, timeoutMs: 10_000, absent });
    expect(theirs.map((r) => r.action)).not.toContain("deleted");
    expect(fake.objects.has("networkpolicies/devctl-system/webapp-operator")).toBe(true);
  });

  test("an absent part this identity may not delete is a note, not a failure after everything else was applied", async () => {
    const { clock, fake } = cluster();
    await applyAll(fake, buildManifests({ ...opts, networkPolicy: true }), { clock, timeoutMs: 10_000 });
    fake.failWith = (method, rt) =>
      method === "delete" && rt.plural === "networkpolicies"
        ? new KubeError("Forbidden", "forbidden: cannot delete networkpolicies", 403)
        : undefined;
    const progress: string[] = [];
    const results = await applyAll(fake, objects, {
      clock,
      timeoutMs: 10_000,
      absent: leftOut(opts),
      onProgress: (l) => progress.push(l),
    });
    expect(results.map((r) => r.action)).not.toContain("deleted");
    expect(progress).toEqual([
      "could not delete networkpolicy.networking.k8s.io/webapp-operator, which this install leaves out " +
        "(forbidden: cannot delete networkpolicies)",
    ]);
  });
});

describe("the permission preflight", () => {
  test("an identity that may not ask SelfSubjectAccessReviews is not stopped by it: the writes decide", async () => {
    const { clock, fake } = cluster();
    const create = fake.create;
    fake.create = async (rt, obj, o) => {
      if (rt.plural === "selfsubjectaccessreviews")
        throw new KubeError("Forbidden", "forbidden: cannot create selfsubjectaccessreviews", 403);
      return create(rt, obj, o);
    };
    const results = await applyAll(fake, objects, { clock, timeoutMs: 10_000 });
    expect(results.length).toBe(objects.length);
  });
});

describe("accessChecksFor", () => {
  test("asks get, create and patch once per kind and namespace", () => {
    const checks = accessChecksFor(objects);
    expect(checks.length).toBe(9 * 3);
    expect(describeChecks(checks.slice(0, 6))).toBe(
      "get, create, patch customresourcedefinitions.apiextensions.k8s.io; get, create, patch namespaces",
    );
    expect(checks).toContainEqual({
      verb: "patch",
      group: "apps",
      resource: "deployments",
      namespace: "devctl-system",
    });
    for (const [group, resource] of [
      ["policy", "poddisruptionbudgets"],
      ["networking.k8s.io", "networkpolicies"],
    ] as const)
      expect(accessChecksFor(buildManifests({ ...opts, networkPolicy: true }))).toContainEqual({
        verb: "create",
        group,
        resource,
        namespace: "devctl-system",
      });
  });
});
