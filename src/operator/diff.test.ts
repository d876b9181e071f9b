import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { desiredDeployment, desiredService } from "./desired.ts";
import { TEMPLATE_FIELDS_ANNOTATION } from "./desired-template.ts";
import { testApp } from "./_test-fixtures.ts";
import { controllerOf, isControlledBy, needsApply, reshapes } from "./diff.ts";

/** What the API server returns after applying the intent: defaults filled in, extra metadata. */
function liveDeployment(over: (d: Record<string, any>) => void = () => {}): KubeObject {
  const d = structuredClone(desiredDeployment(testApp())) as Record<string, any>;
  d.metadata = {
    ...d.metadata,
    uid: "dep-uid",
    resourceVersion: "42",
    generation: 1,
    labels: { ...d.metadata.labels, team: "web" },
    annotations: { "deployment.kubernetes.io/revision": "1" },
  };
  d.spec.progressDeadlineSeconds = 600;
  d.spec.revisionHistoryLimit = 10;
  d.spec.strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "25%" } };
  d.spec.template.metadata.creationTimestamp = null;
  Object.assign(d.spec.template.spec, {
    restartPolicy: "Always",
    dnsPolicy: "ClusterFirst",
    schedulerName: "default-scheduler",
    securityContext: {},
    terminationGracePeriodSeconds: 30,
  });
  Object.assign(d.spec.template.spec.containers[0], {
    imagePullPolicy: "IfNotPresent",
    resources: {},
    terminationMessagePath: "/dev/termination-log",
    terminationMessagePolicy: "File",
  });
  d.status = { observedGeneration: 1, replicas: 3 };
  over(d);
  return d as KubeObject;
}

function liveService(over: (s: Record<string, any>) => void = () => {}): KubeObject {
  const s = structuredClone(desiredService(testApp())) as Record<string, any>;
  s.metadata.uid = "svc-uid";
  Object.assign(s.spec, {
    clusterIP: "10.96.0.12",
    clusterIPs: ["10.96.0.12"],
    type: "ClusterIP",
    sessionAffinity: "None",
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    internalTrafficPolicy: "Cluster",
  });
  over(s);
  return s as KubeObject;
}

