import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import {
  isWebAppChild,
  LAST_APPLIED_ANNOTATION,
  shapeChild,
  shapeWebApp,
  verifiedChild,
  verifiedStamp,
} from "./cache-shape.ts";
import { CHILD_KINDS, kindOf } from "./child-kinds.ts";
import {
  desiredDeployment,
  desiredHorizontalPodAutoscaler,
  desiredIngress,
  desiredPodDisruptionBudget,
  desiredService,
} from "./desired.ts";
import { computeStatus, type LiveChildren } from "./status.ts";
import { testApp } from "./_test-fixtures.ts";

const MANAGED_FIELDS = [{ manager: "webapp-operator", operation: "Apply", fieldsV1: { "f:spec": {} } }];
const STATUS = { observedGeneration: 1, replicas: 3, readyReplicas: 3, conditions: [{ type: "Available" }] };

/** Our Deployment as the API server returns it: managedFields, a last-applied annotation, spec and status. */
function liveDeployment(): KubeObject {
  const intent = desiredDeployment(testApp());
  return {
    ...intent,
    metadata: {
      ...intent.metadata,
      uid: "dep-uid",
      resourceVersion: "42",
      generation: 2,
      creationTimestamp: "2026-12-01T00:00:00Z",
      annotations: { "deployment.kubernetes.io/revision": "1", [LAST_APPLIED_ANNOTATION]: '{"big":"json"}' },
      managedFields: MANAGED_FIELDS,
    },
    status: STATUS,
  };
}

describe("what the caches keep", () => {
  test("our child keeps spec, status, labels, owner references, other annotations and managers; fieldsV1 and last-applied go", () => {
    const live = liveDeployment();
    const shaped = shapeChild(live);
    expect(shaped.spec).toEqual(live.spec);
    expect(shaped.status).toEqual(live.status);
    expect(shaped.metadata).toEqual({
      name: "test-app-deployment",
      namespace: "default",
      labels: { app: "test-app", "managed-by": "webapp-operator" },
      ownerReferences: live.metadata.ownerReferences,
      uid: "dep-uid",
      resourceVersion: "42",
      generation: 2,
      creationTimestamp: "2026-12-01T00:00:00Z",
      annotations: { "deployment.kubernetes.io/revision": "1" },
      managedFields: [{ manager: "webapp-operator", operation: "Apply" }],
    });
    expect(live.metadata.managedFields).toBe(MANAGED_FIELDS); // the input is not modified
    expect(live.metadata.annotations?.[LAST_APPLIED_ANNOTATION]).toBeDefined();
  });

  test("our child's managedFields keep their order (ownership.ts patches by index); equal entries are shared", () => {
    const entries = [
      { manager: "kube-controller-manager", operation: "Update", subresource: "status", fieldsV1: { "f:status": {} } },
      { manager: "webapp-operator", operation: "Update", time: "2026-12-01T00:00:00Z", fieldsV1: {} },
      { manager: "webapp-operator", operation: "Apply", fieldsV1: {} },
    ];
    const withEntries = () => ({
      ...liveDeployment(),
      metadata: { ...liveDeployment().metadata, managedFields: entries },
    });
    const a = shapeChild(withEntries()).metadata.managedFields as object[];
    expect(a).toEqual([
      { manager: "kube-controller-manager", operation: "Update", subresource: "status" },
      { manager: "webapp-operator", operation: "Update" },
      { manager: "webapp-operator", operation: "Apply" },
    ]);
    const b = shapeChild(withEntries()).metadata.managedFields as object[];
    expect(b.every((e, i) => e === a[i] && Object.isFrozen(e))).toBe(true);
  });

  test("someone else's object keeps identity metadata only: no spec, status, annotations or managedFields", () => {
    const live = liveDeployment();
    const foreign: KubeObject = {
      ...live,
      metadata: {
        ...live.metadata,
        name: "theirs",
        ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "x", uid: "rs", controller: true }],
        deletionTimestamp: "2026-12-01T01:00:00Z",
        finalizers: ["example.com/keep"],
      },
    };
    expect(shapeChild(foreign)).toEqual({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name: "theirs",
        namespace: "default",
        uid: "dep-uid",
        resourceVersion: "42",
        generation: 2,
        labels: { app: "test-app", "managed-by": "webapp-operator" },
        ownerReferences: foreign.metadata.ownerReferences,
        deletionTimestamp: "2026-12-01T01:00:00Z",
      },
    });
  });

  test("ours means controlled by a WebApp of our group, with or without our label; labelled alone is not ours", () => {
    const live = liveDeployment();
    const ref = live.metadata.ownerReferences![0]!;
    const withMeta = (m: Partial<KubeObject["metadata"]>) => ({ ...live, metadata: { ...live.metadata, ...m } });
    expect(isWebAppChild(live)).toBe(true);
    expect(isWebAppChild(withMeta({ labels: {} }))).toBe(true);
    expect(shapeChild(withMeta({ labels: {} })).spec).toEqual(live.spec);
    expect(isWebAppChild(withMeta({ ownerReferences: undefined }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, controller: false }] }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, apiVersion: "other.example.org/v1" }] }))).toBe(false);
    expect(isWebAppChild(withMeta({ ownerReferences: [{ ...ref, kind: "Other" }] }))).toBe(false);
    expect(shapeChild(withMeta({ ownerReferences: undefined })).spec).toBeUndefined();
  });

  test("a WebApp keeps its spec, status and annotations but not managedFields or last-applied", () => {
    const app = testApp();
    const live: KubeObject = {
      ...app,
      metadata: {
        ...app.metadata,
        annotations: { [LAST_APPLIED_ANNOTATION]: "{}" },
        managedFields: MANAGED_FIELDS,
      },
      status: STATUS,
    };
    const shaped = shapeWebApp(live);
    expect(shaped).toEqual({ ...app, status: STATUS });
    expect(shaped.spec).toEqual(live.spec);
    expect("annotations" in shaped.metadata || "managedFields" in shaped.metadata).toBe(false);
  });
});

