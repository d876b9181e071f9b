/**
 * Autoscaling on real CPU (issue #31 item 5): metrics-server (tests/cluster/addons) reads the real kubelet's
 * /metrics/resource and serves metrics.k8s.io through the API server's aggregation layer; the controller-manager's
 * HorizontalPodAutoscaler controller reads it and scales a CPU-burning WebApp up from one pod.
 * - metrics: GET /apis/metrics.k8s.io/v1beta1/namespaces/<ns>/pods (what `kubectl top pod` reads) answers the
 *   burning pod with CPU above the HPA's target, `kubectl top pod` prints it and `kubectl top node` the real node;
 * - scale-up: a WebApp with spec.autoscaling {maxReplicas, targetCPUUtilizationPercentage: 50} and
 *   spec.resources.requests.cpu gets the operator's `<name>-hpa` for `<name>-deployment`; the one pod, a busy loop
 *   capped at BURN_LIMIT against a request of CPU_REQUEST, is far above target, so the autoscaler scales the
 *   Deployment beyond one pod, the new pods run on the real node, the operator leaves the count to it and reports
 *   it in status.autoscaling.
 * The operator is the compiled devctl run beside the tests; pods reach the real node as in production.test.ts (a
 * MutatingAdmissionPolicy bound to the suite's namespace alone). Nothing is pulled: the burner is Debian's static
 * busybox in an image FROM scratch built here (_workloads.ts). Traffic stays inside the cluster's namespace.
 *
 * Needs the real node; without it every test is skipped with the reason, which the runner turns into a failure on CI.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HORIZONTAL_POD_AUTOSCALERS } from "../../src/kube/resources.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { METRICS_API } from "../cluster/addons/metrics-server-config.ts";
import { importIntoRealNode } from "../cluster/nodes/real.ts";
import { ensurePrerequisites } from "../cluster/prereqs.ts";
import { type OperatorProcess, startOperator } from "../_operator.ts";
import {
  DEPLOYMENTS,
  ensureCrd,
  eventsFor,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  PODS,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "../_support.ts";
import { ctr, type PodLike, realNodeSuite } from "./_node.ts";
import { BUSYBOX, busyboxImage, routePodsToRealNode } from "./_workloads.ts";

const RUN = Math.random().toString(36).slice(2, 8);
const IMAGE = `devctl.local/busybox-burner:${RUN}`;
const APP = "burner";
const HPA = `${APP}-hpa`;
const DEPLOYMENT = `${APP}-deployment`;
const CPU_REQUEST = "20m";
/** One busy pod uses this much (the CFS quota), i.e. 500% of its request: ten times the target. */
const BURN_LIMIT = "100m";
const TARGET_PERCENT = 50;
const MAX_REPLICAS = 3;
/** The shell traps TERM (as PID 1 it would ignore it), so a deleted pod goes at once, not after 30 s of burning. */
const BURN = "trap 'exit 0' TERM; while :; do :; done";
/**
 * From creation to scale-up: pod Ready (~5 s), two metrics-server scrapes 10 s apart once the kubelet has the
 * container's stats (its housekeeping runs every 10 s), then the HPA's next 15 s sync; 2-core slack on top.
 */
const WITHIN_MS = 150_000;

const { node, why: absentReason, realTest } = await realNodeSuite();

let ns: Awaited<ReturnType<typeof tempNamespace>> | undefined;
let unroute: (() => Promise<void>) | undefined;
let op: OperatorProcess | undefined;
let scratch: string | undefined;
let createdAt = 0;
const timings: Record<string, number> = {};

