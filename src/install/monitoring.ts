/**
 * `devctl operator manifests --monitoring`: what a cluster running the Prometheus Operator needs to watch devctl and
 * its WebApps. Pure builders.
 *
 * Properties:
 * - ALERTS is the one list of alerts: the PrometheusRule, `promtool check rules` / `promtool test rules`
 *   (tests/monitoring) and the runbooks (docs/runbooks/<alert>.md, one per alert, a test checks) all follow it.
 * - Every alert has a severity, a summary that names what it is about (the WebApp for WebApp alerts) and a
 *   runbook_url.
 * - The operator's series are selected by `job="<METRICS_JOB>"`: the metrics Service's name, which is the job the
 *   Prometheus Operator gives a ServiceMonitor's targets. The ServiceMonitor honours the exposed labels, so a WebApp's
 *   `namespace` label stays the WebApp's (as for kube-state-metrics); the operator's own series take the target's.
 * - The metrics Service publishes not-ready pods too: a replica whose watch is stale fails /readyz, and its
 *   metrics are what say why.
 */
import type { KubeObject } from "../kube/types.ts";
import { LEASE_NAME } from "../api/names.ts";
import { METRICS_PORT, METRICS_PORT_NAME } from "./deployment.ts";
import { dashboardConfigMap } from "./dashboard.ts";
import { commonLabels, METRICS_JOB, OPERATOR_NAME, selectorLabels } from "./manifests.ts";

export { METRICS_JOB } from "./manifests.ts";

/** Where each alert's runbook is read: docs/runbooks/<alert>.md in the repository. */
export const RUNBOOK_BASE_URL = "https://github.com/devctl/devctl/blob/main/docs/runbooks";
const job = `job="${METRICS_JOB}"`;
const webapp = "{{ $labels.namespace }}/{{ $labels.name }}";

export interface Alert {
  alert: string;
  expr: string;
  /** How long expr must hold; the WebApp alerts take theirs from AlertTimings. */
  for: string;
  severity: "critical" | "warning";
  summary: string;
  description: string;
}

/** How long a WebApp must be Stalled or not Ready before it pages (tests shorten them). */
export interface AlertTimings {
  stalledFor: string;
  notReadyFor: string;
}
/** Stalled for 10 minutes; not Ready for 15, longer than a WebApp's default progress deadline (600 s). */
export const DEFAULT_TIMINGS: AlertTimings = { stalledFor: "10m", notReadyFor: "15m" };

const condition = (type: string, status: string, more = "") =>
  `devctl_webapp_status_condition{${job},type="${type}",status="${status}"${more}} == 1`;

