import { describe, expect, test } from "bun:test";
import { buildManifests } from "./manifests.ts";
import { chartVersion, defaultValues, packageFiles } from "./packages.ts";

const opts = { namespace: "devctl-system", image: "ghcr.io/devctl/devctl:1.2.3", replicas: 2, version: "1.2.3" };
const parseAll = (text: string) => text.split(/^---$/m).map((d) => Bun.YAML.parse(d));

describe("packageFiles", () => {
  test("yaml is install's objects as one stream; kustomize adds a kustomization listing it", () => {
    const yaml = packageFiles("yaml", opts);
    expect(Object.keys(yaml)).toEqual(["devctl-operator.yaml"]);
    expect(parseAll(yaml["devctl-operator.yaml"]!)).toEqual(JSON.parse(JSON.stringify(buildManifests(opts))));
    const k = packageFiles("kustomize", opts);
    expect(k["devctl-operator.yaml"]).toBe(yaml["devctl-operator.yaml"]!);
    expect(Bun.YAML.parse(k["kustomization.yaml"]!)).toEqual({
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: ["devctl-operator.yaml"],
    });
  });

  test("helm: the CRD under crds/ exactly as install applies it, every other object as a template", () => {
    const files = packageFiles("helm", opts);
    expect(Object.keys(files).sort()).toEqual([
      "Chart.yaml",
      "crds/webapps.apps.example.com.yaml",
      "templates/clusterrole-devctl-metrics-reader.yaml",
      "templates/clusterrole-webapp-operator-namespace.yaml",
      "templates/clusterrolebinding-webapp-operator-namespace.yaml",
      "templates/deployment-webapp-operator.yaml",
      "templates/monitoring.yaml",
      "templates/namespace-namespace.yaml",
      "templates/networkpolicy-webapp-operator.yaml",
      "templates/poddisruptionbudget-webapp-operator.yaml",
      "templates/role-webapp-operator-leader-election.yaml",
      "templates/rolebinding-webapp-operator-leader-election.yaml",
      "templates/serviceaccount-webapp-operator.yaml",
      "values.yaml",
    ]);
    expect(Bun.YAML.parse(files["crds/webapps.apps.example.com.yaml"]!)).toEqual(
      JSON.parse(JSON.stringify(buildManifests(opts)[0])),
    );
    const templates = Object.entries(files).filter(([p]) => p.startsWith("templates/"));
    expect(templates.every(([, t]) => !t.includes("devctl-chart-"))).toBe(true);
    expect(files["templates/deployment-webapp-operator.yaml"]).toContain("replicas: {{ .Values.replicas }}");
    // js-yaml writes the arg plain (it is a plain-safe string before and after the template renders).
    expect(files["templates/deployment-webapp-operator.yaml"]).toContain("- --lease-namespace={{ .Values.namespace }}");
    // The NetworkPolicy, and the annotation that tells status one is wanted, only under networkPolicy.enabled.
    const netpol = files["templates/networkpolicy-webapp-operator.yaml"]!;
    expect(netpol.startsWith("{{- if .Values.networkPolicy.enabled }}\n")).toBe(true);
    expect(netpol.endsWith("{{- end }}\n")).toBe(true);
    expect(files["templates/deployment-webapp-operator.yaml"]).toContain(
      "{{- if .Values.networkPolicy.enabled }}\n  annotations:\n    devctl.dev/network-policy: enabled\n{{- end }}\n",
    );
  });

  test("values.yaml holds the options install takes, with install's defaults", () => {
    expect(Bun.YAML.parse(packageFiles("helm", opts)["values.yaml"]!)).toEqual(defaultValues(opts));
    expect(defaultValues(opts)).toEqual({
      namespace: "devctl-system",
      image: "ghcr.io/devctl/devctl:1.2.3",
      replicas: 2,
      imagePullPolicy: "",
      imagePullSecrets: [],
      nodeSelector: {},
      tolerations: [],
      resources: { requests: { cpu: "50m", memory: "224Mi" }, limits: { memory: "384Mi" } },
      autoRollback: false,
      monitoring: { enabled: false },
      networkPolicy: { enabled: false },
    });
    expect(Bun.YAML.parse(packageFiles("helm", opts)["Chart.yaml"]!)).toMatchObject({
      apiVersion: "v2",
      name: "devctl-operator",
      version: "1.2.3",
      appVersion: "1.2.3",
    });
  });

  test("a chart version is SemVer even for a build from source", () => {
    expect(chartVersion("1.2.3")).toBe("1.2.3");
    expect(chartVersion("1.2.3-rc.1")).toBe("1.2.3-rc.1");
    expect(chartVersion("dev")).toBe("0.0.0-dev");
  });
});
