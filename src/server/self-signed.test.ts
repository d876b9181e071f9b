import { describe, expect, test } from "bun:test";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { selfSignedCert, VALIDITY_DAYS } from "./self-signed.ts";

describe("selfSignedCert", () => {
  const now = new Date("2026-12-05T12:00:00Z");
  const made = selfSignedCert({ commonName: "devctl-operator-metrics", hosts: ["localhost", "127.0.0.1", "::1"], now });

  test("is an X.509 certificate signed by its own key, for its names, valid from an hour ago for a year", async () => {
    const { cert, key } = await made;
    const x = new X509Certificate(cert);
    expect(x.subject).toBe("CN=devctl-operator-metrics");
    expect(x.issuer).toBe("CN=devctl-operator-metrics");
    expect(x.subjectAltName).toBe("DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    expect(new Date(x.validFrom).getTime()).toBe(now.getTime() - 3600_000);
    expect(new Date(x.validTo).getTime()).toBe(now.getTime() + VALIDITY_DAYS * 86_400_000);
    expect(x.verify(x.publicKey)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.ca).toBe(false);
    expect(x.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]);
  });

  test("openssl reads it as a v3 ECDSA P-256 server certificate", async () => {
    const { cert } = await made;
    const r = Bun.spawnSync(["openssl", "x509", "-noout", "-text"], { stdin: new TextEncoder().encode(cert) });
    const text = r.stdout.toString();
    expect(r.exitCode).toBe(0);
    for (const line of ["Version: 3 (0x2)", "ecdsa-with-SHA256", "NIST CURVE: P-256", "CA:FALSE", "Digital Signature"])
      expect(text).toContain(line);
    expect(text).toContain("TLS Web Server Authentication");
  });

  test("a TLS client that trusts it verifies a server for 127.0.0.1 that serves it", async () => {
    const pair = await selfSignedCert({ commonName: "t", hosts: ["127.0.0.1"] });
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: pair, fetch: () => new Response("ok") });
    try {
      const res = await fetch(`https://127.0.0.1:${server.port}/`, { tls: { ca: pair.cert } });
      expect(await res.text()).toBe("ok");
      const other = await selfSignedCert({ commonName: "t", hosts: ["127.0.0.1"] });
      await expect(
        fetch(`https://127.0.0.1:${server.port}/`, { tls: { ca: other.cert }, keepalive: false }),
      ).rejects.toThrow();
    } finally {
      await server.stop(true);
    }
  });

  test("two certificates never share a key or a serial number", async () => {
    const [a, b] = await Promise.all([made, selfSignedCert({ commonName: "x", hosts: ["localhost"], now })]);
    expect(a.key).not.toBe(b.key);
    expect(new X509Certificate(a.cert).serialNumber).not.toBe(new X509Certificate(b.cert).serialNumber);
  });
});
