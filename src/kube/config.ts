/**
 * Loads connection settings the way kubectl does, and resolves them once into `Connection`:
 * the server URL, the TLS material (CA, client certificate and key, skip-verify, server name) and
 * a function that yields the auth headers for each request (static token, token file, exec plugin; auth.ts).
 *
 * Order: an explicit kubeconfig path (one file, which must exist), else $KUBECONFIG (":"-separated; missing
 * files skipped; merged first-wins per cluster, user and context, and for current-context), else ~/.kube/config,
 * else in-cluster (service account token, CA, KUBERNETES_SERVICE_HOST/PORT). `context` picks a context.
 * Every failure is a `ConfigError` whose message says what to fix; nothing here talks to the network.
 *
 * Files are parsed with js-yaml and normalised by client-node's own `config_types.js` (the same validation and
 * messages as `KubeConfig.loadFromFile`, which imports nothing else); client-node's root, ~900 modules, is not
 * loaded here: auth.ts imports it only for auth providers it does not handle itself.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import {
  type Cluster,
  type Context,
  newClusters,
  newContexts,
  newUsers,
  type User,
} from "@kubernetes/client-node/dist/config_types.js";
import { load } from "js-yaml";
import { authHeadersOf, ConfigError } from "./auth.ts";

export { ConfigError } from "./auth.ts";

export interface LoadOptions {
  /** Path to a kubeconfig file (like kubectl --kubeconfig). */
  kubeconfig?: string;
  /** Context name (like kubectl --context). */
  context?: string;
  /** Prefix for the in-cluster service-account files (tests mount them elsewhere). Default "". */
  inClusterRoot?: string;
  env?: Record<string, string | undefined>;
}

export interface TlsSettings {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
  serverName?: string;
}

export interface Connection {
  server: string;
  /** Context name; "" in-cluster. */
  context: string;
  namespace: string;
  tls: TlsSettings;
  proxy?: string;
  /** Auth headers for one request; cheap when credentials are static, refreshes tokens when they are not. */
  authHeaders(): Promise<Record<string, string>>;
}

export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export function loadConnection(opts: LoadOptions = {}): Connection {
  const env = opts.env ?? process.env;
  const { parts, source } = loadParts(opts, env);
  let current = parts.currentContext;
  if (opts.context) {
    if (!byName(parts.contexts, opts.context)) {
      const known = parts.contexts.map((c) => c.name);
      throw new ConfigError(
        `context "${opts.context}" is not in ${source}; known contexts: ${known.join(", ") || "none"}.`,
      );
    }
    current = opts.context;
  }
  return resolve(parts, current, source);
}

function loadParts(opts: LoadOptions, env: Record<string, string | undefined>): { parts: ConfigParts; source: string } {
  const files = kubeconfigFiles(opts, env);
  if (files.kind === "files") {
    const parts = mergeKubeconfigs(files.paths.map((file) => readKubeconfig(file)));
    return { parts, source: `kubeconfig ${files.paths.join(":")}` };
  }
  const root = opts.inClusterRoot ?? "";
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (host && port) {
    if (!existsSync(`${root}${SERVICE_ACCOUNT_DIR}/token`)) {
      throw new ConfigError(
        `running in-cluster but ${root}${SERVICE_ACCOUNT_DIR}/token is missing: mount the service account token (automountServiceAccountToken).`,
      );
    }
    return { parts: inClusterParts(root, host, port), source: "in-cluster configuration" };
  }
  if (files.missing.length > 0)
    throw new ConfigError(
      `none of the files in KUBECONFIG exists (${files.missing.join(", ")}): point KUBECONFIG or --kubeconfig at a readable file.`,
    );
  throw new ConfigError(
    "no Kubernetes configuration found: set --kubeconfig or KUBECONFIG, create ~/.kube/config, or run inside a cluster.",
  );
}