describe("a verified child: found carrying its intent, kept without its spec", () => {
  test("keeps metadata and status but no spec, and the stamp it was verified under", () => {
    const live = {
      ...desiredService(testApp()),
      metadata: { ...desiredService(testApp()).metadata, resourceVersion: "7" },
    };
    const svc = shapeChild({ ...live, status: { loadBalancer: {} } });
    const kept = verifiedChild(svc, 42);
    expect(kept).toEqual({ apiVersion: svc.apiVersion, kind: svc.kind, metadata: svc.metadata, status: svc.status });
    expect(verifiedStamp(kept)).toBe(42);
    expect(verifiedStamp(svc)).toBeUndefined();
  });

  test("a copy or the JSON of one claims nothing: only the instance verified carries the stamp", () => {
    const kept = verifiedChild(shapeChild(desiredService(testApp())), 42);
    expect(verifiedStamp({ ...kept })).toBeUndefined();
    expect(verifiedStamp(JSON.parse(JSON.stringify(kept)))).toBeUndefined();
    expect(verifiedStamp(verifiedChild(kept, 43))).toBe(43); // verified again: the newer stamp
  });

  test("every kind but the Deployment may be kept so: nothing reads their spec but the drift check", () => {
    expect(CHILD_KINDS.filter((k) => k.keepsSpec).map((k) => k.kind)).toEqual(["Deployment"]);
  });
});

