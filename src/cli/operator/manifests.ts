/**
 * `devctl operator manifests`: the objects install applies, as one YAML stream (stdout or a file), a
 * Helm chart or a kustomize base (install/packages.ts). Nothing is contacted.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { defineCommand } from "citty";
import { FORMATS, packageFiles, STREAM_FILE } from "../../install/packages.ts";
import { UsageError } from "../_errors.ts";
import { choiceFlag, parseChoice } from "../_flags.ts";
import { installOptionsFrom, manifestArgs } from "./install.ts";

export default defineCommand({
  meta: {
    name: "manifests",
    description:
      "Print or write the objects `devctl operator install` applies: " +
      `a YAML stream, a Helm chart or a kustomize base, for GitOps or kubectl

Examples:
  devctl operator manifests | kubectl apply --server-side --field-manager=devctl -f -
  devctl operator manifests -n platform --replicas 1 > deploy/devctl-operator.yaml
  devctl operator manifests --monitoring | kubectl apply --server-side -f -              # with alerts and dashboard
  devctl operator manifests --format helm --output charts/devctl-operator      # helm install devctl charts/devctl-operator
  devctl operator manifests --format kustomize --output deploy/devctl          # kubectl apply -k deploy/devctl`,
  },
  args: {
    ...manifestArgs,
    format: choiceFlag(
      { default: "yaml", description: "What to write: a YAML stream, a Helm chart or a kustomize base" },
      FORMATS,
    ),
    monitoring: {
      type: "boolean",
      default: false,
      description:
        "Add the metrics Service, a ServiceMonitor, a PrometheusRule (alerts with runbooks) and a Grafana dashboard " +
        "ConfigMap, for clusters that run the Prometheus Operator (Helm: monitoring.enabled)",
    },
    output: {
      type: "string",
      description:
        "Directory to write the files to (required for helm and kustomize; yaml prints to stdout without it)",
    },
  },
  run({ args }) {
    const format = parseChoice(args.format, "format", FORMATS);
    const opts = { ...installOptionsFrom(args), ...(args.monitoring ? { monitoring: true } : {}) };
    const files = packageFiles(format, opts);
    if (!args.output) {
      if (format !== "yaml") throw new UsageError(`--format ${format} writes several files: pass --output DIR`);
      process.stdout.write(files[STREAM_FILE] as string);
      return;
    }
    for (const [path, text] of Object.entries(files)) {
      const file = join(args.output, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      console.log(file);
    }
    console.error(`wrote ${Object.keys(files).length} files (${format}) to ${args.output}`);
  },
});