/** What client-node's `loadFromCluster` builds: the service account's CA, token file and namespace. */
function inClusterParts(root: string, host: string, port: string): ConfigParts {
  const scheme = port === "80" || port === "8080" || port === "8001" ? "http" : "https";
  const namespaceFile = `${root}${SERVICE_ACCOUNT_DIR}/namespace`;
  const namespace = existsSync(namespaceFile) ? readFileSync(namespaceFile, "utf8") : undefined;
  return {
    clusters: [
      {
        name: "inCluster",
        caFile: `${root}${SERVICE_ACCOUNT_DIR}/ca.crt`,
        server: `${scheme}://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`, // IPv6
        skipTLSVerify: false,
      },
    ],
    users: [
      {
        name: "inClusterUser",
        authProvider: { name: "tokenFile", config: { tokenFile: `${root}${SERVICE_ACCOUNT_DIR}/token` } },
      },
    ],
    contexts: [{ cluster: "inCluster", name: "inClusterContext", user: "inClusterUser", namespace }],
    currentContext: "inClusterContext",
  };
}

type Files = { kind: "files"; paths: string[] } | { kind: "none"; missing: string[] };

/**
 * Which files to read, as kubectl's loading rules pick them: --kubeconfig alone (it must exist); else every
 * existing file of $KUBECONFIG (":"-separated, duplicates and missing files skipped); else ~/.kube/config.
 */
export function kubeconfigFiles(opts: LoadOptions, env: Record<string, string | undefined>): Files {
  if (opts.kubeconfig) {
    if (!existsSync(opts.kubeconfig))
      throw new ConfigError(`kubeconfig ${opts.kubeconfig} does not exist. Point --kubeconfig at a readable file.`);
    return { kind: "files", paths: [opts.kubeconfig] };
  }
  const listed = [...new Set((env.KUBECONFIG ?? "").split(delimiter).filter(Boolean))];
  if (listed.length > 0) {
    const paths = listed.filter((f) => existsSync(f));
    return paths.length > 0 ? { kind: "files", paths } : { kind: "none", missing: listed };
  }
  const def = join(env.HOME ?? homedir(), ".kube", "config");
  return existsSync(def) ? { kind: "files", paths: [def] } : { kind: "none", missing: [] };
}

interface ConfigParts {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext: string;
}

/** One file as client-node's `loadFromFile` reads it: validated entries, relative file paths made absolute. */
function readKubeconfig(file: string): ConfigParts {
  try {
    const obj = load(readFileSync(file, "utf8")) as Record<string, unknown>;
    const parts: ConfigParts = {
      clusters: newClusters(obj.clusters),
      contexts: newContexts(obj.contexts),
      users: newUsers(obj.users),
      currentContext: obj["current-context"] as string,
    };
    const root = dirname(file);
    const absolute = (f: string) => (isAbsolute(f) ? f : join(root, f));
    for (const c of parts.clusters) if (c.caFile) c.caFile = absolute(c.caFile);
    for (const u of parts.users) {
      if (u.certFile) u.certFile = absolute(u.certFile);
      if (u.keyFile) u.keyFile = absolute(u.keyFile);
    }
    return parts;
  } catch (e) {
    throw new ConfigError(
      `kubeconfig ${file} cannot be read: ${(e as Error).message}. Fix the file or point --kubeconfig elsewhere.`,
    );
  }
}

/**
 * kubectl's merge: for each cluster, user and context name the first file that defines it wins;
 * so does current-context.
 */
