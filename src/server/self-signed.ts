/**
 * A self-signed serving certificate made at start, for HTTPS without a --metrics-cert-dir (controller-runtime's
 * secure metrics server does the same). Node and Bun have no X.509 writer, so this is a small DER encoder and
 * WebCrypto's ECDSA P-256: no dependency, nothing written to disk (the root filesystem is read-only).
 *
 * Properties:
 * - An X.509 v3 certificate (RFC 5280) signed by its own key (ecdsa-with-SHA256), subject and issuer
 *   CN=<commonName>, valid from one hour ago (clock skew) for VALIDITY_DAYS, a random positive 128-bit serial.
 * - Extensions: basicConstraints CA:FALSE and keyUsage digitalSignature (both critical), extKeyUsage serverAuth,
 *   subjectAltName with every name of `hosts` (IP addresses as iPAddress, the rest as dNSName).
 * - The key is returned as PKCS#8 PEM ("PRIVATE KEY"), the certificate as PEM; both as Bun.serve's `tls` takes them.
 */
import { isIP } from "node:net";

export const VALIDITY_DAYS = 365;

export interface PemPair {
  cert: string;
  key: string;
}

// DER: tag, definite length, contents.
function tlv(tag: number, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const n = body.length;
  const len = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  const out = new Uint8Array(1 + len.length + n);
  out.set([tag, ...len]);
  out.set(body, 1 + len.length);
  return out;
}
const concat = (...parts: Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};
const seq = (...parts: Uint8Array[]) => tlv(0x30, concat(...parts));
const set = (...parts: Uint8Array[]) => tlv(0x31, concat(...parts));
const utf8 = (s: string) => tlv(0x0c, new TextEncoder().encode(s));
const bitString = (bytes: Uint8Array) => tlv(0x03, concat(new Uint8Array([0]), bytes));
const octets = (bytes: Uint8Array) => tlv(0x04, bytes);
const TRUE = new Uint8Array([0x01, 0x01, 0xff]);

/** An unsigned big-endian integer: leading zeros dropped, a 0x00 prepended when the high bit is set. */
function uint(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const v = bytes.subarray(i);
  return tlv(0x02, (v[0] ?? 0) & 0x80 ? concat(new Uint8Array([0]), v) : v);
}

function oid(dotted: string): Uint8Array {
  const [a = 0, b = 0, ...rest] = dotted.split(".").map(Number);
  const out = [40 * a + b];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, new Uint8Array(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Uint8Array {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050 ? tlv(0x17, ascii(`${iso.slice(2)}Z`)) : tlv(0x18, ascii(`${iso}Z`));
}
const ascii = (s: string) => new TextEncoder().encode(s);

function ipBytes(ip: string): Uint8Array {
  if (isIP(ip) === 4) return new Uint8Array(ip.split(".").map(Number));
  const [head = "", tail = ""] = ip.split("::");
  const groups = (s: string) => (s ? s.split(":").map((g) => Number.parseInt(g, 16)) : []);
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill(0), ...t] : h;
  return new Uint8Array(all.flatMap((g) => [g >> 8, g & 0xff]));
}

function extensions(hosts: string[]): Uint8Array {
  const ext = (id: string, critical: boolean, value: Uint8Array) =>
    seq(oid(id), ...(critical ? [TRUE] : []), octets(value));
  const names = hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, ascii(h))));
  return tlv(
    0xa3,
    seq(
      ext("2.5.29.19", true, seq()), // basicConstraints: CA false
      ext("2.5.29.15", true, tlv(0x03, new Uint8Array([0x07, 0x80]))), // keyUsage: digitalSignature
      ext("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))), // extKeyUsage: serverAuth
      ext("2.5.29.17", false, seq(...names)), // subjectAltName
    ),
  );
}

const pem = (label: string, der: Uint8Array): string =>
  `-----BEGIN ${label}-----\n${Buffer.from(der)
    .toString("base64")
    .replace(/.{64}/g, "$&\n")
    .replace(/\n?$/, "\n")}-----END ${label}-----\n`;

/** WebCrypto's ECDSA signature is r‖s (32 bytes each); X.509 wants SEQUENCE { INTEGER r, INTEGER s }. */
const derSignature = (raw: Uint8Array): Uint8Array => seq(uint(raw.subarray(0, 32)), uint(raw.subarray(32)));

export async function selfSignedCert(o: { commonName: string; hosts: string[]; now?: Date }): Promise<PemPair> {
  const now = o.now ?? new Date();
  const keys = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, ["sign", "verify"]);
  const spki = new Uint8Array(await crypto.subtle.exportKey("spki", keys.publicKey));
  const serial = crypto.getRandomValues(new Uint8Array(16));
  serial[0] = (serial[0] ?? 0) & 0x7f || 0x01;
  const ecdsaWithSha256 = seq(oid("1.2.840.10045.4.3.2"));
  const name = seq(set(seq(oid("2.5.4.3"), utf8(o.commonName))));
  const tbs = seq(
    tlv(0xa0, uint(new Uint8Array([2]))), // version v3
    uint(serial),
    ecdsaWithSha256,
    name,
    seq(time(new Date(now.getTime() - 3600_000)), time(new Date(now.getTime() + VALIDITY_DAYS * 86_400_000))),
    name,
    spki,
    extensions(o.hosts),
  );
  const raw = new Uint8Array(await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, keys.privateKey, tbs));
  const cert = seq(tbs, ecdsaWithSha256, bitString(derSignature(raw)));
  const pkcs8 = new Uint8Array(await crypto.subtle.exportKey("pkcs8", keys.privateKey));
  return { cert: pem("CERTIFICATE", cert), key: pem("PRIVATE KEY", pkcs8) };
}
