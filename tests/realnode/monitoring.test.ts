/**
 * The monitoring of `devctl operator manifests --monitoring`, proven against a real Prometheus (issue #33 item 4):
 * the operator image installed on the real node with `operator install` (two replicas, secure metrics on :8443),
 * Prometheus (tests/monitoring/_prometheus.ts) discovering its pods through the API server and scraping each one
 * directly over HTTPS with the token of a ServiceAccount bound to the devctl-metrics-reader ClusterRole, evaluating the
 * alerts install/monitoring.ts renders (WebAppStalled with a 10 s `for:`, the others as shipped).
 * - A WebApp whose image is not on the node (pull policy Never) is Stalled; WebAppStalled fires for it in
 *   Prometheus's own /api/v1/alerts, naming it, with its runbook; a WebApp rolled back by the operator fires
 *   WebAppRollbackHappened, and a Ready one fires nothing.
 * - Every query of every dashboard panel (install/dashboard.ts) parses and returns data over this run; with
 *   DEVCTL_DASHBOARD_SVG=<file> the run also draws them, as README's docs/dashboard.svg was drawn.
 * Pods reach the real node as in pod-failures.test.ts (a MutatingAdmissionPolicy bound to the workloads' namespace).
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PANELS } from "../../src/install/dashboard.ts";
import { METRICS_PORT_NAME } from "../../src/install/deployment.ts";
import { METRICS_JOB, ruleGroups } from "../../src/install/monitoring.ts";
import { PAUSE_IMAGE } from "../cluster/nodes/real-config.ts";
import { bindMetricsReader, createServiceAccount, tokenFor } from "../_identities.ts";
import {
  conditionOf,
  devctl,
  ensureCrd,
  eventually,
  getOrUndefined,
  kube,
  kubeconfig,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "../_support.ts";
import { dashboardSvg, legendOf, type PanelData } from "../monitoring/_dashboard-svg.ts";
import { type PromAlert, type RunningPrometheus, startPrometheus } from "../monitoring/_prometheus.ts";
import { buildImage, installOnRealNode, realNodeSuite } from "./_node.ts";
import { routePodsToRealNode } from "./_workloads.ts";

const RUN = Math.random().toString(36).slice(2, 8);
const OPERATOR_NS = `monitoring-${RUN}`;
const MISSING_IMAGE = `devctl.local/not-on-this-node:${RUN}`;
const BASE = { replicas: 1, port: 8080, imagePullPolicy: "Never" };
const WITHIN_MS = 120_000;

const { node, why: absentReason, realTest } = await realNodeSuite();
const scratch = mkdtempSync(join(tmpdir(), "devctl-monitoring-"));
let apps: Awaited<ReturnType<typeof tempNamespace>> | undefined;
let unroute: (() => Promise<void>) | undefined;
let prometheus: RunningPrometheus | undefined;
let unbind: (() => Promise<void>) | undefined;
const startedAt = Date.now() / 1000;

beforeAll(async () => {
  if (!node) return;
  const image = buildImage();
  const installed = installOnRealNode(image, OPERATOR_NS);
  if (installed.code !== 0) throw new Error(`operator install: ${installed.stdout}\n${installed.stderr}`);
  await ensureCrd();
  apps = await tempNamespace("monitoring-apps");
  unroute = await routePodsToRealNode(apps.name);
  await createServiceAccount("prometheus", OPERATOR_NS);
  unbind = await bindMetricsReader(`${OPERATOR_NS}-prometheus`, "prometheus", OPERATOR_NS);
  prometheus = await startPrometheus({
    dir: scratch,
    job: METRICS_JOB,
    namespace: OPERATOR_NS,
    portName: METRICS_PORT_NAME,
    token: tokenFor("prometheus", OPERATOR_NS),
    rules: ruleGroups({ stalledFor: "10s", notReadyFor: "15m" }),
    kubeconfig,
  });
}, 300_000);

afterAll(async () => {
  await prometheus?.stop();
  await apps?.drop();
  await unroute?.();
  if (node) {
    devctl(["operator", "uninstall", "-n", OPERATOR_NS]);
    await unbind?.();
  }
  rmSync(scratch, { recursive: true, force: true });
});

function requireSetup(): { ns: string; prom: RunningPrometheus } {
  if (!apps || !prometheus)
    throw new Error(`the monitoring suite needs the local cluster's real node: ${absentReason}`);
  return { ns: apps.name, prom: prometheus };
}
const until = (name: string, what: string, ok: (w: WebAppLike) => boolean) =>
  eventually(
    async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, requireSetup().ns);
      return w && ok(w) ? w : undefined;
    },
    WITHIN_MS,
    `${name}: ${what}`,
  );
const readyApp = (name: string) => until(name, "Ready", (w) => conditionOf(w, "Ready")?.status === "True");
const firing = (alerts: PromAlert[], alertname: string, name: string) =>
  alerts.find((a) => a.state === "firing" && a.labels.alertname === alertname && a.labels.name === name);

describe("the operator's alerts and dashboard in a real Prometheus", () => {
  realTest("Prometheus scrapes both replicas through the secure endpoint with a metrics reader's token", async () => {
    const { prom } = requireSetup();
    const up = await eventually(
      async () => {
        const r = await prom.query(`up{job="${METRICS_JOB}"} == 1`);
        return r.length === 2 ? r : undefined;
      },
      60_000,
      "both operator replicas scraped (up == 1)",
    );
    expect(up.map((s) => s.metric.namespace)).toEqual([OPERATOR_NS, OPERATOR_NS]);
    // Only the leader exposes the WebApps' series.
    const leaders = await prom.query(`leader_election_master_status{job="${METRICS_JOB}"} == 1`);
    expect(leaders.length).toBe(1);
  });

  realTest(
    "a Stalled WebApp fires WebAppStalled, a rolled-back one WebAppRollbackHappened, a Ready one nothing",
    async () => {
      const { ns, prom } = requireSetup();
      await kube.create(WEBAPPS, webapp("ready", ns, { ...BASE, image: PAUSE_IMAGE }));
      await readyApp("ready");
      const rollout = { autoRollback: true, failureThreshold: "5s" };
      await kube.create(WEBAPPS, webapp("flaky", ns, { ...BASE, image: PAUSE_IMAGE, rollout }));
      await readyApp("flaky");
      await kube.patch(WEBAPPS, "flaky", ns, { spec: { image: MISSING_IMAGE } }, "merge");
      await kube.create(WEBAPPS, webapp("stalled", ns, { ...BASE, image: MISSING_IMAGE }));
      await until("stalled", "Stalled", (w) => conditionOf(w, "Stalled")?.status === "True");
      await until("flaky", "rolled back", (w) => conditionOf(w, "Stalled")?.reason === "RolledBack");
      const alerts = await eventually(
        async () => {
          const a = await prom.alerts();
          return firing(a, "WebAppStalled", "stalled") && firing(a, "WebAppRollbackHappened", "flaky") ? a : undefined;
        },
        90_000,
        "WebAppStalled firing for stalled and WebAppRollbackHappened for flaky in Prometheus",
      );
      expect(firing(alerts, "WebAppStalled", "stalled")).toMatchObject({
        labels: { namespace: ns, severity: "warning", reason: "ErrImageNeverPull" },
        annotations: {
          summary: `WebApp ${ns}/stalled is stalled: ErrImageNeverPull`,
          runbook_url: "https://github.com/devctl/devctl/blob/main/docs/runbooks/WebAppStalled.md",
        },
      });
      expect(alerts.filter((a) => a.labels.name === "ready")).toEqual([]);
      expect(alerts.filter((a) => a.labels.alertname === "WebAppStalled" && a.labels.name === "flaky")).toEqual([]);
    },
    300_000,
  );

  realTest("every dashboard panel's query parses and returns data", async () => {
    const { prom } = requireSetup();
    const empty: string[] = [];
    for (const panel of PANELS) {
      for (const t of panel.targets)
        if ((await prom.query(t.expr)).length === 0) empty.push(`${panel.title}: ${t.expr}`);
    }
    expect(empty).toEqual([]);
    const end = Date.now() / 1000;
    const data: PanelData[] = [];
    for (const panel of PANELS) {
      const series = [];
      for (const t of panel.targets) {
        for (const s of await prom.queryRange(t.expr, startedAt, end, 2)) {
          const points = (s.values ?? [])
            .map(([at, v]) => [at - startedAt, Number(v)] as [number, number])
            .filter(([, v]) => Number.isFinite(v));
          series.push({ name: legendOf(t.legend, s.metric), points });
        }
      }
      data.push({ panel, series });
    }
    const svg = dashboardSvg("devctl: WebApps and operator (this test's run)", data);
    expect(svg).toContain("<polyline");
    if (process.env.DEVCTL_DASHBOARD_SVG) writeFileSync(process.env.DEVCTL_DASHBOARD_SVG, svg);
  });
});
