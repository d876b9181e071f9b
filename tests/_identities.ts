/**
 * Kubeconfigs for identities other than the test admin, for suites about credentials and permissions
 * (bad-input, log-secrecy, rbac).
 *
 * - `adminConnection()`: the server URL, CA (PEM) and client certificate/key (PEM) of the test kubeconfig.
 * - `tokenFor(sa, ns)`: a TokenRequest token (kubectl create token, 1 h) for a ServiceAccount.
 * - `expiredTokenFor(sa, ns)`: that token with its times moved an hour into the past and signed again
 *   with the local cluster's service-account key: a genuine, expired token (the TokenRequest API
 *   refuses lifetimes under 10 minutes). Undefined on an external cluster only (no key to sign with:
 *   the suites register those cases with `testWhen(SIGNING_KEY)`); throws if the local one has none.
 * - `kubeconfigYaml(...)`: a one-context kubeconfig (token or client certificate; CA or skip-verify).
 * - `ServiceAccount` setup is the caller's: `createServiceAccount(name, ns)`.
 * - `bindMetricsReader(binding, sa, ns)`: binds a ServiceAccount to install's devctl-metrics-reader ClusterRole (who
 *   may scrape the operator's secure /metrics); resolves to the function that deletes the binding.
 */
import { createSign } from "node:crypto";
import { readFileSync } from "node:fs";
import { clusterState } from "./cluster/control.ts";
import { usingLocalCluster } from "./cluster/env.ts";
import { kubectl } from "./_kubectl.ts";
import type { Prerequisite } from "./_skip.ts";
import { METRICS_READER_ROLE } from "../src/install/rbac.ts";
import { CLUSTER_ROLE_BINDINGS } from "../src/kube/resources.ts";
import { SERVICEACCOUNTS, kube, kubeconfig } from "./_support.ts";

export interface AdminConnection {
  server: string;
  ca: string;
  /** PEM, when the test kubeconfig authenticates by client certificate. */
  cert?: string;
  key?: string;
}

type Named<T> = { name: string } & T;
interface RawKubeconfig {
  clusters: Named<{ cluster: Record<string, string> }>[];
  users: Named<{ user: Record<string, string> }>[];
}

export function adminConnection(): AdminConnection {
  const cfg = Bun.YAML.parse(readFileSync(kubeconfig, "utf8")) as RawKubeconfig;
  const c = cfg.clusters[0]!.cluster;
  const u = cfg.users[0]?.user ?? {};
  const pem = (data?: string, file?: string) =>
    data ? Buffer.from(data, "base64").toString("utf8") : file ? readFileSync(file, "utf8") : undefined;
  const cert = pem(u["client-certificate-data"], u["client-certificate"]);
  const key = pem(u["client-key-data"], u["client-key"]);
  return {
    server: c.server as string,
    ca: pem(c["certificate-authority-data"], c["certificate-authority"]) ?? "",
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
  };
}

export async function createServiceAccount(name: string, namespace: string): Promise<void> {
  await kube.create(SERVICEACCOUNTS, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } });
}

export async function bindMetricsReader(binding: string, sa: string, namespace: string): Promise<() => Promise<void>> {
  await kube.create(CLUSTER_ROLE_BINDINGS, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: binding },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: METRICS_READER_ROLE },
    subjects: [{ kind: "ServiceAccount", name: sa, namespace }],
  });
  return () =>
    kube.delete(CLUSTER_ROLE_BINDINGS, binding).then(
      () => {},
      () => {},
    );
}

export function tokenFor(sa: string, namespace: string): string {
  const r = kubectl(["create", "token", sa, "-n", namespace, "--duration=1h"]);
  if (r.code !== 0) throw new Error(`kubectl create token ${sa}: ${r.stderr}`);
  return r.stdout.trim();
}

export async function expiredTokenFor(sa: string, namespace: string): Promise<string | undefined> {
  if (!usingLocalCluster()) return undefined;
  const state = await clusterState();
  const flag = "--service-account-signing-key-file=";
  const keyFile = state?.components["kube-apiserver"]?.argv.find((a) => a.startsWith(flag))?.slice(flag.length);
  // On the local control plane the key must be there: a missing one is a broken setup, not a reason to skip.
  if (!keyFile) throw new Error(`the local kube-apiserver has no ${flag}: cannot sign an expired token`);
  const [header, payload] = tokenFor(sa, namespace).split(".");
  const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
  const now = Math.floor(Date.now() / 1000);
  Object.assign(claims, { iat: now - 7200, nbf: now - 7200, exp: now - 3600 });
  const body = `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}`;
  const signature = createSign("RSA-SHA256").update(body).sign(readFileSync(keyFile, "utf8")).toString("base64url");
  return `${body}.${signature}`;
}

export interface KubeconfigAuth {
  ca?: string;
  insecure?: boolean;
  token?: string;
  cert?: string;
  key?: string;
}

export function kubeconfigYaml(server: string, context: string, auth: KubeconfigAuth): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const cluster: Record<string, unknown> = { server };
  if (auth.ca) cluster["certificate-authority-data"] = b64(auth.ca);
  if (auth.insecure) cluster["insecure-skip-tls-verify"] = true;
  const user: Record<string, unknown> = {};
  if (auth.token) user.token = auth.token;
  if (auth.cert) user["client-certificate-data"] = b64(auth.cert);
  if (auth.key) user["client-key-data"] = b64(auth.key);
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user }],
    contexts: [{ name: context, context: { cluster: "c", user: "u", namespace: "default" } }],
    "current-context": context,
  });
}

/** Expired tokens are signed with the local control plane's service-account key. */
export const SIGNING_KEY: Prerequisite = {
  met: usingLocalCluster(),
  reason:
    "an expired token is signed with the local control plane's service-account key, which an external cluster (DEVCTL_TEST_KUBECONFIG) does not share",
};
