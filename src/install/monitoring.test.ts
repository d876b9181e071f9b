import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { DASHBOARD_UID, dashboard, PANELS } from "./dashboard.ts";
import { buildManifests, defaultInstallOptions, METRICS_JOB } from "./manifests.ts";
import { alerts, buildMonitoring, RUNBOOK_BASE_URL, ruleGroups } from "./monitoring.ts";

type Pod = { metadata: { labels: Record<string, string> }; spec: { containers: { ports: { name: string }[] }[] } };
const deployment = buildManifests(defaultInstallOptions()).find((o) => o.kind === "Deployment") as KubeObject & {
  spec: { template: Pod };
};
const monitoring = buildMonitoring("devctl-system");
const kind = (k: string) => monitoring.find((o) => o.kind === k) as KubeObject & { spec: Record<string, unknown> };

describe("the alerts", () => {
  test("every alert selects the operator's job, has a severity, a summary, a description and its runbook", () => {
    for (const a of alerts()) {
      expect(a.expr).toContain(`job="${METRICS_JOB}"`);
      expect(a.summary.length).toBeGreaterThan(10);
      expect(a.description.length).toBeGreaterThan(10);
    }
    const rules = (
      ruleGroups().groups as { rules: { alert: string; annotations: Record<string, string> }[] }[]
    ).flatMap((g) => g.rules);
    expect(rules.map((r) => r.annotations.runbook_url)).toEqual(
      alerts().map((a) => `${RUNBOOK_BASE_URL}/${a.alert}.md`),
    );
  });

  test("a WebApp alert's summary names the WebApp; the timings are the caller's", () => {
    for (const a of alerts().filter((x) => x.alert.startsWith("WebApp")))
      expect(a.summary).toContain("{{ $labels.namespace }}/{{ $labels.name }}");
    const quick = alerts({ stalledFor: "10s", notReadyFor: "1m" });
    expect(quick.find((a) => a.alert === "WebAppStalled")?.for).toBe("10s");
    expect(quick.find((a) => a.alert === "WebAppNotReady")?.for).toBe("1m");
  });
});

describe("the Service, ServiceMonitor and dashboard", () => {
  test("the metrics Service selects the operator's pods and names the container's metrics port", () => {
    const pod = deployment.spec.template;
    const service = kind("Service");
    expect(service.metadata.name).toBe(METRICS_JOB);
    for (const [k, v] of Object.entries(service.spec.selector as Record<string, string>))
      expect(pod.metadata.labels[k]).toBe(v);
    const portName = (service.spec.ports as { targetPort: string }[])[0]?.targetPort;
    expect(pod.spec.containers[0]?.ports.map((p) => p.name)).toContain(portName);
    const endpoint = (kind("ServiceMonitor").spec.endpoints as { port: string; scheme: string }[])[0];
    expect(endpoint).toMatchObject({ port: portName, scheme: "https", honorLabels: true });
  });

  test("every panel's query selects the operator's job; panels do not overlap; the ConfigMap is for the sidecar", () => {
    for (const p of PANELS) for (const t of p.targets) expect(t.expr).toContain(`job="${METRICS_JOB}"`);
    const d = dashboard() as { uid: string; panels: { gridPos: { x: number; y: number } }[] };
    expect(d.uid).toBe(DASHBOARD_UID);
    const cells = d.panels.map((p) => `${p.gridPos.x},${p.gridPos.y}`);
    expect(new Set(cells).size).toBe(cells.length);
    const cm = kind("ConfigMap") as unknown as { metadata: KubeObject["metadata"]; data: Record<string, string> };
    expect(cm.metadata.labels?.grafana_dashboard).toBe("1");
    expect(JSON.parse(cm.data["devctl-webapps.json"] ?? "")).toEqual(dashboard());
  });
});
