/**
 * The Grafana dashboard of `devctl operator manifests --monitoring`, as a pure builder: a ConfigMap with the label
 * Grafana's dashboard sidecar looks for (`grafana_dashboard: "1"`), holding the dashboard's JSON.
 *
 * Properties:
 * - PANELS is the one list of panels and their PromQL: the dashboard JSON, the end-to-end test that runs every
 *   query against a real Prometheus (each must parse and return data), and the picture in README
 *   (docs/dashboard.svg, drawn from those queries over that test's data) all follow it.
 * - Every query selects the operator's job (monitoring.ts METRICS_JOB), so the dashboard shows only devctl.
 * - The data source is a dashboard variable (any Prometheus), as dashboards shared on grafana.com do.
 */
import type { KubeObject } from "../kube/types.ts";
import { commonLabels, METRICS_JOB, OPERATOR_NAME } from "./manifests.ts";

export interface Panel {
  title: string;
  /** What the y axis counts, for the unit and the picture's axis. */
  unit: "short" | "s" | "bytes" | "reqps" | "percentunit";
  targets: { expr: string; legend: string }[];
}

const job = `job="${METRICS_JOB}"`;
const quantile = (q: number, metric: string, by = "le") =>
  `histogram_quantile(${q}, sum by (${by}) (rate(${metric}_bucket{${job}}[5m])))`;

export const PANELS: Panel[] = [
  {
    title: "WebApps by condition",
    unit: "short",
    targets: [
      {
        expr: `count by (type, status) (devctl_webapp_status_condition{${job},type=~"Ready|Stalled"})`,
        legend: "{{type}}={{status}}",
      },
    ],
  },
  {
    title: "WebApps not Ready, by reason",
    unit: "short",
    targets: [
      {
        expr: `count by (reason) (devctl_webapp_status_condition{${job},type="Ready",status="false"})`,
        legend: "{{reason}}",
      },
    ],
  },
  {
    title: "Pods: desired and available",
    unit: "short",
    targets: [
      { expr: `sum(devctl_webapp_spec_replicas{${job}})`, legend: "desired" },
      { expr: `sum(devctl_webapp_status_available_replicas{${job}})`, legend: "available" },
    ],
  },
  {
    title: "Rollouts to Ready, and their p90 duration",
    unit: "short",
    targets: [
      { expr: `sum(increase(devctl_webapp_rollout_duration_seconds_count{${job}}[1h]))`, legend: "rollouts (1h)" },
      { expr: quantile(0.9, "devctl_webapp_rollout_duration_seconds"), legend: "p90 seconds" },
    ],
  },
  {
    title: "Failed rollouts by reason, and rollbacks",
    unit: "short",
    targets: [
      {
        expr: `sum by (reason) (increase(devctl_webapp_rollout_failures_total{${job}}[1h]))`,
        legend: "{{reason}} (1h)",
      },
      { expr: `sum(increase(devctl_webapp_rollbacks_total{${job}}[1h]))`, legend: "rollbacks (1h)" },
    ],
  },
  {
    title: "Pod failures by reason",
    unit: "short",
    targets: [
      {
        expr: `sum by (reason) (increase(devctl_webapp_pod_failures_total{${job}}[1h]))`,
        legend: "{{reason}} (1h)",
      },
    ],
  },
  {
    title: "Reconciles by result",
    unit: "reqps",
    targets: [
      { expr: `sum by (result) (rate(controller_runtime_reconcile_total{${job}}[5m]))`, legend: "{{result}}" },
      { expr: `sum(rate(controller_runtime_reconcile_errors_total{${job}}[5m]))`, legend: "errors" },
    ],
  },
  {
    title: "Reconcile latency",
    unit: "s",
    targets: [
      { expr: quantile(0.5, "controller_runtime_reconcile_time_seconds"), legend: "p50" },
      { expr: quantile(0.99, "controller_runtime_reconcile_time_seconds"), legend: "p99" },
    ],
  },
  {
    title: "Work queue depth",
    unit: "short",
    targets: [{ expr: `sum by (name) (workqueue_depth{${job}})`, legend: "{{name}}" }],
  },
  {
    title: "API requests by code",
    unit: "reqps",
    targets: [
      { expr: `sum by (code, method) (rate(rest_client_requests_total{${job}}[5m]))`, legend: "{{method}} {{code}}" },
    ],
  },
  {
    title: "Leader",
    unit: "short",
    targets: [{ expr: `max by (pod) (leader_election_master_status{${job}})`, legend: "{{pod}}" }],
  },
  {
    title: "Memory (RSS)",
    unit: "bytes",
    targets: [{ expr: `process_resident_memory_bytes{${job}}`, legend: "{{pod}}" }],
  },
];

export const DASHBOARD_UID = "devctl-webapps";
const COLUMNS = 2;
const PANEL_WIDTH = 12;
const PANEL_HEIGHT = 8;

/** The dashboard's JSON model (Grafana schema 39). */
export function dashboard(): Record<string, unknown> {
  // Grafana's variable syntax, not a template string.
  const datasource = { type: "prometheus", uid: ["$", "{datasource}"].join("") };
  return {
    uid: DASHBOARD_UID,
    title: "devctl: WebApps and operator",
    description: "WebApps by condition, rollouts and failures, and the devctl operator's reconciles, queue and API use",
    tags: ["devctl", "kubernetes"],
    timezone: "browser",
    schemaVersion: 39,
    refresh: "30s",
    time: { from: "now-3h", to: "now" },
    templating: {
      list: [{ name: "datasource", label: "Data source", type: "datasource", query: "prometheus", current: {} }],
    },
    panels: PANELS.map((p, i) => ({
      id: i + 1,
      type: "timeseries",
      title: p.title,
      datasource,
      gridPos: {
        x: (i % COLUMNS) * PANEL_WIDTH,
        y: Math.floor(i / COLUMNS) * PANEL_HEIGHT,
        w: PANEL_WIDTH,
        h: PANEL_HEIGHT,
      },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      targets: p.targets.map((t, j) => ({
        refId: String.fromCharCode(65 + j),
        datasource,
        expr: t.expr,
        legendFormat: t.legend,
      })),
    })),
  };
}

/** The ConfigMap Grafana's sidecar loads (label grafana_dashboard=1), in the install namespace. */
export function dashboardConfigMap(namespace: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: `${OPERATOR_NAME}-dashboard`,
      namespace,
      labels: { ...commonLabels(), grafana_dashboard: "1" },
    },
    data: { "devctl-webapps.json": `${JSON.stringify(dashboard(), null, 2)}\n` },
  };
}
