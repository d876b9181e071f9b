/**
 * A cluster that does not serve an optional kind of child (issue #31: "children the cluster cannot serve are reported
 * in the status, never crash the operator"), provoked for real: the local kube-apiserver restarted with
 * --runtime-config=autoscaling/v2=false,policy/v1=false, then restarted as it was. Against it the operator starts,
 * becomes ready (no informer waits for an API that is not there), warns once, and:
 * - a WebApp with spec.autoscaling and 3 replicas' worth of a PodDisruptionBudget gets its Deployment and Service,
 *   and is Stalled with KindNotServed naming both kinds, the fields that ask for them and what to do;
 * - a seed-shaped WebApp (1 replica, no optional field) is Ready as ever.
 * Skipped against another cluster (DEVCTL_TEST_KUBECONFIG), which is never restarted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { expectHealthy, logEntries } from "../_faults.ts";
import { type OperatorProcess, startOperator } from "../_operator.ts";
import { describeWhen, LOCAL_CONTROL_PLANE } from "../_skip.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  ensureCrd,
  eventually,
  getOrUndefined,
  kube,
  SERVICES,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "../_support.ts";
import { restartApiServer } from "../cluster/control.ts";

const DISABLED = "--runtime-config=autoscaling/v2=false,policy/v1=false";
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess | undefined;

describeWhen(LOCAL_CONTROL_PLANE)("a cluster that serves neither autoscaling/v2 nor policy/v1", () => {
  beforeAll(async () => {
    await ensureCrd();
    ns = await tempNamespace("unserved");
    await restartApiServer([DISABLED]);
    // The API server serves custom resources a moment after it reports healthy.
    await eventually(() => kube.list(WEBAPPS, { namespace: ns.name, limit: 1 }), 30_000, "the WebApp API served");
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
  }, 90_000);

  afterAll(async () => {
    const code = await op?.stop();
    await restartApiServer();
    await eventually(() => kube.list(WEBAPPS, { namespace: ns.name, limit: 1 }), 30_000, "the WebApp API served");
    await ns?.drop();
    expect(code).toBe(0);
  }, 90_000);

  test("a WebApp that wants both is Stalled KindNotServed, its Deployment and Service made; a seed-shaped one is Ready", async () => {
    const spec = {
      image: "nginx:1.25",
      port: 80,
      resources: { requests: { cpu: "10m" } },
      autoscaling: { minReplicas: 2, maxReplicas: 4 },
    };
    await kube.create(WEBAPPS, webapp("wants", ns.name, spec));
    await kube.create(WEBAPPS, webapp("plain", ns.name, { image: "nginx:1.25", port: 80 }));
    const stalled = await eventually(
      async () => {
        const w = await getOrUndefined<WebAppLike>(WEBAPPS, "wants", ns.name);
        return conditionOf(w, "Stalled")?.reason === "KindNotServed" ? w : undefined;
      },
      60_000,
      "wants Stalled with KindNotServed",
    );
    const message = conditionOf(stalled, "Stalled")?.message ?? "";
    expect(message).toContain(
      "HorizontalPodAutoscaler wants-hpa cannot be created: this cluster does not serve autoscaling/v2 " +
        "horizontalpodautoscalers (Kubernetes serves them from 1.23), which spec.autoscaling asks for",
    );
    expect(message).toContain("PodDisruptionBudget wants-pdb cannot be created: this cluster does not serve policy/v1");
    expect(conditionOf(stalled, "Ready")?.status).toBe("False");
    expect(await getOrUndefined(DEPLOYMENTS, "wants-deployment", ns.name)).toBeDefined();
    expect(await getOrUndefined(SERVICES, "wants-svc", ns.name)).toBeDefined();
    await eventually(
      async () => {
        const w = await getOrUndefined<WebAppLike>(WEBAPPS, "plain", ns.name);
        return conditionOf(w, "Ready")?.status === "True" ? true : undefined;
      },
      60_000,
      "plain Ready",
    );
    const warned = logEntries(op as OperatorProcess).some(
      (e) => e.level === "warn" && e.msg.includes("does not serve PodDisruptionBudget, HorizontalPodAutoscaler"),
    );
    expect(warned).toBe(true);
    expectHealthy(op as OperatorProcess, []);
  });
});
