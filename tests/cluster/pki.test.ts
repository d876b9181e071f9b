import { afterAll, expect, test } from "bun:test";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPki } from "./pki.ts";
import { run } from "./processes.ts";

const dir = await mkdtemp(join(tmpdir(), "devctl-pki-"));
const pki = await createPki(dir);
afterAll(() => rm(dir, { recursive: true, force: true }));

const text = (cert: string) => run(["openssl", "x509", "-in", cert, "-noout", "-text"]);

test("the API server cert is signed by the CA and names every address clients use", async () => {
  expect(await run(["openssl", "verify", "-CAfile", pki.caCert, pki.serverCert])).toContain("OK");
  const t = await text(pki.serverCert);
  for (const san of [
    "IP Address:127.0.0.1",
    "DNS:localhost",
    "DNS:kubernetes.default.svc",
    "DNS:kubernetes.default",
    "DNS:kubernetes",
    "IP Address:10.96.0.1",
  ]) {
    expect(t).toContain(san);
  }
  expect(t).toContain("TLS Web Server Authentication");
});

test("the admin cert is a client cert in group system:masters", async () => {
  expect(await run(["openssl", "verify", "-CAfile", pki.caCert, pki.adminCert])).toContain("OK");
  const subject = await run(["openssl", "x509", "-in", pki.adminCert, "-noout", "-subject"]);
  expect(subject).toContain("O = system:masters");
  expect(subject).toContain("CN = devctl-admin");
  expect(await text(pki.adminCert)).toContain("TLS Web Client Authentication");
});

test("the service-account public key matches its private key, and private keys are owner-only", async () => {
  const derived = await run(["openssl", "pkey", "-in", pki.saKey, "-pubout"]);
  expect(derived).toBe(await Bun.file(pki.saPub).text());
  for (const key of [pki.caKey, pki.serverKey, pki.adminKey, pki.saKey]) {
    expect((await stat(key)).mode & 0o077).toBe(0);
  }
});

test("the front proxy's client cert is signed by its own CA, not the cluster CA, and names front-proxy-client", async () => {
  expect(await run(["openssl", "verify", "-CAfile", pki.frontProxyCaCert, pki.frontProxyClientCert])).toContain("OK");
  await expect(run(["openssl", "verify", "-CAfile", pki.caCert, pki.frontProxyClientCert])).rejects.toThrow();
  const subject = await run(["openssl", "x509", "-in", pki.frontProxyClientCert, "-noout", "-subject"]);
  expect(subject).toContain("CN = front-proxy-client");
  expect(await text(pki.frontProxyClientCert)).toContain("TLS Web Client Authentication");
  for (const key of [pki.frontProxyCaKey, pki.frontProxyClientKey]) expect((await stat(key)).mode & 0o077).toBe(0);
});