export function alerts(t: AlertTimings = DEFAULT_TIMINGS): Alert[] {
  return [
    {
      alert: "WebAppStalled",
      expr: condition("Stalled", "true", ',reason!="RolledBack"'),
      for: t.stalledFor,
      severity: "warning",
      summary: `WebApp ${webapp} is stalled: {{ $labels.reason }}`,
      description:
        `WebApp ${webapp} has been Stalled (reason {{ $labels.reason }}) for ${t.stalledFor}: the operator cannot ` +
        "converge it without someone acting. `devctl webapp describe` shows the message.",
    },
    {
      alert: "WebAppNotReady",
      expr: `${condition("Ready", "false")} unless on (namespace, name) ${condition("Stalled", "true")}`,
      for: t.notReadyFor,
      severity: "warning",
      summary: `WebApp ${webapp} has not been Ready for ${t.notReadyFor}`,
      description:
        `WebApp ${webapp} is not Ready (reason {{ $labels.reason }}) and has not been for ${t.notReadyFor}, longer ` +
        "than its progress deadline, without being Stalled.",
    },
    {
      alert: "WebAppRollbackHappened",
      expr: condition("Stalled", "true", ',reason="RolledBack"'),
      for: "0m",
      severity: "warning",
      summary: `WebApp ${webapp} was rolled back to its last Ready revision`,
      description:
        `The newest revision of WebApp ${webapp} failed and the operator rolled it back (spec.rollout.autoRollback). ` +
        "The service runs the last Ready revision; the spec still names the failed one.",
    },
    {
      alert: "OperatorDown",
      expr: `absent(up{${job}} == 1)`,
      for: "5m",
      severity: "critical",
      summary: "No devctl operator replica can be scraped",
      description: "Prometheus has not scraped a devctl operator replica for 5m: no WebApp is being reconciled.",
    },
    {
      alert: "OperatorNoLeader",
      expr: `sum by (namespace) (leader_election_master_status{${job},name="${LEASE_NAME}"}) < 1`,
      for: "5m",
      severity: "critical",
      summary: "devctl operator in {{ $labels.namespace }} has no leader",
      description:
        "Operator replicas in {{ $labels.namespace }} are up but none has led for 5m: no WebApp is being reconciled.",
    },
    {
      alert: "OperatorReconcileErrors",
      expr:
        `sum by (namespace) (rate(controller_runtime_reconcile_errors_total{${job}}[5m])) / ` +
        `sum by (namespace) (rate(controller_runtime_reconcile_total{${job}}[5m])) > 0.1`,
      for: "15m",
      severity: "warning",
      summary: "devctl operator in {{ $labels.namespace }}: {{ $value | humanizePercentage }} of reconciles fail",
      description: "More than 10% of the operator's reconciles have failed for 15m.",
    },
    {
      alert: "OperatorWorkqueueBacklog",
      expr: `sum by (namespace, name) (workqueue_depth{${job}}) > 100`,
      for: "15m",
      severity: "warning",
      summary: "devctl operator in {{ $labels.namespace }}: {{ $value }} WebApps waiting in queue {{ $labels.name }}",
      description: "More than 100 keys have waited in the operator's work queue for 15m: changes reach WebApps late.",
    },
    {
      alert: "OperatorWatchStalled",
      expr: `max by (namespace, resource) (devctl_watch_stale{${job}}) == 1`,
      for: "5m",
      severity: "warning",
      summary: "devctl operator in {{ $labels.namespace }} has a stale watch of {{ $labels.resource }}",
      description:
        "The operator's watch of {{ $labels.resource }} has been closed or silent past its limit for 5m: it acts " +
        "on an old view of the cluster.",
    },
  ];
}

/** A Prometheus rule file's groups (the PrometheusRule's spec and promtool's input are the same). */
export function ruleGroups(t: AlertTimings = DEFAULT_TIMINGS): { groups: unknown[] } {
  const rules = (names: (a: Alert) => boolean) =>
    alerts(t)
      .filter(names)
      .map((a) => ({
        alert: a.alert,
        expr: a.expr,
        for: a.for,
        labels: { severity: a.severity },
        annotations: {
          summary: a.summary,
          description: a.description,
          runbook_url: `${RUNBOOK_BASE_URL}/${a.alert}.md`,
        },
      }));
  return {
    groups: [
      { name: "devctl-webapps", rules: rules((a) => a.alert.startsWith("WebApp")) },
      { name: "devctl-operator", rules: rules((a) => a.alert.startsWith("Operator")) },
    ],
  };
}

/** The metrics Service, its ServiceMonitor, the PrometheusRule and the dashboard, in the install namespace. */
export function buildMonitoring(namespace: string): KubeObject[] {
  const labels = commonLabels();
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: METRICS_JOB, namespace, labels: { ...labels } },
      spec: {
        selector: selectorLabels(),
        publishNotReadyAddresses: true,
        ports: [{ name: METRICS_PORT_NAME, port: METRICS_PORT, targetPort: METRICS_PORT_NAME, protocol: "TCP" }],
      },
    },
    {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "ServiceMonitor",
      metadata: { name: OPERATOR_NAME, namespace, labels: { ...labels } },
      spec: {
        selector: { matchLabels: { ...labels } },
        endpoints: [
          {
            port: METRICS_PORT_NAME,
            path: "/metrics",
            interval: "30s",
            honorLabels: true,
            // The metrics endpoint checks the scraper's token (TokenReview) and its right to get /metrics
            // (SubjectAccessReview): bind Prometheus's ServiceAccount to the devctl-metrics-reader ClusterRole.
            scheme: "https",
            bearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
            tlsConfig: { insecureSkipVerify: true },
          },
        ],
      },
    },
    {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { name: OPERATOR_NAME, namespace, labels: { ...labels } },
      spec: ruleGroups(),
    },
    dashboardConfigMap(namespace),
  ];
}