describe("equal values shared between WebApps", () => {
  const spec = {
    healthCheck: { path: "/healthz" },
    resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { cpu: "100m", memory: "64Mi" } },
    env: [
      { name: "LOG_LEVEL", value: "info" },
      { name: "DB", valueFrom: { secretKeyRef: { name: "db", key: "password" } } },
    ],
  };
  const liveOf = (name: string) => {
    const named = testApp(spec as never);
    const app = { ...named, metadata: { ...named.metadata, name, uid: `uid-${name}` } };
    return { app: { ...app, status: { ...STATUS } }, deployment: { ...desiredDeployment(app), status: { ...STATUS } } };
  };
  // Freshly parsed, as the informer hands them over: no two share anything.
  const [a, b] = ["shop", "blog"].map((name) => JSON.parse(JSON.stringify(liveOf(name))));
  const [shapedA, shapedB] = [a, b].map((o) => shapeChild(o.deployment, kindOf(o.deployment)?.statusRead));
  const containerOf = (d: KubeObject) =>
    (d.spec as { template: { spec: { containers: Record<string, unknown>[] } } }).template.spec.containers[0] as Record<
      string,
      unknown
    >;

  test("the shaped object equals the unshaped one", () => {
    expect(shapedA).toEqual(shapeChild(JSON.parse(JSON.stringify(a.deployment)), kindOf(a.deployment)?.statusRead));
    expect(shapedA?.spec).toEqual(a.deployment.spec);
    expect(shapeWebApp(JSON.parse(JSON.stringify(a.app)))).toEqual(a.app);
  });

  test("an equal probe, resources, port list or secret reference in two WebApps' objects is one frozen instance", () => {
    const [ca, cb] = [containerOf(shapedA as KubeObject), containerOf(shapedB as KubeObject)];
    for (const field of ["resources", "readinessProbe", "livenessProbe", "ports"]) {
      expect(ca[field]).toBe(cb[field]);
      expect(Object.isFrozen(ca[field])).toBe(true);
    }
    expect((ca.env as unknown[])[1]).toBe((cb.env as unknown[])[1]);
    const [sa, sb] = [a, b].map((o) => shapeWebApp(JSON.parse(JSON.stringify(o.app))).spec as typeof spec);
    expect(sa?.resources).toBe(sb?.resources as never);
    expect(sa?.healthCheck).toBe(sb?.healthCheck as never);
  });

  test("what mentions the WebApp's name is its own, and so is whatever holds it", () => {
    const [da, db] = [shapedA, shapedB].map((d) => d?.spec as { selector: object; template: object });
    expect(Object.isFrozen(da?.selector)).toBe(false);
    expect(Object.isFrozen(da?.template)).toBe(false);
    expect(da?.selector).not.toBe(db?.selector as never);
    expect(containerOf(shapedA as KubeObject)).toBe(containerOf(shapedB as KubeObject)); // mentions neither
  });

  test("values alike only when written out flat are not one instance: keys, values and types stay apart", () => {
    const specs = [{ x: { ab: "c" } }, { x: { a: "bc" } }, { x: { a: 1 } }, { x: { a: "1" } }, { x: { a: true } }];
    const shaped = specs.map((spec, i) => shapeWebApp({ ...testApp(), metadata: { name: `w${i}` }, spec } as never));
    const x = shaped.map((w) => (w as unknown as { spec: { x: object } }).spec.x);
    expect(x).toEqual(specs.map((s) => s.x));
    expect(new Set(x).size).toBe(specs.length);
  });

  test("a child's status is shared like its spec: equal when it mentions nothing of its WebApp, its own when it does", () => {
    expect(shapedA?.status).toBe(shapedB?.status as never);
    expect(Object.isFrozen(shapedA?.status)).toBe(true);
    const progressing = (name: string) => ({
      ...JSON.parse(JSON.stringify(liveOf(name).deployment)),
      status: {
        conditions: [
          { type: "Progressing", status: "True", message: `ReplicaSet "${name}-deployment-1" is progressing` },
        ],
      },
    });
    const [pa, pb] = ["shop", "blog"].map((n) => shapeChild(progressing(n), kindOf(a.deployment)?.statusRead));
    expect(pa?.status).toEqual(progressing("shop").status);
    expect(Object.isFrozen(pa?.status)).toBe(false);
    expect(pa?.status).not.toBe(pb?.status as never);
  });

  test("new equal values are still shared after far more distinct ones than the table holds were offered", () => {
    for (let i = 0; i < 20_000; i++)
      shapeWebApp({ ...testApp(), metadata: { name: `w${i}` }, spec: { x: { n: i } } } as never);
    const late = ["shop", "blog"].map((name) => {
      const o = JSON.parse(JSON.stringify(liveOf(name)));
      o.deployment.spec.template.spec.containers[0].resources = { limits: { cpu: "7m" } };
      return containerOf(shapeChild(o.deployment) as KubeObject);
    });
    expect(late[0]?.resources).toEqual({ limits: { cpu: "7m" } });
    expect(late[0]?.resources).toBe(late[1]?.resources);
  });
});

