/**
 * The test cluster's PKI, made with the openssl CLI.
 *
 * Contract:
 * - One CA signs: a serving cert for the API server (SANs 127.0.0.1, localhost, kubernetes,
 *   kubernetes.default, kubernetes.default.svc, 10.96.0.1 = first IP of the service range) and an admin
 *   client cert (CN=devctl-admin, O=system:masters), and the API server's client cert for kubelets.
 *   An RSA key pair signs service-account tokens.
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
  };
}

export async function createPki(dir: string): Promise<PkiFiles> {
  await mkdir(dir, { recursive: true });
  const p = pkiFiles(dir);
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
    p.caKey,
    "-out",
    p.caCert,
    "-subj",
    "/CN=devctl-test-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
  ]);
  await Promise.all([
    signedCert(dir, p, "apiserver", "/CN=kube-apiserver", [
      `subjectAltName=${SERVER_SANS.join(",")}`,
      "extendedKeyUsage=serverAuth",
    ]),
    signedCert(dir, p, "admin", ADMIN_SUBJECT, ["extendedKeyUsage=clientAuth"]),
    signedCert(dir, p, "apiserver-kubelet-client", KUBELET_CLIENT_SUBJECT, ["extendedKeyUsage=clientAuth"]),
    run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", p.saKey]),
  ]);
  await run(["openssl", "pkey", "-in", p.saKey, "-pubout", "-out", p.saPub]);
  await Promise.all([p.caKey, p.serverKey, p.adminKey, p.kubeletClientKey, p.saKey].map((k) => chmod(k, 0o600)));
  return p;
}

/** A random positive 127-bit serial, so certs can be signed in parallel without a shared serial file. */
function serial(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return `0x${Buffer.from(bytes).toString("hex")}`;
}

async function signedCert(dir: string, p: PkiFiles, name: string, subject: string, ext: string[]): Promise<void> {
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
    p.caCert,
    "-CAkey",
    p.caKey,
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
}
