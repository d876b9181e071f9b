/**
 * `devctl operator manifests --format yaml|helm|kustomize`: the objects install applies, packaged for
 * GitOps, as files (relative path → text). Pure.
 *
 * Properties:
 * - One source: every format is rendered from buildManifests(); nothing is written by hand. The Helm
 *   chart is buildManifests() of sentinel options with the sentinels turned into template
 *   expressions, so `helm template` with the default values gives exactly install's objects (a test
 *   renders it with helm itself, also with values set, and compares).
 * - yaml: one stream (devctl-operator.yaml). kustomize: that stream plus a kustomization.yaml listing it.
 * - helm: Chart.yaml, values.yaml (namespace, image, replicas, imagePullPolicy, imagePullSecrets,
 *   nodeSelector, tolerations, resources, autoRollback, networkPolicy.enabled, monitoring.enabled), the CRD under
 *   crds/ (Helm installs it first and never deletes it, like uninstall keeps it), every other object under
 *   templates/; the NetworkPolicy and the Deployment's annotation that records it only under networkPolicy.enabled,
 *   the monitoring objects (monitoring.ts) only under monitoring.enabled.
 */
import { toYaml, toYamlDocuments } from "../api/yaml.ts";
import type { KubeObject } from "../kube/types.ts";
import {
  buildManifests,
  DEFAULT_NAMESPACE,
  defaultImage,
  type InstallOptions,
  versionLabelValue,
} from "./manifests.ts";
import { buildMonitoring } from "./monitoring.ts";
import { NETWORK_POLICY_ANNOTATION, NETWORK_POLICY_ENABLED } from "./hardening.ts";
import { containerResources } from "./resources.ts";

export const FORMATS = ["yaml", "helm", "kustomize"] as const;
export type PackageFormat = (typeof FORMATS)[number];
export const CHART_NAME = "devctl-operator";
export const STREAM_FILE = "devctl-operator.yaml";

/** What a package holds: install's objects, then with `monitoring` the monitoring ones (monitoring.ts). */
export function packageObjects(o: InstallOptions): KubeObject[] {
  return [...buildManifests(o), ...(o.monitoring ? buildMonitoring(o.namespace) : [])];
}

export function packageFiles(format: PackageFormat, o: InstallOptions): Record<string, string> {
  switch (format) {
    case "yaml":
      return { [STREAM_FILE]: toYamlDocuments(packageObjects(o)) };
    case "kustomize":
      return {
        [STREAM_FILE]: toYamlDocuments(packageObjects(o)),
        "kustomization.yaml": toYaml({
          apiVersion: "kustomize.config.k8s.io/v1beta1",
          kind: "Kustomization",
          resources: [STREAM_FILE],
        }),
      };
    case "helm":
      return helmChart(o);
  }
}

/** Sentinels: values no user option can produce, each turned into a template expression. */
const S = {
  namespace: "devctl-chart-namespace",
  image: "devctl-chart-image",
  replicas: 424242,
  block: (name: string) => `devctl-chart-block-${name}`,
};

/** The Deployment's optional parts, as Helm blocks; `indent` is the key's column. */
const BLOCKS: Record<string, (indent: string) => string> = {
  affinity: (i) => `{{- if gt (int .Values.replicas) 1 }}\n${i}affinity:\n${i}  AFFINITY\n{{- end }}`,
  nodeSelector: (i) =>
    `{{- with .Values.nodeSelector }}\n${i}nodeSelector:\n${i}  {{- toYaml . | nindent ${i.length + 2} }}\n{{- end }}`,
  tolerations: (i) =>
    `{{- with .Values.tolerations }}\n${i}tolerations:\n${i}  {{- toYaml . | nindent ${i.length + 2} }}\n{{- end }}`,
  imagePullSecrets: (i) =>
    `{{- with .Values.imagePullSecrets }}\n${i}imagePullSecrets:\n{{- range . }}\n${i}- name: {{ . | quote }}\n{{- end }}\n{{- end }}`,
  imagePullPolicy: (i) => `{{- with .Values.imagePullPolicy }}\n${i}imagePullPolicy: {{ . }}\n{{- end }}`,
  resources: (i) => `${i}resources:\n${i}  {{- toYaml .Values.resources | nindent ${i.length + 2} }}`,
};