beforeAll(async () => {
  if (!node) return;
  if (!existsSync(BUSYBOX)) await ensurePrerequisites(["realNode"], (line) => console.error(line));
  scratch = mkdtempSync(join(tmpdir(), "devctl-burner-"));
  const archive = busyboxImage(IMAGE, scratch);
  const imported = await importIntoRealNode(archive);
  if (!imported?.includes(IMAGE)) throw new Error(`importing ${archive} into the real node: ${imported}`);
  await ensureCrd();
  ns = await tempNamespace("realnode-hpa");
  unroute = await routePodsToRealNode(ns.name);
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
  createdAt = Date.now();
  await kube.create(
    WEBAPPS,
    webapp(APP, ns.name, {
      image: IMAGE,
      imagePullPolicy: "Never",
      port: 8080,
      command: ["/bin/sh", "-c", BURN],
      resources: { requests: { cpu: CPU_REQUEST }, limits: { cpu: BURN_LIMIT } },
      autoscaling: { maxReplicas: MAX_REPLICAS, targetCPUUtilizationPercentage: TARGET_PERCENT },
    }),
  );
}, 180_000);

afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  await unroute?.();
  if (node) ctr(node, "images", "rm", IMAGE);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  console.error(`real-node autoscaling, ms from the WebApp's creation: ${JSON.stringify(timings)}`);
  if (op) expect(code).toBe(0);
});

function namespace(): string {
  if (!ns) throw new Error(`the autoscaling suite needs the local cluster's real node: ${absentReason}`);
  return ns.name;
}

/** A Kubernetes CPU quantity in millicores ("123456789n", "250u", "20m", "1"). */
function millicores(q: string): number {
  const m = /^(\d+(?:\.\d+)?)([num]?)$/.exec(q);
  if (!m) throw new Error(`not a CPU quantity: ${q}`);
  const scale = { n: 1e-6, u: 1e-3, m: 1, "": 1000 }[m[2] as "n" | "u" | "m" | ""];
  return Number(m[1]) * scale;
}

interface PodMetrics {
  metadata: { name: string };
  timestamp: string;
  window: string;
  containers: { name: string; usage: { cpu: string; memory: string } }[];
}