describe("what the children of one WebApp have alike: owner references, labels, managers", () => {
  const app = testApp();
  const parsed = <T>(o: T): T => JSON.parse(JSON.stringify(o));
  const live = (o: KubeObject, uid: string): KubeObject =>
    parsed({ ...o, metadata: { ...o.metadata, uid, resourceVersion: "1", managedFields: MANAGED_FIELDS } });
  const children = [
    live(desiredDeployment(app), "d"),
    live(desiredService(app), "s"),
    live(desiredPodDisruptionBudget(app), "p"),
  ].map((o) => shapeChild(o, kindOf(o)?.statusRead));
  const [deployment, service, budget] = children as [KubeObject, KubeObject, KubeObject];
  const spec = (o: KubeObject) => o.spec as Record<string, any>;

  test("one frozen owner reference list and one label map for all of them, wherever the map appears", () => {
    const refs = deployment.metadata.ownerReferences;
    const labels = deployment.metadata.labels;
    expect(Object.isFrozen(refs)).toBe(true);
    expect(Object.isFrozen(labels)).toBe(true);
    for (const child of children) {
      expect(child?.metadata.ownerReferences).toBe(refs as never);
      expect(child?.metadata.labels).toBe(labels as never);
    }
    expect(spec(deployment).selector.matchLabels).toBe(labels);
    expect(spec(deployment).template.metadata.labels).toBe(labels);
    expect(spec(service).selector).toBe(labels);
    expect(spec(budget).selector.matchLabels).toBe(labels);
    expect(deployment).toEqual(shapeChild(live(desiredDeployment(app), "d"), kindOf(deployment)?.statusRead));
    expect(spec(deployment).selector.matchLabels).toEqual(desiredDeployment(app).spec?.selector?.matchLabels as never);
  });

  test("equal managedFields lists are one frozen list", () => {
    expect(service.metadata.managedFields).toBe(deployment.metadata.managedFields as never);
    expect(Object.isFrozen(service.metadata.managedFields)).toBe(true);
  });

  test("a child whose labels or owner references someone changed keeps its own; another WebApp's are apart", () => {
    const edited = desiredService(app);
    edited.metadata.labels = { ...edited.metadata.labels, team: "a" };
    const shaped = shapeChild(live(edited, "s2"));
    expect(shaped.metadata.labels).toEqual(edited.metadata.labels as never);
    expect(shaped.metadata.labels).not.toBe(deployment.metadata.labels as never);
    expect(shaped.metadata.ownerReferences).toBe(deployment.metadata.ownerReferences as never);
    const other = testApp();
    other.metadata = { ...other.metadata, uid: "another-uid" };
    const theirs = shapeChild(live(desiredService(other), "s3"));
    expect(theirs.metadata.ownerReferences).toEqual(desiredService(other).metadata.ownerReferences as never);
    expect(theirs.metadata.ownerReferences).not.toBe(deployment.metadata.ownerReferences as never);
  });
});