function helmChart(o: InstallOptions): Record<string, string> {
  const version = o.version ?? "dev";
  // With every optional argument, each then rendered under its value's condition.
  const objects = buildManifests({
    namespace: S.namespace,
    image: S.image,
    replicas: S.replicas,
    version,
    autoRollback: true,
    networkPolicy: true,
  });
  const files: Record<string, string> = {
    "Chart.yaml": toYaml({
      apiVersion: "v2",
      name: CHART_NAME,
      description: "The devctl WebApp operator: CRD, namespace, least-privilege RBAC and the operator Deployment",
      type: "application",
      version: chartVersion(version),
      appVersion: version,
    }),
    "values.yaml": toYaml(defaultValues(o)),
  };
  for (const obj of objects) {
    const name = `${obj.kind?.toLowerCase()}-${obj.metadata.name}.yaml`.replace(S.namespace, "namespace");
    if (obj.kind === "CustomResourceDefinition") files[`crds/${obj.metadata.name}.yaml`] = toYaml(obj);
    else files[`templates/${name}`] = template(obj);
  }
  // Alert texts hold Prometheus templates ({{ $labels.name }}): Helm must print them, not run them.
  const monitoring = buildMonitoring(S.namespace).map((obj) => template(obj, (t) => t.replaceAll("{{", '{{ "{{" }}')));
  files["templates/monitoring.yaml"] = `{{- if .Values.monitoring.enabled }}\n${monitoring.join("---\n")}{{- end }}\n`;
  return files;
}

export function defaultValues(o: InstallOptions) {
  return {
    namespace: o.namespace || DEFAULT_NAMESPACE,
    image: o.image || defaultImage(o.version),
    replicas: o.replicas,
    imagePullPolicy: o.imagePullPolicy ?? "",
    imagePullSecrets: o.imagePullSecrets ?? [],
    nodeSelector: o.nodeSelector ?? {},
    tolerations: o.tolerations ?? [],
    resources: containerResources({
      ...(o.memoryRequest ? { request: o.memoryRequest } : {}),
      ...(o.memoryLimit ? { limit: o.memoryLimit } : {}),
    }),
    autoRollback: o.autoRollback ?? false,
    monitoring: { enabled: o.monitoring ?? false },
    networkPolicy: { enabled: o.networkPolicy ?? false },
  };
}

/** Helm needs SemVer 2: "dev" and other non-versions become 0.0.0-<label>. */
export function chartVersion(version: string): string {
  return /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.test(version)
    ? version
    : `0.0.0-${versionLabelValue(version).replace(/[^0-9A-Za-z.-]/g, "-")}`;
}

const IF_NETWORK_POLICY = "{{- if .Values.networkPolicy.enabled }}";
const ANNOTATION_LINES = new RegExp(
  `^(\\s*)annotations:\\n\\s*${NETWORK_POLICY_ANNOTATION.replace(/[./]/g, "\\$&")}: ${NETWORK_POLICY_ENABLED}$`,
  "m",
);

/** `quote` runs on the object's YAML before the chart's own template expressions are put in. */
function template(obj: KubeObject, quote: (yaml: string) => string = (t) => t): string {
  const text = templateBody(obj, quote).replace(
    ANNOTATION_LINES,
    `${IF_NETWORK_POLICY}\n$1annotations:\n$1  ${NETWORK_POLICY_ANNOTATION}: ${NETWORK_POLICY_ENABLED}\n{{- end }}`,
  );
  return obj.kind === "NetworkPolicy" ? `${IF_NETWORK_POLICY}\n${text}{{- end }}\n` : text;
}

function templateBody(obj: KubeObject, quote: (yaml: string) => string): string {
  let affinity = "";
  let body = obj;
  if (obj.kind === "Deployment") {
    const spec = structuredClone(obj.spec) as { template: { spec: Record<string, unknown> } };
    const pod = spec.template.spec;
    affinity = toYaml(pod.affinity);
    const container = (pod.containers as Record<string, unknown>[])[0] as Record<string, unknown>;
    (pod.containers as unknown[])[0] = Object.fromEntries(
      Object.entries(container).flatMap(([k, v]): [string, unknown][] => {
        if (k === "image")
          return [
            [k, v],
            ["imagePullPolicy", S.block("imagePullPolicy")],
          ];
        if (k === "resources") return [[k, S.block("resources")]];
        return [[k, v]];
      }),
    );
    const { containers, volumes, ...head } = pod;
    spec.template.spec = {
      ...head,
      affinity: S.block("affinity"),
      nodeSelector: S.block("nodeSelector"),
      tolerations: S.block("tolerations"),
      imagePullSecrets: S.block("imagePullSecrets"),
      containers,
      volumes,
    };
    body = { ...obj, spec };
  }
  return quote(toYaml(body))
    .split("\n")
    .map((line) => {
      const m = /^(\s*)(\w+): devctl-chart-block-(\w+)$/.exec(line);
      if (!m) return line;
      const [, indent = "", , block = ""] = m;
      const text = (BLOCKS[block] as (i: string) => string)(indent);
      return block === "affinity"
        ? text.replace(
            `${indent}  AFFINITY`,
            affinity
              .trimEnd()
              .split("\n")
              .map((l) => `${indent}  ${l}`)
              .join("\n"),
          )
        : text;
    })
    .join("\n")
    .replace(/^(\s*)- --auto-rollback$/m, "{{- if .Values.autoRollback }}\n$1- --auto-rollback\n{{- end }}")
    .replaceAll(`image: ${S.image}`, "image: {{ .Values.image | quote }}")
    .replaceAll(`replicas: ${S.replicas}`, "replicas: {{ .Values.replicas }}")
    .replaceAll(S.namespace, "{{ .Values.namespace }}");
}
