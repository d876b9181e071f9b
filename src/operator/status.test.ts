import { describe, expect, test } from "bun:test";
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import {
  desiredDeployment,
  desiredHorizontalPodAutoscaler,
  desiredIngress,
  desiredPodDisruptionBudget,
  desiredService,
  podTemplateDigest,
} from "./desired.ts";
import { computeStatus, resourceExistsProblem, statusEqual } from "./status.ts";

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);
const T1 = T0 + 30_000;

interface DepState {
  generation?: number;
  observedGeneration?: number;
  specReplicas?: number;
  image?: string;
  replicas?: number;
  updated?: number;
  ready?: number;
  available?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/** A live Deployment of the seed's test-app (3 replicas of nginx:1.25), fully rolled out unless told otherwise. */
function deployment(s: DepState = {}): KubeObject {
  const d = desiredDeployment(testApp()) as KubeObject & ReturnType<typeof desiredDeployment>;
  const replicas = s.specReplicas ?? 3;
  d.metadata.generation = s.generation ?? 1;
  d.spec.replicas = replicas;
  d.spec.template.spec.containers[0]!.image = s.image ?? "nginx:1.25";
  const available = s.available ?? replicas;
  d.status = {
    observedGeneration: s.observedGeneration ?? d.metadata.generation,
    replicas: s.replicas ?? replicas,
    updatedReplicas: s.updated ?? replicas,
    readyReplicas: s.ready ?? available,
    availableReplicas: available,
    conditions: s.conditions ?? [
      { type: "Available", status: available > 0 ? "True" : "False", reason: "MinimumReplicasAvailable" },
      { type: "Progressing", status: "True", reason: "NewReplicaSetAvailable" },
    ],
  };
  return d;
}

const service = (): KubeObject => desiredService(testApp());
const budget = (): KubeObject => desiredPodDisruptionBudget(testApp());
const byType = (st: WebAppStatus) =>
  Object.fromEntries((st.conditions ?? []).map((c) => [c.type, [c.status, c.reason, c.message]]));
const withStatus = (app: WebAppObject, status: WebAppStatus): WebAppObject => ({ ...app, status });

describe("computeStatus", () => {
  test("a fully rolled-out WebApp is Ready and Available, not Reconciling, Stalled, Progressing or Degraded", () => {
    const st = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(st).toMatchObject({
      observedGeneration: 1,
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      selector: "app=test-app,managed-by=webapp-operator",
    });
    expect(byType(st)).toEqual({
      Ready: ["True", "Available", "3/3 replicas are ready"],
      Available: ["True", "DeploymentAvailable", "3/3 replicas are ready"],
      Progressing: ["False", "RolloutComplete", "3 of 3 replicas ready and available"],
      Degraded: ["False", "AsExpected", "no problems found"],
    });
    expect(
      st.conditions!.every((c) => c.lastTransitionTime === "2024-05-01T12:00:00Z" && c.observedGeneration === 1),
    ).toBe(true);
  });

  test("an unchanged state recomputed later is equal to the stored status, so no write is needed", () => {
    const stored = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    const again = computeStatus(
      withStatus(testApp(), stored),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T1,
    );
    expect(again).toEqual(stored);
    expect(statusEqual(stored, again)).toBe(true);
  });

  test("a status written before Reconciling and Stalled became abnormal-true (both False) needs no write", () => {
    const now = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    const stamp = { lastTransitionTime: "2024-05-01T11:00:00Z", observedGeneration: 1 };
    const older = [
      { type: "Reconciling", status: "False", reason: "AsExpected", message: "nothing left to do", ...stamp },
      { type: "Stalled", status: "False", reason: "AsExpected", message: "no problems found", ...stamp },
    ] as const;
    const stored = { ...now, conditions: [...now.conditions!, ...older] };
    expect(
      statusEqual(
        stored,
        computeStatus(
          withStatus(testApp(), stored),
          { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
          [],
          T1,
        ),
      ),
    ).toBe(true);
    const reconcilingTrue = { ...now, conditions: [...now.conditions!, { ...older[0], status: "True" as const }] };
    expect(statusEqual(reconcilingTrue, now)).toBe(false);
  });

  test("a condition whose status flips gets a new lastTransitionTime; the others keep theirs", () => {
    const stored = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    const scaling = computeStatus(
      withStatus(testApp({ replicas: 5 }, "uid-1", 2), stored),
      {
        Deployment: deployment({ generation: 2, specReplicas: 5, updated: 5, available: 3 }),
        Service: service(),
        PodDisruptionBudget: budget(),
      },
      [],
      T1,
    );
    const times = Object.fromEntries(scaling.conditions!.map((c) => [c.type, c.lastTransitionTime]));
    expect(times).toEqual({
      Ready: "2024-05-01T12:00:30Z",
      Reconciling: "2024-05-01T12:00:30Z",
      Available: "2024-05-01T12:00:00Z",
      Progressing: "2024-05-01T12:00:30Z",
      Degraded: "2024-05-01T12:00:00Z",
    });
    expect(statusEqual(stored, scaling)).toBe(false);
  });

  test("scaling up reports Progressing RollingOut with how many updated replicas are available", () => {
    const st = computeStatus(
      testApp({ replicas: 5 }),
      {
        Deployment: deployment({ specReplicas: 5, updated: 5, available: 3 }),
        Service: service(),
        PodDisruptionBudget: budget(),
      },
      [],
      T0,
    );
    expect(byType(st).Progressing).toEqual(["True", "RollingOut", "3 of 5 updated replicas are available"]);
    expect(byType(st).Available).toEqual(["True", "DeploymentAvailable", "3/5 replicas are ready"]);
  });

  test("a new image is in progress until the Deployment controller observed the generation our apply produced, then as replicas updated", () => {
    const next = testApp({ image: "nginx:1.26" });
    const applied = deployment({ generation: 2, observedGeneration: 1, image: "nginx:1.26" });
    expect(
      byType(computeStatus(next, { Deployment: applied, Service: service(), PodDisruptionBudget: budget() }, [], T0))
        .Progressing,
    ).toEqual(["True", "RollingOut", "waiting for the Deployment controller to observe the latest spec"]);
    const rolling = deployment({ generation: 2, image: "nginx:1.26", replicas: 4, updated: 1 });
    expect(
      byType(computeStatus(next, { Deployment: rolling, Service: service(), PodDisruptionBudget: budget() }, [], T0))
        .Progressing,
    ).toEqual(["True", "RollingOut", "1 of 3 new replicas have been updated"]);
  });

  test("a Deployment whose image admission pinned to a digest is Ready: nothing is compared with the spec", () => {
    const pinned = deployment({ image: `nginx@sha256:${"a".repeat(64)}` });
    expect(
      byType(
        computeStatus(testApp(), { Deployment: pinned, Service: service(), PodDisruptionBudget: budget() }, [], T0),
      ).Ready,
    ).toEqual(["True", "Available", "3/3 replicas are ready"]);
  });

  test("children the cache has not shown yet are reported as being created, never as existing", () => {
    const st = computeStatus(testApp(), { Deployment: deployment() }, [], T0, { pending: ["Service"] });
    expect(byType(st).Available).toEqual([
      "False",
      "ServiceCreating",
      "creating Service test-app-svc; 3/3 replicas are ready",
    ]);
    const first = computeStatus(testApp(), {}, [], T0, { pending: ["Deployment", "Service"] });
    expect(byType(first).Available).toEqual(["False", "DeploymentCreating", "creating Deployment test-app-deployment"]);
    expect(byType(first).Progressing).toEqual(["True", "RollingOut", "creating Deployment test-app-deployment"]);
  });

  test("carries the admission records it is given, else the stored ones, and compares them", () => {
    const admitted = [{ kind: "Deployment", path: "spec.replicas", sent: "3", stored: "2" }];
    const st = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
      { admitted },
    );
    expect(st.admitted).toEqual(admitted);
    expect(
      computeStatus(
        withStatus(testApp(), st),
        { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
        [],
        T1,
      ).admitted,
    ).toEqual(admitted);
    expect(statusEqual(st, { ...st, admitted: [] })).toBe(false);
    expect(statusEqual({ ...st, admitted: [] }, { ...st, admitted: undefined })).toBe(true);
  });

  test("old replicas still terminating keep the rollout in progress", () => {
    const st = computeStatus(
      testApp(),
      { Deployment: deployment({ replicas: 4 }), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(byType(st).Progressing).toEqual(["True", "RollingOut", "1 old replicas are pending termination"]);
  });

  test("a change the Deployment controller has not observed yet is in progress whatever the counts say", () => {
    const st = computeStatus(
      testApp(),
      {
        Deployment: deployment({ generation: 3, observedGeneration: 2 }),
        Service: service(),
        PodDisruptionBudget: budget(),
      },
      [],
      T0,
    );
    expect(byType(st).Progressing).toEqual([
      "True",
      "RollingOut",
      "waiting for the Deployment controller to observe the latest spec",
    ]);
  });

  test("a rollout past its progress deadline is Degraded and says where to look", () => {
    const stalled = deployment({
      image: "nginx:nope",
      updated: 1,
      available: 3,
      conditions: [
        { type: "Available", status: "True", reason: "MinimumReplicasAvailable" },
        {
          type: "Progressing",
          status: "False",
          reason: "ProgressDeadlineExceeded",
          message: 'ReplicaSet "test-app-deployment-5d9" has timed out progressing.',
        },
      ],
    });
    const st = computeStatus(
      testApp({ image: "nginx:nope" }),
      { Deployment: stalled, Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(byType(st).Progressing).toEqual([
      "False",
      "ProgressDeadlineExceeded",
      'progress deadline exceeded: ReplicaSet "test-app-deployment-5d9" has timed out progressing.',
    ]);
    const [status, reason, message] = byType(st).Degraded!;
    expect([status, reason]).toEqual(["True", "ProgressDeadlineExceeded"]);
    expect(message).toContain("kubectl describe pods -l app=test-app,managed-by=webapp-operator");
  });

  test("a Deployment that cannot create pods is Degraded with its reason", () => {
    const failing = deployment({
      available: 0,
      replicas: 0,
      updated: 0,
      conditions: [
        {
          type: "ReplicaFailure",
          status: "True",
          reason: "FailedCreate",
          message: 'pods "x" is forbidden: exceeded quota',
        },
      ],
    });
    const st = computeStatus(
      testApp(),
      { Deployment: failing, Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(byType(st).Degraded).toEqual([
      "True",
      "ReplicaFailure",
      'Deployment test-app-deployment cannot create pods: pods "x" is forbidden: exceeded quota',
    ]);
    expect(byType(st).Available).toEqual(["False", "DeploymentUnavailable", "0/3 replicas are ready"]);
  });

  test("a Service with our name that another owner controls makes the WebApp Degraded, with what to do", () => {
    const foreign: KubeObject = {
      metadata: {
        name: "test-app-svc",
        namespace: "default",
        ownerReferences: [{ apiVersion: "v1", kind: "Other", name: "o", uid: "x", controller: true }],
      },
    };
    const st = computeStatus(testApp(), { Deployment: deployment() }, [resourceExistsProblem("Service", foreign)], T0);
    expect(byType(st).Degraded).toEqual([
      "True",
      "ResourceExists",
      "Service test-app-svc exists and is not controlled by this WebApp (it is controlled by Other o); delete it (kubectl delete service test-app-svc -n default) or give the WebApp another name",
    ]);
    expect(byType(st).Available).toEqual([
      "False",
      "ServiceNotFound",
      "Service test-app-svc controlled by this WebApp does not exist; 3/3 replicas are ready",
    ]);
  });

  test("an invalid spec is Degraded InvalidSpec naming the field, once even if the reconciler reports it too", () => {
    const bad: WebAppObject = {
      metadata: { name: "test-app", namespace: "default", generation: 4 },
      spec: { image: "nginx:1.25", replicas: 0, port: 80 },
    };
    const st = computeStatus(
      bad,
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(byType(st).Degraded).toEqual([
      "True",
      "InvalidSpec",
      "the spec is invalid: spec.replicas: must be at least 1 (got 0); fix it (kubectl edit webapp test-app -n default)",
    ]);
    expect(st.observedGeneration).toBe(4);
    const reported = computeStatus(
      bad,
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [{ reason: "InvalidSpec", message: "m" }],
      T0,
    );
    expect(byType(reported).Degraded).toEqual(["True", "InvalidSpec", "m"]);
  });

  test("before the Deployment exists the WebApp is progressing, or blocked when there are problems", () => {
    const fresh = computeStatus(testApp(), {}, [], T0);
    expect(fresh).toMatchObject({ replicas: 0, readyReplicas: 0, availableReplicas: 0 });
    expect(byType(fresh).Available).toEqual([
      "False",
      "DeploymentNotFound",
      "Deployment test-app-deployment controlled by this WebApp does not exist",
    ]);
    expect(byType(fresh).Progressing).toEqual(["True", "RollingOut", "creating Deployment test-app-deployment"]);
    const blocked = computeStatus(testApp(), {}, [{ reason: "Forbidden", message: "cannot create deployments" }], T0);
    expect(byType(blocked).Progressing).toEqual([
      "False",
      "Blocked",
      "cannot create the Deployment; see the Stalled or Degraded condition",
    ]);
    expect(byType(blocked).Degraded).toEqual(["True", "Forbidden", "cannot create deployments"]);
  });
});

describe("the kstatus conditions", () => {
  const kstatus = (st: WebAppStatus) => {
    const t = byType(st);
    return {
      Ready: t.Ready?.slice(0, 2),
      Reconciling: t.Reconciling?.[0] ?? "absent",
      Stalled: t.Stalled?.[0] ?? "absent",
    };
  };
  const foreign: KubeObject = { metadata: { name: "test-app-deployment", namespace: "default" } };
  const deadline = {
    type: "Progressing",
    status: "False",
    reason: "ProgressDeadlineExceeded",
    message: "ReplicaSet x has timed out progressing.",
  };
  const cases: [string, () => WebAppStatus, { Ready: string[]; Reconciling: string; Stalled: string }][] = [
    [
      "converging (no Deployment yet)",
      () => computeStatus(testApp(), {}, [], T0),
      { Ready: ["False", "RollingOut"], Reconciling: "True", Stalled: "absent" },
    ],
    [
      "scaled up with pods pending",
      () =>
        computeStatus(
          testApp({ replicas: 8 }),
          {
            Deployment: deployment({ specReplicas: 8, available: 5 }),
            Service: service(),
            PodDisruptionBudget: budget(),
          },
          [],
          T0,
        ),
      { Ready: ["False", "RollingOut"], Reconciling: "True", Stalled: "absent" },
    ],
    [
      "rolled out",
      () =>
        computeStatus(
          testApp(),
          { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
          [],
          T0,
        ),
      { Ready: ["True", "Available"], Reconciling: "absent", Stalled: "absent" },
    ],
    [
      "blocked by a foreign object",
      () =>
        computeStatus(
          testApp(),
          { Service: service(), PodDisruptionBudget: budget() },
          [resourceExistsProblem("Deployment", foreign)],
          T0,
        ),
      { Ready: ["False", "ResourceExists"], Reconciling: "absent", Stalled: "True" },
    ],
    [
      "forbidden",
      () => computeStatus(testApp(), {}, [{ reason: "Forbidden", message: "m" }], T0),
      { Ready: ["False", "Forbidden"], Reconciling: "absent", Stalled: "True" },
    ],
    [
      "a write that failed and is retried",
      () => computeStatus(testApp(), { Deployment: deployment() }, [{ reason: "ApplyFailed", message: "500" }], T0),
      { Ready: ["False", "ApplyFailed"], Reconciling: "True", Stalled: "absent" },
    ],
    [
      "past its progress deadline",
      () =>
        computeStatus(
          testApp(),
          {
            Deployment: deployment({ available: 2, conditions: [deadline] }),
            Service: service(),
            PodDisruptionBudget: budget(),
          },
          [],
          T0,
        ),
      { Ready: ["False", "ProgressDeadlineExceeded"], Reconciling: "absent", Stalled: "True" },
    ],
  ];
  for (const [state, status, want] of cases) {
    test(`${state}: Ready ${want.Ready.join("/")}, Reconciling ${want.Reconciling}, Stalled ${want.Stalled}`, () => {
      expect(kstatus(status())).toEqual(want);
    });
  }

  test("an invalid spec is Stalled even while its old Deployment runs, with what to fix", () => {
    const bad: WebAppObject = {
      metadata: { name: "test-app", namespace: "default", generation: 2 },
      spec: { image: "nginx:1.25", replicas: 0, port: 80 },
    };
    const st = computeStatus(
      bad,
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    expect(byType(st).Stalled).toEqual([
      "True",
      "InvalidSpec",
      "the spec is invalid: spec.replicas: must be at least 1 (got 0); fix it (kubectl edit webapp test-app -n default)",
    ]);
    expect(byType(st).Ready?.slice(0, 2)).toEqual(["False", "InvalidSpec"]);
    expect(st.conditions?.every((c) => c.observedGeneration === 2)).toBe(true);
  });
});

describe("statusEqual", () => {
  test("notices a changed count, generation or selector", () => {
    const st = computeStatus(
      testApp(),
      { Deployment: deployment(), Service: service(), PodDisruptionBudget: budget() },
      [],
      T0,
    );
    for (const change of [
      { readyReplicas: 2 },
      { observedGeneration: 2 },
      { selector: "app=x" },
      { replicas: 9 },
      { availableReplicas: 1 },
    ]) {
      expect(statusEqual(st, { ...st, ...change })).toBe(false);
    }
    expect(statusEqual(undefined, st)).toBe(false);
    expect(statusEqual(undefined, {})).toBe(true);
  });
});

describe("computeStatus with a PodDisruptionBudget (wanted from 2 replicas, unless turned off)", () => {
  const available = (st: WebAppStatus) => byType(st).Available ?? [];

  test("a WebApp of 3 replicas is not Available while its budget is missing or being created", () => {
    expect(available(computeStatus(testApp(), { Deployment: deployment(), Service: service() }, [], T0))).toEqual([
      "False",
      "PodDisruptionBudgetNotFound",
      "PodDisruptionBudget test-app-pdb controlled by this WebApp does not exist; 3/3 replicas are ready",
    ]);
    const pending = computeStatus(testApp(), { Deployment: deployment(), Service: service() }, [], T0, {
      pending: ["PodDisruptionBudget"],
    });
    expect(available(pending)).toEqual([
      "False",
      "PodDisruptionBudgetCreating",
      "creating PodDisruptionBudget test-app-pdb; 3/3 replicas are ready",
    ]);
  });

  test("one replica, or enabled: false, wants none: Available and Ready without it", () => {
    const one = testApp({ replicas: 1 });
    const oneDep = deployment({ specReplicas: 1 });
    expect(available(computeStatus(one, { Deployment: oneDep, Service: service() }, [], T0))[0]).toBe("True");
    const off = testApp({ disruptionBudget: { enabled: false } });
    const st = computeStatus(off, { Deployment: deployment(), Service: service() }, [], T0);
    expect(available(st)[0]).toBe("True");
    expect((byType(st).Ready ?? [])[0]).toBe("True");
  });
});

describe("computeStatus of an exposed WebApp (spec.expose: its Ingress)", () => {
  const exposed = testApp({ replicas: 1, expose: { host: "shop.example.com", tlsSecretName: "shop-tls" } });
  const ingress = (address?: object): KubeObject => ({
    ...desiredIngress(exposed),
    status: { loadBalancer: address ? { ingress: [address] } : {} },
  });
  const live = (ing?: KubeObject) => ({
    Deployment: deployment({ specReplicas: 1 }),
    Service: service(),
    Ingress: ing,
  });

  test("its Ingress without an address yet: Ready, and saying so; no url", () => {
    const st = computeStatus(exposed, live(ingress()), [], T0);
    expect(st.url).toBeUndefined();
    expect(byType(st).Ready?.[0]).toBe("True");
    expect(byType(st).Available?.[2]).toBe(
      "1/1 replicas are ready; Ingress test-app-ingress has no address yet (is an Ingress controller running for its class?)",
    );
  });

  test("once the controller gives it an address (an IP or a host name): status.url, https with a TLS Secret", () => {
    for (const address of [{ ip: "192.0.2.10" }, { hostname: "lb.example.net" }]) {
      const st = computeStatus(exposed, live(ingress(address)), [], T0);
      expect(st.url).toBe("https://shop.example.com/");
      expect(byType(st).Available?.[2]).toBe("1/1 replicas are ready; serving at https://shop.example.com/");
      expect(statusEqual(st, { ...st, url: undefined })).toBe(false);
    }
  });

  test("its Ingress missing: not Available, as any wanted child", () => {
    expect(byType(computeStatus(exposed, live(), [], T0)).Available?.[1]).toBe("IngressNotFound");
  });
});

describe("an autoscaled WebApp", () => {
  const app = testApp({
    replicas: undefined,
    autoscaling: { minReplicas: 2, maxReplicas: 4 },
    resources: { requests: { cpu: "1" } },
  });
  const hpa = (status?: Record<string, unknown>): KubeObject => ({
    ...desiredHorizontalPodAutoscaler(app),
    ...(status ? { status } : {}),
  });
  const live = (d: KubeObject, h: KubeObject) => ({
    Deployment: d,
    Service: service(),
    PodDisruptionBudget: budget(),
    HorizontalPodAutoscaler: h,
  });

  test("counts the replicas its autoscaler set: at the maximum it is Ready, with the autoscaler's counts", () => {
    const st = computeStatus(
      app,
      live(deployment({ specReplicas: 4 }), hpa({ currentReplicas: 4, desiredReplicas: 4 })),
      [],
      T0,
    );
    expect(byType(st).Ready).toEqual(["True", "Available", "4/4 replicas are ready; autoscaled between 2 and 4 pods"]);
    expect(st.autoscaling).toEqual({ currentReplicas: 4, desiredReplicas: 4 });
    expect(
      statusEqual(withStatus(app, st).status, { ...st, autoscaling: { currentReplicas: 3, desiredReplicas: 4 } }),
    ).toBe(false);
  });

  test("an autoscaler that cannot read metrics is said in Available's message, and the WebApp stays Ready", () => {
    const message = "the HPA was unable to compute the replica count: unable to get metrics for resource cpu";
    const conditions = [{ type: "ScalingActive", status: "False", reason: "FailedGetResourceMetric", message }];
    const h = hpa({ currentReplicas: 2, desiredReplicas: 2, conditions });
    const st = computeStatus(app, live(deployment({ specReplicas: 2 }), h), [], T0);
    expect(byType(st).Ready?.[0]).toBe("True");
    expect(byType(st).Available?.[2]).toBe(
      `2/2 replicas are ready; autoscaled between 2 and 4 pods, but the autoscaler is not scaling on metrics (FailedGetResourceMetric: ${message})`,
    );
  });

  test("before its autoscaler's first sync: no counts; its autoscaler missing: not Available", () => {
    expect(computeStatus(app, live(deployment({ specReplicas: 2 }), hpa()), [], T0).autoscaling).toBeUndefined();
    const { HorizontalPodAutoscaler: _, ...without } = live(deployment({ specReplicas: 2 }), hpa());
    expect(byType(computeStatus(app, without, [], T0)).Available?.slice(0, 2)).toEqual([
      "False",
      "HorizontalPodAutoscalerNotFound",
    ]);
  });
});

describe("the rollout history in the status (history.ts)", () => {
  const children = (d: KubeObject) => ({ Deployment: d, Service: service(), PodDisruptionBudget: budget() });
  const rev = (st: WebAppStatus) => st.rollouts?.map((r) => [r.revision, r.image, r.readyAt !== undefined, r.reason]);

  test("a new WebApp records revision 1 when its Deployment is written, and marks it with the status that turns Ready", () => {
    const first = computeStatus(testApp(), {}, [], T0, { pending: ["Deployment", "Service"] });
    expect(rev(first)).toEqual([[1, "nginx:1.25", false, undefined]]);
    expect(first.rollouts?.[0]?.digest).toBe(podTemplateDigest(testApp()));
    const ready = computeStatus(withStatus(testApp(), first), children(deployment()), [], T1);
    expect(rev(ready)).toEqual([[1, "nginx:1.25", true, undefined]]);
    expect(ready.lastReadyRevision).toBe(1);
    expect(
      statusEqual(ready, computeStatus(withStatus(testApp(), ready), children(deployment()), [], T1 + 60_000)),
    ).toBe(true);
  });

  test("nothing is recorded before anything is written, nor for an invalid spec", () => {
    expect(computeStatus(testApp(), {}, [{ reason: "Forbidden", message: "m" }], T0).rollouts).toBeUndefined();
    const bad: WebAppObject = { metadata: { name: "test-app", namespace: "default" }, spec: { image: "", port: 80 } };
    expect(computeStatus(bad, children(deployment()), [], T0).rollouts).toBeUndefined();
  });

  test("a Ready WebApp taken over from an earlier devctl gets revision 1, Ready, with its next write", () => {
    const before = computeStatus(testApp(), children(deployment()), [], T0);
    const { rollouts: _r, lastReadyRevision: _l, ...older } = before;
    const taken = computeStatus(withStatus(testApp(), older), children(deployment()), [], T1);
    expect(statusEqual(older, taken)).toBe(false);
    expect(rev(taken)).toEqual([[1, "nginx:1.25", true, undefined]]);
  });

  test("a new image stalled on a pod failure is a failed revision 2; the last Ready stays 1", () => {
    const v1 = computeStatus(testApp(), children(deployment()), [], T0);
    const next = withStatus(testApp({ image: "nginx:broken" }), v1);
    const rolling = deployment({ generation: 2, image: "nginx:broken", replicas: 4, updated: 1, ready: 3 });
    const crash = { reason: "CrashLoopBackOff" as const, message: "pod p: back-off 10s restarting failed container" };
    const failed = computeStatus(next, children(rolling), [crash], T1);
    expect(rev(failed)).toEqual([
      [1, "nginx:1.25", true, undefined],
      [2, "nginx:broken", false, "CrashLoopBackOff"],
    ]);
    expect(failed.lastReadyRevision).toBe(1);
  });
});
