/** `devctl operator manifests`: the objects install applies, as multi-document YAML (nothing contacted). */
import { defineCommand } from "citty";
import { toYamlDocuments } from "../../api/yaml.ts";
import { buildManifests } from "../../install/manifests.ts";
import { installOptionsFrom, manifestArgs } from "./install.ts";

export default defineCommand({
  meta: {
    name: "manifests",
    description: `Print the objects \`devctl operator install\` applies, as YAML, for GitOps or kubectl

Examples:
  devctl operator manifests | kubectl apply --server-side --field-manager=devctl -f -
  devctl operator manifests -n platform --replicas 1 > deploy/devctl-operator.yaml`,
  },
  args: manifestArgs,
  run({ args }) {
    process.stdout.write(toYamlDocuments(buildManifests(installOptionsFrom(args))));
  },
});