describe("the status our children keep: what the operator reads of it", () => {
  const app = testApp({
    replicas: undefined,
    autoscaling: { minReplicas: 2, maxReplicas: 4 },
    resources: { requests: { cpu: "1" } },
    expose: { host: "shop.example.com" },
  });
  const T = "2026-12-05T08:29:54Z";
  const cond = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastTransitionTime: T,
    lastUpdateTime: T,
  });
  const owned = (intent: KubeObject, status: Record<string, unknown>): KubeObject => ({
    ...intent,
    metadata: { ...intent.metadata, uid: `${intent.kind}-uid`, resourceVersion: "9", generation: 1 },
    status,
  });
  /** Statuses as the controller-manager and an Ingress controller write them, every field they carry. */
  const deploymentStatuses: Record<string, unknown>[] = [
    {
      observedGeneration: 1,
      replicas: 4,
      updatedReplicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      terminatingReplicas: 0,
      conditions: [
        cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
        cond("Progressing", "True", "NewReplicaSetAvailable", 'ReplicaSet "shop-7f" has successfully progressed.'),
      ],
    },
    {
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      unavailableReplicas: 1,
      conditions: [
        cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
        cond("Progressing", "False", "ProgressDeadlineExceeded", 'ReplicaSet "shop-7f" has timed out progressing.'),
        cond("ReplicaFailure", "True", "FailedCreate", 'pods "shop-7f-x" is forbidden: exceeded quota: q'),
      ],
    },
    { observedGeneration: 0 },
  ];
  const hpaStatuses: Record<string, unknown>[] = [
    {
      currentReplicas: 4,
      desiredReplicas: 4,
      currentMetrics: [{ type: "Resource", resource: { name: "cpu", current: { averageUtilization: 95 } } }],
      lastScaleTime: T,
      conditions: [
        cond("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size"),
        cond("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully calculate a replica count"),
        cond("ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more than the maximum"),
      ],
    },
    {
      currentReplicas: 2,
      desiredReplicas: 0,
      currentMetrics: [{ type: "" }],
      conditions: [
        cond(
          "AbleToScale",
          "True",
          "SucceededGetScale",
          "the HPA controller was able to get the target's current scale",
        ),
        cond("ScalingActive", "False", "FailedGetResourceMetric", "unable to get metrics for resource cpu"),
      ],
    },
  ];
  const ingressStatuses = [{ loadBalancer: {} }, { loadBalancer: { ingress: [{ ip: "10.0.0.7", ports: [] }] } }];
  const serviceStatus = { loadBalancer: {} };
  const budgetStatus = {
    observedGeneration: 1,
    currentHealthy: 4,
    desiredHealthy: 3,
    disruptionsAllowed: 1,
    expectedPods: 4,
    conditions: [cond("DisruptionAllowed", "True", "SufficientPods", "")],
  };
  const shaped = (obj: KubeObject) => shapeChild(obj, kindOf(obj)?.statusRead);

  /** Every combination of the children's statuses above, the children whole as the API server returns them. */
  function* wholeChildren(): Generator<LiveChildren> {
    for (const d of deploymentStatuses)
      for (const h of hpaStatuses)
        for (const i of ingressStatuses)
          yield {
            Deployment: owned(desiredDeployment(app), d),
            Service: owned(desiredService(app), serviceStatus),
            PodDisruptionBudget: owned(desiredPodDisruptionBudget(app), budgetStatus),
            Ingress: owned(desiredIngress(app), i),
            HorizontalPodAutoscaler: owned(desiredHorizontalPodAutoscaler(app), h),
          };
  }
  const mapChildren = (whole: LiveChildren, f: (o: KubeObject) => KubeObject) =>
    Object.fromEntries(Object.entries(whole).map(([k, o]) => [k, f(o as KubeObject)]));

  test("the WebApp's status computed from the shaped children is the one computed from the whole ones", () => {
    let cases = 0;
    for (const whole of wholeChildren()) {
      expect(computeStatus(app, mapChildren(whole, shaped), [], 0)).toEqual(computeStatus(app, whole, [], 0));
      cases++;
    }
    expect(cases).toBe(12);
  });

  test("so is the one computed from verified children (kept without spec, but for the Deployment)", () => {
    const verify = (o: KubeObject) => {
      const kept = shaped(o);
      return kindOf(kept)?.keepsSpec ? kept : verifiedChild(kept, 1);
    };
    for (const whole of wholeChildren())
      expect(computeStatus(app, mapChildren(whole, verify), [], 0)).toEqual(computeStatus(app, whole, [], 0));
  });

  test("kept: a Deployment's counts and three conditions, an autoscaler's counts and ScalingActive, an Ingress's all", () => {
    const dep = shaped(owned(desiredDeployment(app), deploymentStatuses[1] as Record<string, unknown>));
    expect(dep.status).toEqual({
      observedGeneration: 1,
      replicas: 1,
      updatedReplicas: 1,
      conditions: [
        { type: "Available", status: "False", reason: "MinimumReplicasUnavailable", message: expect.any(String) },
        { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: expect.any(String) },
        { type: "ReplicaFailure", status: "True", reason: "FailedCreate", message: expect.any(String) },
      ],
    });
    const hpa = shaped(owned(desiredHorizontalPodAutoscaler(app), hpaStatuses[0] as Record<string, unknown>));
    expect(hpa.status).toEqual({
      currentReplicas: 4,
      desiredReplicas: 4,
      conditions: [{ type: "ScalingActive", status: "True", reason: "ValidMetricFound", message: expect.any(String) }],
    });
    const ingress = owned(desiredIngress(app), ingressStatuses[1] as Record<string, unknown>);
    expect(shaped(ingress).status).toBe(ingress.status);
    expect(shaped(owned(desiredService(app), serviceStatus)).status).toBeUndefined();
    expect(shaped(owned(desiredPodDisruptionBudget(app), budgetStatus)).status).toBeUndefined();
    const input = owned(desiredDeployment(app), deploymentStatuses[0] as Record<string, unknown>);
    shaped(input);
    expect(input.status).toBe(deploymentStatuses[0]); // the input is not modified
  });

  test("someone else's object keeps no status whatever its kind reads; ours without a statusRead keeps all", () => {
    const theirs = { ...owned(desiredDeployment(app), deploymentStatuses[0] as Record<string, unknown>) };
    theirs.metadata = { ...theirs.metadata, ownerReferences: [] };
    expect(shaped(theirs).status).toBeUndefined();
    const ours = owned(desiredDeployment(app), deploymentStatuses[0] as Record<string, unknown>);
    expect(shapeChild(ours).status).toBe(ours.status);
  });
});