export function mergeKubeconfigs(parts: readonly ConfigParts[]): ConfigParts {
  const firstByName = <T extends { name: string }>(lists: T[][]): T[] => {
    const seen = new Map<string, T>();
    for (const item of lists.flat()) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  return {
    clusters: firstByName(parts.map((p) => p.clusters ?? [])),
    users: firstByName(parts.map((p) => p.users ?? [])),
    contexts: firstByName(parts.map((p) => p.contexts ?? [])),
    currentContext: parts.map((p) => p.currentContext).find(Boolean) ?? "",
  };
}

/** The first entry of that name, as client-node's lookups pick it. */
const byName = <T extends { name: string }>(list: readonly T[], name: string | undefined): T | undefined =>
  list.find((item) => item.name === name);

function resolve(parts: ConfigParts, current: string, source: string): Connection {
  const { ctx, cluster, user } = currentEntries(parts, current, source);
  const url = serverUrl(cluster, source);
  const tls = tlsSettings(cluster, user, `context "${ctx.name}" in ${source}`, source);
  return {
    server: url.toString().replace(/\/$/, ""),
    context: ctx.name === "inClusterContext" ? "" : ctx.name,
    namespace: ctx.namespace || "default",
    tls,
    ...(cluster.proxyUrl ? { proxy: cluster.proxyUrl } : {}),
    authHeaders: authHeadersOf({ ctx, cluster, user }),
  };
}

/** The current context and the cluster and user it names; a ConfigError when the context or its cluster is missing. */
function currentEntries(
  parts: ConfigParts,
  current: string,
  source: string,
): { ctx: Context; cluster: Cluster; user: User | null } {
  const ctx = byName(parts.contexts, current);
  if (!ctx)
    throw new ConfigError(
      `${source} has no current context; pass --context (known: ${parts.contexts.map((c) => c.name).join(", ") || "none"}).`,
    );
  const cluster = byName(parts.clusters, ctx.cluster);
  if (!cluster)
    throw new ConfigError(
      `context "${ctx.name}" in ${source} names cluster "${ctx.cluster}", which is not defined there.`,
    );
  return { ctx, cluster, user: byName(parts.users, ctx.user) ?? null };
}

function serverUrl(cluster: Cluster, source: string): URL {
  if (!cluster.server) throw new ConfigError(`cluster "${cluster.name}" in ${source} has no server URL.`);
  try {
    return new URL(cluster.server);
  } catch {
    throw new ConfigError(`cluster "${cluster.name}" in ${source} has an invalid server URL "${cluster.server}".`);
  }
}

/** The cluster's and user's TLS material, read and checked to parse (a ConfigError names the field otherwise). */
function tlsSettings(cluster: Cluster, user: User | null, where: string, source: string): TlsSettings {
  const tls: TlsSettings = { rejectUnauthorized: !cluster.skipTLSVerify };
  try {
    const ca = pem(cluster.caFile, cluster.caData);
    const cert = pem(user?.certFile, user?.certData);
    const key = pem(user?.keyFile, user?.keyData);
    if (ca) tls.ca = ca;
    if (cert) tls.cert = cert;
    if (key) tls.key = key;
  } catch (e) {
    throw new ConfigError(`cannot read TLS material of ${where}: ${(e as Error).message}.`);
  }
  // Bun's fetch reports unusable TLS material only as "FailedToOpenSocket: Was there a typo in the url
  // or port?": parse it here, so the message names the field. Never quote the material itself.
  const notPem = (field: string, owner: string, kind: string) =>
    new ConfigError(
      `${field} of ${owner} in ${source} is not a PEM ${kind}: fix it ` +
        `(it must hold a -----BEGIN ...----- block${field.endsWith("-data") ? ", base64-encoded" : ""}) ` +
        "or point --kubeconfig elsewhere.",
    );
  if (tls.ca && !parses(tls.ca, (s) => new X509Certificate(s)))
    throw notPem(
      cluster.caFile ? `certificate-authority ${cluster.caFile}` : "certificate-authority-data",
      `cluster "${cluster.name}"`,
      "certificate",
    );
  if (tls.cert && !parses(tls.cert, (s) => new X509Certificate(s)))
    throw notPem(
      user?.certFile ? `client-certificate ${user.certFile}` : "client-certificate-data",
      `user "${user?.name}"`,
      "certificate",
    );
  if (tls.key && !parses(tls.key, (s) => createPrivateKey(s)))
    throw notPem(
      user?.keyFile ? `client-key ${user.keyFile}` : "client-key-data",
      `user "${user?.name}"`,
      "private key",
    );
  if (cluster.tlsServerName) tls.serverName = cluster.tlsServerName;
  return tls;
}

function pem(file?: string, data?: string): string | undefined {
  if (file) return readFileSync(file, "utf8");
  if (data) return Buffer.from(data, "base64").toString("utf8");
  return undefined;
}

function parses(text: string, parse: (s: string) => unknown): boolean {
  try {
    parse(text);
    return true;
  } catch {
    return false;
  }
}
