/**
 * What GitOps tools read from a WebApp: kstatus itself (sigs.k8s.io/cli-utils v0.37.2 status.Compute, built
 * from its Go module by tests/kstatus/kstatus.ts) over every state the suites create, and `kubectl wait
 * --for=condition=Ready`.
 * - Offline: the status computeStatus() gives for each state, on a WebApp object, through kstatus; and
 *   readiness/kstatus.ts kstatusOf() (what `operator status` counts by) agrees with kstatus on each.
 * - In the cluster, against the compiled operator: rolled out (Current, kubectl wait returns), scaling up
 *   (InProgress on every sample until Current), blocked by someone else's Deployment (Failed, kubectl wait
 *   times out), deleting (Terminating). Invalid spec is checked by invalid-spec.test.ts the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { UNOBSERVED_STATUS, type WebAppObject } from "../src/api/webapp.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { desiredDeployment, desiredPodDisruptionBudget, desiredService } from "../src/operator/desired.ts";
import { computeStatus, resourceExistsProblem } from "../src/operator/status.ts";
import { kstatusOf } from "../src/readiness/kstatus.ts";
import { kstatus, type KstatusStatus } from "./kstatus/kstatus.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  WEBAPPS,
  ensureCrd,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

const T0 = Date.UTC(2024, 4, 1, 12, 0, 0);

describe("kstatus over the status the operator computes", () => {
  const app = (spec: Record<string, unknown> = {}, generation = 1): WebAppObject & { kind: string } => ({
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name: "web", namespace: "default", uid: "uid-1", generation },
    spec: { image: "nginx:1.25", replicas: 3, port: 8080, ...spec },
  });
  const valid = (replicas = 3) => app({ replicas }) as Parameters<typeof desiredDeployment>[0];
  const deployment = (replicas: number, available: number, conditions: unknown[] = []): KubeObject => ({
    ...desiredDeployment(valid(replicas)),
    metadata: { ...desiredDeployment(valid(replicas)).metadata, generation: 1 },
    status: {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: available,
      availableReplicas: available,
      conditions: [{ type: "Available", status: available > 0 ? "True" : "False" }, ...conditions],
    },
  });
  const service = desiredService(valid());
  const budget = desiredPodDisruptionBudget(valid());
  const foreign: KubeObject = { metadata: { name: "web-deployment", namespace: "default" } };
  const deadline = { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: "timed out" };
  const withStatus = (obj: WebAppObject, s: ReturnType<typeof computeStatus>, meta = {}) => ({
    ...obj,
    metadata: { ...obj.metadata, ...meta },
    status: s,
  });
  const rolledOut = computeStatus(
    app(),
    { Deployment: deployment(3, 3), Service: service, PodDisruptionBudget: budget },
    [],
    T0,
  );
  const UNOBSERVED = { ...UNOBSERVED_STATUS } as ReturnType<typeof computeStatus>;

  const states: [string, object, KstatusStatus][] = [
    ["converging (no Deployment yet)", withStatus(app(), computeStatus(app(), {}, [], T0)), "InProgress"],
    ["rolled out", withStatus(app(), rolledOut), "Current"],
    [
      "scaled up with pods pending (5 of 8 available)",
      withStatus(
        app({ replicas: 8 }),
        computeStatus(app({ replicas: 8 }), { Deployment: deployment(8, 5), Service: service }, [], T0),
      ),
      "InProgress",
    ],
    [
      "blocked by a foreign object",
      withStatus(app(), computeStatus(app(), { Service: service }, [resourceExistsProblem("Deployment", foreign)], T0)),
      "Failed",
    ],
    [
      "invalid spec",
      withStatus(
        app({ replicas: 0 }),
        computeStatus(app({ replicas: 0 }), { Deployment: deployment(3, 3), Service: service }, [], T0),
      ),
      "Failed",
    ],
    [
      "forbidden",
      withStatus(app(), computeStatus(app(), {}, [{ reason: "Forbidden", message: "forbidden: ..." }], T0)),
      "Failed",
    ],
    [
      "past its progress deadline",
      withStatus(app(), computeStatus(app(), { Deployment: deployment(3, 2, [deadline]), Service: service }, [], T0)),
      "Failed",
    ],
    ["a spec change not yet observed", withStatus(app({}, 2), rolledOut), "InProgress"],
    ["created, not yet seen by the operator (the CRD's status default)", withStatus(app(), UNOBSERVED), "InProgress"],
    ["deleting", withStatus(app(), rolledOut, { deletionTimestamp: "2024-05-01T12:01:00Z" }), "Terminating"],
  ];

  test("each state reads as a GitOps tool must see it, and kstatusOf() agrees with kstatus", async () => {
    const results = await kstatus(states.map(([, obj]) => obj));
    const got = states.map(([state], i) => [state, results[i]?.status]);
    expect(got).toEqual(states.map(([state, , want]) => [state, want]));
    const ours: { status: string; message: string }[] = states.map(([, obj]) => kstatusOf(obj as KubeObject));
    expect(ours).toEqual(results.map((r) => ({ status: r.status, message: r.message })));
  });

  test("without the CRD's status default a WebApp nobody has looked at would read Current", async () => {
    expect((await kstatus([app()]))[0]?.status).toBe("Current");
  });

  test("the conditions alone of before (Available/Progressing/Degraded) read Current even when blocked, as the issue measured", async () => {
    const blocked = withStatus(app(), {
      observedGeneration: 1,
      conditions: [
        { type: "Available", status: "False", reason: "DeploymentNotFound", message: "", lastTransitionTime: "" },
        { type: "Degraded", status: "True", reason: "ResourceExists", message: "", lastTransitionTime: "" },
      ],
    });
    expect((await kstatus([blocked]))[0]?.status).toBe("Current");
  });
});

describe("kstatus and kubectl wait against the operator", () => {
  let ns: Awaited<ReturnType<typeof tempNamespace>>;
  let op: OperatorProcess;
  beforeAll(async () => {
    await ensureCrd();
    ns = await tempNamespace("kstatus");
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
  });
  afterAll(async () => {
    const code = await op?.stop();
    await ns?.drop();
    expect(code).toBe(0);
  });
  const live = async (name: string) => (await getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name)) as KubeObject;
  const statusOf = async (name: string) => (await kstatus([await live(name)]))[0]?.status;

  test("a rolled-out WebApp: kubectl wait --for=condition=Ready returns, kstatus says Current", async () => {
    await kube.create(WEBAPPS, webapp("web", ns.name, { image: "nginx:1.25", replicas: 2, port: 8080 }));
    const r = kubectl(["wait", "--for=condition=Ready", "wa/web", "-n", ns.name, "--timeout=60s"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain("condition met");
    expect(await statusOf("web")).toBe("Current");
  });

  test("scaling it up is InProgress on every sample until it is Current with every replica available", async () => {
    await kube.patch(WEBAPPS, "web", ns.name, { spec: { replicas: 8 } }, "merge");
    const samples: { status?: string; available?: number }[] = [];
    await eventually(
      async () => {
        const obj = (await live("web")) as WebAppLike & { status?: { availableReplicas?: number } };
        const status = (await kstatus([obj]))[0]?.status;
        samples.push({ status, available: obj.status?.availableReplicas });
        return status === "Current";
      },
      60_000,
      "web to be Current again",
    );
    const firstCurrent = samples.findIndex((s) => s.status === "Current");
    expect(samples.slice(0, firstCurrent).every((s) => s.status === "InProgress")).toBe(true);
    expect(samples[firstCurrent]?.available).toBe(8);
  });

  test("blocked by someone else's Deployment: Failed with the reason, and kubectl wait times out", async () => {
    const theirs = desiredDeployment({
      ...webapp("taken", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 }),
      metadata: { name: "taken", namespace: ns.name },
      spec: { image: "nginx:1.25", replicas: 1, port: 80 },
    });
    await kube.create(DEPLOYMENTS, { ...theirs, metadata: { name: "taken-deployment", namespace: ns.name } });
    await kube.create(WEBAPPS, webapp("taken", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 }));
    const failed = await eventually(
      async () => {
        const [r] = await kstatus([await live("taken")]);
        return r?.status === "Failed" ? r : undefined;
      },
      30_000,
      "taken to be Failed",
    );
    expect(failed.message).toContain("Deployment taken-deployment exists and is not controlled by this WebApp");
    const r = kubectl(["wait", "--for=condition=Ready", "wa/taken", "-n", ns.name, "--timeout=2s"]);
    expect(r.code).not.toBe(0);
    const get = kubectl(["get", "wa", "taken", "-n", ns.name]);
    expect(get.stdout).toMatch(/NAME\s+IMAGE\s+DESIRED\s+AVAILABLE\s+READY\s+REASON\s+AGE/);
    expect(get.stdout).toMatch(/taken\s+nginx:1\.25\s+1\s+\S+\s+False\s+ResourceExists\s+/);
  });

  test("a WebApp created where no operator watches reads observedGeneration 0 from the API server: InProgress", async () => {
    const unwatched = await tempNamespace("kstatus-unwatched");
    try {
      const made = await kube.create(WEBAPPS, webapp("early", unwatched.name, { image: "nginx:1.25", port: 80 }));
      expect([made.metadata.generation, made.status]).toEqual([1, { observedGeneration: 0 }]); // create's response
      const read = await getOrUndefined<WebAppLike>(WEBAPPS, "early", unwatched.name);
      expect(read?.status).toEqual({ observedGeneration: 0 });
      const listed = await kube.list<WebAppLike>(WEBAPPS, { namespace: unwatched.name });
      expect(listed.items.map((w) => w.status)).toEqual([{ observedGeneration: 0 }]);
      const [r] = await kstatus([read]);
      expect(r).toMatchObject({
        status: "InProgress",
        message: "WebApp generation is 1, but latest observed generation is 0",
      });
      const get = kubectl(["get", "wa", "early", "-n", unwatched.name]);
      // DESIRED empty too: spec.replicas is left out (the operator runs 1; the CRD has no default since spec.autoscaling).
      expect(get.stdout).toMatch(/\nearly\s+nginx:1\.25\s+\d+s\n$/); // AVAILABLE, READY, REASON empty
    } finally {
      await unwatched.drop();
    }
  });

  test("a WebApp being deleted is Terminating", async () => {
    const held = webapp("held", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 });
    held.metadata.finalizers = ["test.devctl/hold"];
    await kube.create(WEBAPPS, held);
    await kube.delete(WEBAPPS, "held", ns.name);
    expect(await statusOf("held")).toBe("Terminating");
    await kube.patch(WEBAPPS, "held", ns.name, { metadata: { finalizers: null } }, "merge");
  });
});
