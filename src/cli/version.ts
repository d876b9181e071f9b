/**
 * `devctl version`: the client's version and commit, the API server's version, and the version of the
 * operator installed in -n (like kubectl version, -o json|yaml for scripts). A client and operator of
 * different versions get a warning on stderr; an operator that cannot be read is reported, not fatal.
 */
import { defineCommand } from "citty";
import { COMMIT, VERSION } from "../build/version.ts";
import { DEPLOYMENT_RESOURCE } from "../api/webapp.ts";
import { toYaml } from "../api/yaml.ts";
import { DEFAULT_NAMESPACE, OPERATOR_NAME, VERSION_LABEL, versionLabelValue } from "../install/manifests.ts";
import { isNotFound } from "../kube/errors.ts";
import type { KubeObject } from "../kube/types.ts";
import { choiceFlag } from "./_flags.ts";
import { clientFrom, connectionArgs } from "./_global.ts";
import { out, warn } from "./_output.ts";

export interface Versions {
  clientVersion: { version: string; commit: string };
  serverVersion?: { gitVersion: string; platform: string; server: string };
  operatorVersion?: { namespace: string; version?: string; image?: string; error?: string };
}

export function versionText(v: Versions): string {
  const lines = [`Client: devctl ${v.clientVersion.version} (commit ${v.clientVersion.commit})`];
  if (v.serverVersion)
    lines.push(`Server: ${v.serverVersion.gitVersion} (${v.serverVersion.platform}) at ${v.serverVersion.server}`);
  const o = v.operatorVersion;
  if (o)
    lines.push(
      o.error
        ? `Operator: unknown in namespace ${o.namespace} (${o.error})`
        : o.version
          ? `Operator: ${o.version} (${o.image}) in namespace ${o.namespace}`
          : `Operator: not installed in namespace ${o.namespace}`,
    );
  return `${lines.join("\n")}\n`;
}

/** The warning for a client and an installed operator of different versions, if they differ. */
export function skewWarning(v: Versions): string | undefined {
  const o = v.operatorVersion;
  if (!o?.version || o.version === "unknown" || o.version === versionLabelValue(v.clientVersion.version)) return;
  return (
    `this devctl is ${v.clientVersion.version} but the operator in namespace ${o.namespace} runs ${o.version}: ` +
    `run \`devctl operator install -n ${o.namespace}\` with this devctl to match them`
  );
}

export default defineCommand({
  meta: {
    name: "version",
    description: `Print the client, API server and installed operator versions

Examples:
  devctl version
  devctl version --client
  devctl version -o json | jq -r .operatorVersion.version
  devctl version -n platform --context kind-dev`,
  },
  args: {
    ...connectionArgs,
    namespace: {
      type: "string",
      alias: "n",
      default: DEFAULT_NAMESPACE,
      description: "Namespace the operator is installed in",
    },
    client: { type: "boolean", description: "Print only the client version (contacts no server)" },
    output: choiceFlag({ alias: "o", default: "text", description: "Output format" }, ["text", "json", "yaml"]),
  },
  async run({ args }) {
    const v: Versions = { clientVersion: { version: VERSION, commit: COMMIT } };
    if (!args.client) {
      const client = await clientFrom(args);
      const s = await client.raw<{ gitVersion: string; platform: string }>("GET", "/version");
      v.serverVersion = { gitVersion: s.gitVersion, platform: s.platform, server: client.server };
      v.operatorVersion = await client
        .get<KubeObject & { spec?: { template?: { spec?: { containers?: { image?: string }[] } } } }>(
          DEPLOYMENT_RESOURCE,
          OPERATOR_NAME,
          args.namespace,
        )
        .then((d) => ({
          namespace: args.namespace,
          version: d.metadata.labels?.[VERSION_LABEL] ?? "unknown",
          image: d.spec?.template?.spec?.containers?.[0]?.image ?? "unknown",
        }))
        .catch((e) =>
          isNotFound(e) ? { namespace: args.namespace } : { namespace: args.namespace, error: (e as Error).message },
        );
    }
    if (args.output === "json") out(JSON.stringify(v, null, 4));
    else if (args.output === "yaml") process.stdout.write(toYaml(v));
    else process.stdout.write(versionText(v));
    const skew = skewWarning(v);
    if (skew) warn(skew);
  },
});
