import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFakeClock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import { CERT_POLL_MS, loadCertDir, watchCertDir } from "./cert-dir.ts";
import { type PemPair, selfSignedCert } from "./self-signed.ts";

const a = await selfSignedCert({ commonName: "a", hosts: ["localhost"] });
const b = await selfSignedCert({ commonName: "b", hosts: ["localhost"] });

function dirWith(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "devctl-certdir-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("loadCertDir", () => {
  test("reads tls.crt and tls.key", () => {
    const dir = dirWith({ "tls.crt": a.cert, "tls.key": a.key });
    expect(loadCertDir(dir)).toEqual(a);
    rmSync(dir, { recursive: true });
  });

  test("each bad directory is refused naming the file and what to do", () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ "tls.key": a.key }, /cannot read tls\.crt .*put the serving certificate in tls\.crt and its key in tls\.key/],
      [{ "tls.crt": a.cert }, /cannot read tls\.key/],
      [{ "tls.crt": "hello", "tls.key": a.key }, /tls\.crt is not a PEM certificate/],
      [{ "tls.crt": a.cert, "tls.key": "hello" }, /tls\.key is not a PEM private key/],
      [{ "tls.crt": a.cert, "tls.key": b.key }, /tls\.key is not the key of the certificate in tls\.crt/],
    ];
    for (const [files, message] of cases) {
      const dir = dirWith(files);
      expect(() => loadCertDir(dir)).toThrow(message);
      rmSync(dir, { recursive: true });
    }
  });

  test("an expired certificate is refused with its date", () => {
    const dir = dirWith({ "tls.crt": a.cert, "tls.key": a.key });
    expect(() => loadCertDir(dir, new Date(Date.now() + 400 * 86_400_000))).toThrow(/expired on .*; renew it/);
    rmSync(dir, { recursive: true });
  });
});

describe("watchCertDir", () => {
  test("hands over a changed, valid pair at the next look, and keeps the served one while the pair is broken", async () => {
    const dir = dirWith({ "tls.crt": a.cert, "tls.key": a.key });
    const clock = createFakeClock(Date.now());
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (m) => void errors.push(m) };
    const seen: PemPair[] = [];
    const stop = watchCertDir(dir, { clock, logger, onChange: (p) => void seen.push(p) });
    await clock.advance(CERT_POLL_MS);
    expect(seen).toEqual([]);
    writeFileSync(join(dir, "tls.crt"), b.cert); // the key is not b's yet
    await clock.advance(CERT_POLL_MS);
    expect(seen).toEqual([]);
    expect(errors.join("\n")).toContain("keeping the certificate being served");
    writeFileSync(join(dir, "tls.key"), b.key);
    await clock.advance(CERT_POLL_MS);
    expect(seen).toEqual([b]);
    await clock.advance(CERT_POLL_MS);
    expect(seen).toEqual([b]);
    stop();
    expect(clock.pendingTimers()).toBe(0);
    rmSync(dir, { recursive: true });
  });
});