describe("arrays in the caches", () => {
  /** What a child's shared values are like in a process with NODE_ENV `env` (a module constant: a process of its own). */
  const probe = (env: string) => {
    const script = `
      import { shapeChild, shapeWebApp } from ${JSON.stringify(`${import.meta.dir}/cache-shape.ts`)};
      const owner = { apiVersion: "apps.example.com/v1", kind: "WebApp", name: "q9", uid: "u", controller: true };
      const child = shapeChild({ apiVersion: "v1", kind: "Service", metadata: { name: "q9-svc", namespace: "n",
        ownerReferences: [owner] }, spec: { ports: [{ port: 80 }] } });
      const app = shapeWebApp({ apiVersion: "apps.example.com/v1", kind: "WebApp", metadata: { name: "q9", namespace: "n" },
        spec: { image: "i", port: 80 }, status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "t" }] } });
      console.log(JSON.stringify({
        ownerReferences: Object.isFrozen(child.metadata.ownerReferences),
        owner: Object.isFrozen(child.metadata.ownerReferences[0]),
        ports: Object.isFrozen(child.spec.ports),
        port: Object.isFrozen(child.spec.ports[0]),
        conditions: Object.isFrozen(app.status.conditions),
      }));`;
    const r = Bun.spawnSync([process.execPath, "-e", script], { env: { ...process.env, NODE_ENV: env } });
    expect(r.stderr.toString()).toBe("");
    return JSON.parse(r.stdout.toString());
  };

  test("are not frozen in the operator (JavaScriptCore gives a frozen array a sparse map, +160 B); their objects are", () => {
    expect(probe("production")).toEqual({
      ownerReferences: false,
      owner: true,
      ports: false,
      port: true,
      conditions: false,
    });
  });

  test("are frozen under bun test, where a pass that changed one would fail", () => {
    expect(probe("test")).toEqual({ ownerReferences: true, owner: true, ports: true, port: true, conditions: true });
  });
});
