/**
 * A serving certificate from a directory (`--metrics-cert-dir`), with controller-runtime's file names: tls.crt
 * (the certificate, then any intermediates) and tls.key (its private key, PEM), as a kubernetes.io/tls Secret
 * mounts them (cert-manager writes such Secrets).
 *
 * Properties:
 * - `loadCertDir` reads and checks both files before anything is served: each missing, unreadable or unparsable
 *   file, a key that does not belong to the certificate, and a certificate past its notAfter are errors that name
 *   the file and what to do.
 * - `watchCertDir` looks at both files every `everyMs` (controller-runtime's certwatcher re-reads every 10 s) and
 *   hands a changed, valid pair to `onChange`; a changed pair that fails the checks is logged and the one being
 *   served is kept (a Secret update writes the two files one after the other).
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Clock, repeatJittered } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import type { PemPair } from "./self-signed.ts";
import { messageOf } from "../kube/errors.ts";

export const CERT_FILE = "tls.crt";
export const KEY_FILE = "tls.key";
export const CERT_POLL_MS = 10_000;

export class CertDirError extends Error {
  override readonly name = "CertDirError";
}

function read(dir: string, file: string): string {
  try {
    return readFileSync(join(dir, file), "utf8");
  } catch (e) {
    throw new CertDirError(
      `--metrics-cert-dir ${dir}: cannot read ${file} (${messageOf(e)}); ` +
        `put the serving certificate in ${CERT_FILE} and its key in ${KEY_FILE}, or leave the flag out for a self-signed one`,
    );
  }
}

export function loadCertDir(dir: string, now: Date = new Date()): PemPair {
  const cert = read(dir, CERT_FILE);
  const key = read(dir, KEY_FILE);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (e) {
    throw new CertDirError(`--metrics-cert-dir ${dir}: ${CERT_FILE} is not a PEM certificate (${messageOf(e)})`);
  }
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new CertDirError(`--metrics-cert-dir ${dir}: ${KEY_FILE} is not a PEM private key (${messageOf(e)})`);
  }
  if (!x509.checkPrivateKey(privateKey))
    throw new CertDirError(`--metrics-cert-dir ${dir}: ${KEY_FILE} is not the key of the certificate in ${CERT_FILE}`);
  if (new Date(x509.validTo).getTime() <= now.getTime())
    throw new CertDirError(
      `--metrics-cert-dir ${dir}: the certificate in ${CERT_FILE} expired on ${x509.validTo}; renew it`,
    );
  return { cert, key };
}

/** Size and modification time of both files; "" for one that cannot be read right now. */
function fingerprint(dir: string): string {
  return [CERT_FILE, KEY_FILE]
    .map((f) => {
      try {
        const s = statSync(join(dir, f));
        return `${s.size}@${s.mtimeMs}@${s.ino}`;
      } catch {
        return "";
      }
    })
    .join("|");
}

/** Returns the stop function. */
export function watchCertDir(
  dir: string,
  o: { clock: Clock; logger: Logger; onChange: (pair: PemPair) => void | Promise<void>; everyMs?: number },
): () => void {
  let seen = fingerprint(dir);
  return repeatJittered(o.clock, { everyMs: o.everyMs ?? CERT_POLL_MS }, () => {
    const now = fingerprint(dir);
    if (now === seen) return;
    let pair: PemPair;
    try {
      pair = loadCertDir(dir, new Date(o.clock.now()));
    } catch (e) {
      o.logger.error(`keeping the certificate being served: ${messageOf(e)}`);
      return;
    }
    seen = now;
    Promise.resolve(o.onChange(pair)).catch((e: unknown) =>
      o.logger.error(`serving the new certificate from ${dir} failed: ${messageOf(e)}`),
    );
  });
}
