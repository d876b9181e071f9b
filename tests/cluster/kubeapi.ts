/**
 * Just enough of a Kubernetes API client to bring the test cluster up: Bun fetch with mutual TLS
 * (the admin client cert), JSON in and out. Not for tests of the product (they use src/kube).
 *
 * Contract:
 * - apiRequest never throws for HTTP statuses: it returns { status, body }; a network error or a
 *   timeout returns status 0 with the message as body.
 * - kubeconfigYaml: client-certificate auth with embedded certs, context and cluster `devctl-test`.
 */
import { messageOf } from "../../src/kube/errors.ts";
import type { PkiFiles } from "./pki.ts";

export interface ApiEndpoint {
  server: string;
  ca: string;
  cert: string;
  key: string;
}

export interface ApiResponse {
  status: number;
  /** Parsed JSON when the answer is JSON, else the raw text; inspected loosely by the bring-up checks. */
  body: any;
}

export const CONTEXT = "devctl-test";

export async function loadEndpoint(server: string, pki: PkiFiles): Promise<ApiEndpoint> {
  const [ca, cert, key] = await Promise.all([pki.caCert, pki.adminCert, pki.adminKey].map((f) => Bun.file(f).text()));
  return { server, ca: ca ?? "", cert: cert ?? "", key: key ?? "" };
}

export async function apiRequest(
  ep: ApiEndpoint,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 10_000,
): Promise<ApiResponse> {
  try {
    const res = await fetch(`${ep.server}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      tls: { ca: ep.ca, cert: ep.cert, key: ep.key },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // /readyz and friends answer plain text
    }
    return { status: res.status, body: parsed };
  } catch (err) {
    return { status: 0, body: messageOf(err) };
  }
}

export async function isApiReady(ep: ApiEndpoint, timeoutMs = 3_000): Promise<boolean> {
  const res = await apiRequest(ep, "GET", "/readyz", undefined, timeoutMs);
  return res.status === 200;
}

export function kubeconfigYaml(ep: ApiEndpoint): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return `apiVersion: v1
kind: Config
clusters:
- name: ${CONTEXT}
  cluster:
    server: ${ep.server}
    certificate-authority-data: ${b64(ep.ca)}
users:
- name: devctl-admin
  user:
    client-certificate-data: ${b64(ep.cert)}
    client-key-data: ${b64(ep.key)}
contexts:
- name: ${CONTEXT}
  context:
    cluster: ${CONTEXT}
    user: devctl-admin
    namespace: default
current-context: ${CONTEXT}
`;
}
