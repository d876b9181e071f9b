/**
 * The test cluster's PKI, made with the openssl CLI.
 *
 * Contract:
 * - One CA signs: a serving cert for the API server (SANs 127.0.0.1, localhost, kubernetes,
 *   kubernetes.default, kubernetes.default.svc, 10.96.0.1 = first IP of the service range) and an admin
 *   client cert (CN=devctl-admin, O=system:masters), and the API server's client cert for kubelets.
 *   An RSA key pair signs service-account tokens.
 * - A second CA, the front proxy's (the aggregation layer, as kubeadm's front-proxy-ca), signs the client cert the
 *   API server presents to extension API servers (CN=front-proxy-client), which they trust for X-Remote-* headers.
 * - signCert(): a further cert from a CA here (e.g. an extension API server's serving cert).
 * - Files are PEM, under the given directory, with the names in `pkiFiles()`; keys are mode 0600.
 * - Valid for 10 years; recreated with every fresh cluster (`down` deletes them).
 */
import { chmod, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { run } from "./processes.ts";

export interface PkiFiles {
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  adminCert: string;
  adminKey: string;
  /** The API server's client cert towards kubelets (logs, exec, port-forward, node proxy). */
  kubeletClientCert: string;
  kubeletClientKey: string;
  /** Signs service-account tokens (kube-apiserver --service-account-signing-key-file). */
  saKey: string;
  /** Verifies them (--service-account-key-file). */
  saPub: string;
  /** The aggregation layer: --requestheader-client-ca-file and --proxy-client-cert-file/--proxy-client-key-file. */
  frontProxyCaCert: string;
  frontProxyCaKey: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
}

export const SERVER_SANS = [
  "IP:127.0.0.1",
  "DNS:localhost",
  "DNS:kubernetes",
  "DNS:kubernetes.default",
  "DNS:kubernetes.default.svc",
  "IP:10.96.0.1",
];
export const ADMIN_SUBJECT = "/O=system:masters/CN=devctl-admin";
/** Authorized by the kubelet's webhook (SubjectAccessReview) like kubeadm's apiserver-kubelet-client. */
export const KUBELET_CLIENT_SUBJECT = "/O=system:masters/CN=kube-apiserver-kubelet-client";
/** The name extension API servers accept the aggregator's requests from (--requestheader-allowed-names). */
export const FRONT_PROXY_CLIENT_CN = "front-proxy-client";
const DAYS = "3650";

export function pkiFiles(dir: string): PkiFiles {
  const f = (name: string) => join(dir, name);
  return {
    caCert: f("ca.crt"),
    caKey: f("ca.key"),
    serverCert: f("apiserver.crt"),
    serverKey: f("apiserver.key"),
    adminCert: f("admin.crt"),
    adminKey: f("admin.key"),
    kubeletClientCert: f("apiserver-kubelet-client.crt"),
    kubeletClientKey: f("apiserver-kubelet-client.key"),
    saKey: f("sa.key"),
    saPub: f("sa.pub"),
    frontProxyCaCert: f("front-proxy-ca.crt"),
    frontProxyCaKey: f("front-proxy-ca.key"),
    frontProxyClientCert: f("front-proxy-client.crt"),
    frontProxyClientKey: f("front-proxy-client.key"),
  };
}

export async function createPki(dir: string): Promise<PkiFiles> {
  await mkdir(dir, { recursive: true });
  const p = pkiFiles(dir);
  await Promise.all([
    selfSignedCa(p.caCert, p.caKey, "/CN=devctl-test-ca"),
    selfSignedCa(p.frontProxyCaCert, p.frontProxyCaKey, "/CN=devctl-test-front-proxy-ca"),
  ]);
  const ca = { cert: p.caCert, key: p.caKey };
  await Promise.all([
    signCert(dir, ca, "apiserver", "/CN=kube-apiserver", [
      `subjectAltName=${SERVER_SANS.join(",")}`,
      "extendedKeyUsage=serverAuth",
    ]),
    signCert(dir, ca, "admin", ADMIN_SUBJECT, ["extendedKeyUsage=clientAuth"]),
    signCert(dir, ca, "apiserver-kubelet-client", KUBELET_CLIENT_SUBJECT, ["extendedKeyUsage=clientAuth"]),
    signCert(
      dir,
      { cert: p.frontProxyCaCert, key: p.frontProxyCaKey },
      "front-proxy-client",
      `/CN=${FRONT_PROXY_CLIENT_CN}`,
      ["extendedKeyUsage=clientAuth"],
    ),
    run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", p.saKey]),
  ]);
  await run(["openssl", "pkey", "-in", p.saKey, "-pubout", "-out", p.saPub]);
  const keys = [
    p.caKey,
    p.serverKey,
    p.adminKey,
    p.kubeletClientKey,
    p.saKey,
    p.frontProxyCaKey,
    p.frontProxyClientKey,
  ];
  await Promise.all(keys.map((k) => chmod(k, 0o600)));
  return p;
}

async function selfSignedCa(cert: string, key: string, subject: string): Promise<void> {
  await run([
    "openssl",
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    DAYS,
    "-keyout",
    key,
    "-out",
    cert,
    "-subj",
    subject,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
  ]);
}

/** A random positive 127-bit serial, so certs can be signed in parallel without a shared serial file. */
function serial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

/** Signs `<dir>/<name>.crt` (key `<name>.key`, mode 0600) with the CA `ca`, with extra X.509v3 extension lines. */
export async function signCert(
  dir: string,
  ca: { cert: string; key: string },
  name: string,
  subject: string,
  ext: string[],
): Promise<void> {
  const key = join(dir, `${name}.key`);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  await Bun.write(
    extFile,
    ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment", ...ext].join("\n") +
      "\n",
  );
  await run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subject]);
  await run([
    "openssl",
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    ca.cert,
    "-CAkey",
    ca.key,
    "-set_serial",
    serial(),
    "-days",
    DAYS,
    "-sha256",
    "-extfile",
    extFile,
    "-out",
    join(dir, `${name}.crt`),
  ]);
  await chmod(key, 0o600);
}