describe("needsApply", () => {
  test("server defaults and labels others added cause no diff", () => {
    const unchanged = { diffs: [], extra: 0 };
    expect(needsApply(desiredDeployment(testApp()), liveDeployment())).toEqual(unchanged);
    expect(needsApply(desiredService(testApp()), liveService())).toEqual(unchanged);
  });

  test("a live Deployment scaled down by hand is reported as a spec.replicas diff", () => {
    const live = liveDeployment((d) => (d.spec.replicas = 0));
    const diffs = [{ path: "spec.replicas", want: 3, have: 0 }];
    const scaled = { diffs, extra: 0 };
    expect(needsApply(desiredDeployment(testApp()), live)).toEqual(scaled);
  });

  test("an autoscaled Deployment: the replica count the autoscaler set is no difference", () => {
    const autoscaled = testApp({
      replicas: undefined,
      autoscaling: { maxReplicas: 9 },
      resources: { requests: { cpu: "1" } },
    });
    const intent = desiredDeployment(autoscaled);
    const live = structuredClone(intent) as Record<string, any>;
    live.spec.replicas = 7;
    expect(needsApply(intent, live as KubeObject)).toEqual({ diffs: [], extra: 0 });
  });

  test("an atomic list (items without a key, an HPA's metrics) of another length is a difference, whole", () => {
    const cpu = {
      type: "Resource",
      resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
    };
    const memory = { ...cpu, resource: { ...cpu.resource, name: "memory" } };
    const hpa = (metrics: unknown[]): KubeObject => ({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "a-hpa" },
      spec: { minReplicas: 1, metrics },
    });
    expect(needsApply(hpa([cpu]), hpa([cpu])).diffs).toEqual([]);
    expect(needsApply(hpa([cpu]), hpa([cpu, memory])).diffs).toEqual([
      { path: "spec.metrics", want: [cpu], have: [cpu, memory] },
    ]);
    expect(needsApply(hpa([cpu, memory]), hpa([cpu])).diffs.map((d) => d.path)).toEqual(["spec.metrics"]);
  });

  test("a value changed in place is not a reshape; a port or container live does not have is one", () => {
    const live = liveDeployment();
    expect(reshapes(needsApply(desiredDeployment(testApp({ image: "nginx:1.26" })), live).diffs)).toBe(false);
    expect(reshapes(needsApply(desiredService(testApp({ port: 8080 })), liveService()).diffs)).toBe(false);
    expect(reshapes(needsApply(desiredDeployment(testApp({ port: 8080 })), live).diffs)).toBe(true);
    const renamed = liveDeployment((d) => (d.spec.template.spec.containers[0].name = "web"));
    expect(reshapes(needsApply(desiredDeployment(testApp()), renamed).diffs)).toBe(true);
  });

  test("a port or container live has beside the intent's is no difference, but is counted as extra", () => {
    const port = (p: number) => ({ containerPort: p, protocol: "TCP" });
    const twoPorts = liveDeployment((d) => (d.spec.template.spec.containers[0].ports = [port(8080), port(80)]));
    expect(needsApply(desiredDeployment(testApp()), twoPorts)).toEqual({
      diffs: [],
      extra: 1,
    });
    const sidecar = liveDeployment((d) => d.spec.template.spec.containers.push({ name: "proxy", image: "envoy:1" }));
    expect(needsApply(desiredDeployment(testApp()), sidecar).extra).toBe(1);
    const secondPort = liveService((s) => s.spec.ports.push({ name: "metrics", port: 9090, protocol: "TCP" }));
    expect(needsApply(desiredService(testApp()), secondPort).extra).toBe(1);
  });

  test("a new image and a new port are reported at their leaves, containers and ports named", () => {
    const want = desiredDeployment(testApp({ image: "nginx:1.26", port: 8080 }));
    expect(needsApply(want, liveDeployment()).diffs.map((d) => d.path)).toEqual([
      "spec.template.spec.containers[app].image",
      "spec.template.spec.containers[app].ports[8080]",
    ]);
    expect(needsApply(desiredService(testApp({ port: 8080 })), liveService()).diffs.map((d) => d.path)).toEqual([
      "spec.ports[http].targetPort",
    ]);
  });

  test("a removed or changed label we own is a diff, including in the selector and pod template", () => {
    const live = liveDeployment((d) => {
      delete d.metadata.labels["managed-by"];
      d.spec.template.metadata.labels.app = "other";
    });
    expect(needsApply(desiredDeployment(testApp()), live).diffs.map((d) => d.path)).toEqual([
      "metadata.labels.managed-by",
      "spec.template.metadata.labels.app",
    ]);
  });

  test("a missing container, a targetPort given as a string, and a lost owner reference are diffs", () => {
    expect(
      needsApply(
        desiredDeployment(testApp()),
        liveDeployment((d) => (d.spec.template.spec.containers[0].name = "web")),
      ).diffs.map((d) => d.path),
    ).toEqual(["spec.template.spec.containers[app]"]);
    expect(
      needsApply(
        desiredService(testApp()),
        liveService((s) => (s.spec.ports[0].targetPort = "80")),
      ).diffs.map((d) => d.path),
    ).toEqual(["spec.ports[http].targetPort"]);
    expect(
      needsApply(
        desiredService(testApp()),
        liveService((s) => (s.metadata.ownerReferences = [])),
      ).diffs.map((d) => d.path),
    ).toEqual(["metadata.ownerReferences[test-app]"]);
  });

  test("an extra sidecar container or owner reference added by someone else is not a diff", () => {
    const live = liveDeployment((d) => {
      d.spec.template.spec.containers.push({ name: "sidecar", image: "envoy" });
      d.metadata.ownerReferences.push({ apiVersion: "v1", kind: "ConfigMap", name: "x", uid: "other" });
    });
    expect(needsApply(desiredDeployment(testApp()), live).diffs).toEqual([]);
  });

  test("an owner reference to an earlier WebApp of the same name (another uid) is a diff", () => {
    const live = liveService((s) => (s.metadata.ownerReferences[0].uid = "old-uid"));
    expect(needsApply(desiredService(testApp()), live).diffs.map((d) => d.path)).toEqual([
      "metadata.ownerReferences[test-app]",
    ]);
  });
});

