/**
 * Test-only: a throwaway PKI made with openssl (CA, server cert for 127.0.0.1/localhost, client cert)
 * and a kubeconfig writer, so transport tests prove that TLS settings really reach the wire.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Pki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing the server uses. */
  otherCa: string;
}

function openssl(dir: string, args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr.toString()}`);
}

export function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), "devctl-pki-"));
  const o = (...a: string[]) => openssl(dir, a);
  o(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "2",
    "-subj",
    "/CN=test-ca",
  );
  o(
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "other.key",
    "-out",
    "other.crt",
    "-days",
    "2",
    "-subj",
    "/CN=other-ca",
  );
  writeFileSync(join(dir, "san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  o("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost");
  o(
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.crt",
    "-days",
    "2",
    "-extfile",
    "san.ext",
  );
  writeFileSync(join(dir, "client.ext"), "extendedKeyUsage=clientAuth\n");
  o(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "client.key",
    "-out",
    "client.csr",
    "-subj",
    "/O=system:masters/CN=tester",
  );
  o(
    "x509",
    "-req",
    "-in",
    "client.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "client.crt",
    "-days",
    "2",
    "-extfile",
    "client.ext",
  );
  const r = (f: string) => readFileSync(join(dir, f), "utf8");
  return {
    dir,
    ca: r("ca.crt"),
    serverCert: r("server.crt"),
    serverKey: r("server.key"),
    clientCert: r("client.crt"),
    clientKey: r("client.key"),
    otherCa: r("other.crt"),
  };
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

export interface KubeconfigUser {
  token?: string;
  clientCert?: string;
  clientKey?: string;
  exec?: { command: string; args: string[] };
}

/** Writes a kubeconfig with one context "test" (and a second "other" pointing at port 1). */
export function writeKubeconfig(
  dir: string,
  file: string,
  server: string,
  opts: { ca?: string; insecure?: boolean; user: KubeconfigUser; namespace?: string },
): string {
  const cluster = [
    `    server: ${server}`,
    opts.ca ? `    certificate-authority-data: ${b64(opts.ca)}` : "",
    opts.insecure ? "    insecure-skip-tls-verify: true" : "",
  ].filter(Boolean);
  const u = opts.user;
  const user = [
    u.token ? `    token: ${u.token}` : "",
    u.clientCert ? `    client-certificate-data: ${b64(u.clientCert)}` : "",
    u.clientKey ? `    client-key-data: ${b64(u.clientKey)}` : "",
    u.exec
      ? `    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: ${u.exec.command}\n      args: [${u.exec.args.map((a) => JSON.stringify(a)).join(", ")}]\n      interactiveMode: Never`
      : "",
  ].filter(Boolean);
  const text = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
${cluster.join("\n")}
- name: dead
  cluster:
    server: https://127.0.0.1:1
users:
- name: u
  user:
${user.join("\n") || "    {}"}
contexts:
- name: test
  context: {cluster: c, user: u${opts.namespace ? `, namespace: ${opts.namespace}` : ""}}
- name: other
  context: {cluster: dead, user: u}
current-context: test
`;
  const path = join(dir, file);
  writeFileSync(path, text);
  return path;
}