interface Hpa extends KubeObject {
  spec?: { scaleTargetRef?: { kind?: string; name?: string } };
  status?: {
    currentReplicas?: number;
    desiredReplicas?: number;
    currentMetrics?: { resource?: { current?: { averageUtilization?: number } } }[];
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

async function burnerPods(): Promise<PodLike[]> {
  return (await kube.list<PodLike>(PODS, { namespace: namespace(), labelSelector: `app=${APP}` })).items;
}

/** Waits, WITHIN_MS from the WebApp's creation, for `pick`; the failure shows the HPA, the pods and their events. */
async function within<T>(what: string, pick: () => Promise<T | undefined>): Promise<T> {
  return eventually(pick, Math.max(1_000, createdAt + WITHIN_MS - Date.now()), what).catch(async (e: Error) => {
    const hpa = await getOrUndefined<Hpa>(HORIZONTAL_POD_AUTOSCALERS, HPA, namespace());
    const pods = await burnerPods();
    const events = await eventsFor(namespace(), HPA);
    throw new Error(
      `${e.message}\nHPA status: ${JSON.stringify(hpa?.status)}\nHPA events: ${JSON.stringify(events.map((ev) => [ev.reason, ev.message]))}\n` +
        `pods: ${JSON.stringify(pods.map((p) => ({ name: p.metadata.name, node: p.spec.nodeName, phase: p.status?.phase })))}`,
    );
  });
}

describe("a WebApp's spec.autoscaling on the real node's CPU", () => {
  realTest("metrics.k8s.io serves the burning pod's CPU, above the HPA's target, as kubectl top reads it", async () => {
    const path = `/apis/${METRICS_API.group}/${METRICS_API.version}/namespaces/${namespace()}/pods`;
    const metrics = await within(`CPU metrics of a ${APP} pod from ${path}`, async () => {
      const list = await kube.raw<{ items: PodMetrics[] }>("GET", path);
      return list.items.find((p) => p.metadata.name.startsWith(`${DEPLOYMENT}-`) && p.containers.length > 0);
    });
    timings.podMetrics = Date.now() - createdAt;
    const cpu = millicores(metrics.containers[0]?.usage.cpu ?? "");
    // A busy loop capped at BURN_LIMIT (500% of its request) unless a busy machine starves it: above the HPA's
    // target (TARGET_PERCENT of the request) in any case, and at most the cap plus rounding.
    expect(cpu).toBeGreaterThan((millicores(CPU_REQUEST) * TARGET_PERCENT) / 100);
    expect(cpu).toBeLessThan(millicores(BURN_LIMIT) * 1.5);
    const pod = (await burnerPods()).find((p) => p.metadata.name === metrics.metadata.name);
    expect(pod?.spec.nodeName).toBe(node?.name);

    const top = kubectl(["top", "pod", "-n", namespace(), "--no-headers"]);
    expect(top.code).toBe(0);
    expect(top.stdout).toMatch(new RegExp(`^${metrics.metadata.name}\\s+\\d+m\\s+\\d+Mi`, "m"));
    const nodeTop = kubectl(["top", "node", node?.name ?? "", "--no-headers"]);
    expect(nodeTop.code).toBe(0);
  });

  realTest(`the WebApp's HPA sees its one pod far above ${TARGET_PERCENT}% and scales its Deployment up`, async () => {
    const hpa = await within(`the operator's ${HPA}`, () =>
      getOrUndefined<Hpa>(HORIZONTAL_POD_AUTOSCALERS, HPA, namespace()),
    );
    expect(hpa.spec?.scaleTargetRef).toMatchObject({ kind: "Deployment", name: DEPLOYMENT });
    expect(hpa.metadata.ownerReferences?.[0]).toMatchObject({ kind: "WebApp", name: APP, controller: true });
    const seen = await within("the HPA to report CPU utilization above its target", async () => {
      const hpa = await getOrUndefined<Hpa>(HORIZONTAL_POD_AUTOSCALERS, HPA, namespace());
      const pct = hpa?.status?.currentMetrics?.[0]?.resource?.current?.averageUtilization;
      return pct !== undefined && pct > TARGET_PERCENT ? pct : undefined;
    });
    timings.hpaSawCpu = Date.now() - createdAt;
    expect(seen).toBeGreaterThan(TARGET_PERCENT * 2);
    const desired = await within("the HPA to want more than one replica", async () => {
      const hpa = await getOrUndefined<Hpa>(HORIZONTAL_POD_AUTOSCALERS, HPA, namespace());
      const d = hpa?.status?.desiredReplicas ?? 0;
      return d > 1 ? d : undefined;
    });
    timings.hpaScaled = Date.now() - createdAt;
    expect(desired).toBeLessThanOrEqual(MAX_REPLICAS);
    const events = await eventsFor(namespace(), HPA);
    expect(events.some((ev) => ev.reason === "SuccessfulRescale")).toBe(true);
    // The new pods are real: scheduled onto the real node and running there.
    const running = await within("a second burner pod running on the real node", async () => {
      const pods = (await burnerPods()).filter((p) => p.status?.phase === "Running" && p.spec.nodeName === node?.name);
      return pods.length > 1 ? pods : undefined;
    });
    timings.secondPodRunning = Date.now() - createdAt;
    expect(running.length).toBeGreaterThan(1);
    // The operator leaves the count to the autoscaler and reports the autoscaler's counts.
    const deployment = await getOrUndefined<KubeObject & { spec?: { replicas?: number } }>(
      DEPLOYMENTS,
      DEPLOYMENT,
      namespace(),
    );
    expect(deployment?.spec?.replicas).toBeGreaterThan(1);
    const reported = await within("status.autoscaling.desiredReplicas above one", async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, APP, namespace());
      const d = w?.status?.autoscaling?.desiredReplicas ?? 0;
      return d > 1 ? d : undefined;
    });
    expect(reported).toBeLessThanOrEqual(MAX_REPLICAS);
  });
});