describe("controllerOf and isControlledBy", () => {
  test("an object is controlled by the WebApp whose uid its controller reference names", () => {
    const live = liveService();
    expect(controllerOf(live)?.uid).toBe("uid-1");
    expect(isControlledBy(live, testApp())).toBe(true);
    expect(isControlledBy(live, testApp({}, "uid-2"))).toBe(false);
  });

  test("a non-controller owner reference or none at all controls nothing", () => {
    const notController = liveService((s) => (s.metadata.ownerReferences[0].controller = false));
    expect(controllerOf(notController)).toBeUndefined();
    expect(isControlledBy(notController, testApp())).toBe(false);
    expect(isControlledBy({ metadata: { name: "x" } }, testApp())).toBe(false);
    expect(isControlledBy(liveService(), testApp({}, null))).toBe(false);
  });
});

describe("fields the intent stops setting (issue #31's optional pod-template fields)", () => {
  const withEnv = testApp({
    env: [
      { name: "A", value: "1" },
      { name: "B", value: "2" },
    ],
  });
  /** What the API server holds after our intent for withEnv was written. */
  const liveWithEnv = () =>
    liveDeployment((d) => {
      const intent = desiredDeployment(withEnv) as Record<string, any>;
      d.metadata.annotations = { ...d.metadata.annotations, ...intent.metadata.annotations };
      d.spec.template.spec.containers[0].env = intent.spec.template.spec.containers[0].env;
    });

  test("a live Deployment carrying what our intent set reads as no drift", () => {
    expect(needsApply(desiredDeployment(withEnv), liveWithEnv())).toEqual({ diffs: [], extra: 0 });
  });

  test("dropping every optional field is a difference on our annotation (want null), and a reshape", () => {
    const check = needsApply(desiredDeployment(testApp()), liveWithEnv());
    expect(check.diffs).toEqual([
      {
        path: "metadata.annotations[apps.example.com/template-fields]",
        want: null,
        have: desiredDeployment(withEnv).metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION],
      },
    ]);
    expect(reshapes(check.diffs)).toBe(true);
  });

  test("dropping one variable changes our annotation, a reshape (an item the rules above keep as extra)", () => {
    const one = testApp({ env: [{ name: "A", value: "1" }] });
    const check = needsApply(desiredDeployment(one), liveWithEnv());
    expect(check.diffs.map((d) => d.path)).toEqual(["metadata.annotations[apps.example.com/template-fields]"]);
    expect(check.extra).toBe(1);
    expect(reshapes(check.diffs)).toBe(true);
  });

  test("other annotations, even under our API group, on a Deployment of a WebApp without the fields, are none", () => {
    const live = liveDeployment((d) => {
      d.metadata.annotations["example.com/template-fields"] = "x";
      d.metadata.annotations["apps.example.com/note"] = "set by hand";
      d.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"] = "{}";
    });
    expect(needsApply(desiredDeployment(testApp()), live).diffs).toEqual([]);
  });

  test("a value changed in place is still no reshape, with or without the optional fields", () => {
    const live = liveWithEnv();
    const image = needsApply(desiredDeployment({ ...withEnv, spec: { ...withEnv.spec, image: "nginx:1.26" } }), live);
    expect(image.diffs.map((d) => d.path)).toEqual(["spec.template.spec.containers[app].image"]);
    expect(reshapes(image.diffs)).toBe(false);
  });
});
