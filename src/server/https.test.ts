import { afterEach, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import { createFakeClock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import { type RunningSecureServer, startSecureServer } from "./https.ts";
import { createRequestAuth } from "./request-auth.ts";
import { type PemPair, selfSignedCert } from "./self-signed.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const pair = await selfSignedCert({ commonName: "test", hosts: ["127.0.0.1"] });
const auth = createRequestAuth({
  authenticate: async (t) => (t === "reader" || t === "bob" ? { username: t } : undefined),
  authorize: async (u) => ({ allowed: u.username === "reader" }),
  clock: createFakeClock(),
  logger: quiet,
});

let running: RunningSecureServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.stop()));
  running = [];
});

async function start(o: { http2?: boolean; tls?: PemPair } = {}): Promise<RunningSecureServer> {
  const s = await startSecureServer({
    hostname: "127.0.0.1",
    port: 0,
    tls: o.tls ?? pair,
    auth,
    metrics: () => "up 1\n",
    logger: quiet,
    ...(o.http2 ? { http2: true } : {}),
  });
  running.push(s);
  return s;
}

const get = (url: string, token?: string, init: RequestInit = {}) =>
  fetch(url, {
    ...init,
    keepalive: false,
    tls: { ca: pair.cert },
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

/** The protocol openssl's TLS client agrees on when it offers h2 and http/1.1 (ALPN), or "none". */
async function alpn(port: number): Promise<string> {
  const p = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, "-alpn", "h2,http/1.1"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = (await new Response(p.stdout).text()) + (await new Response(p.stderr).text());
  await p.exited;
  if (out.includes("No ALPN negotiated")) return "none";
  const m = /ALPN protocol: (\S+)/.exec(out);
  if (!m) throw new Error(`openssl s_client said neither: ${out}`);
  return m[1] as string;
}

describe.each([false, true])("the secure metrics server (http2: %p)", (h2) => {
  test("serves /metrics over HTTPS to an allowed token only: 401 without one, 403 without access", async () => {
    const s = await start({ http2: h2 });
    expect(s.url).toBe(`https://127.0.0.1:${s.port}`);
    const ok = await get(`${s.url}/metrics`, "reader");
    expect([ok.status, ok.headers.get("content-type"), await ok.text()]).toEqual([
      200,
      "text/plain; version=0.0.4; charset=utf-8",
      "up 1\n",
    ]);
    const none = await get(`${s.url}/metrics`);
    expect([none.status, await none.text()]).toEqual([401, "Unauthorized\n"]);
    expect((await get(`${s.url}/metrics`, "garbage")).status).toBe(401);
    const bob = await get(`${s.url}/metrics`, "bob");
    expect([bob.status, await bob.text()]).toEqual([403, "Authorization denied for user bob\n"]);
  });

  test("checks the token before anything else, then serves /metrics only", async () => {
    const s = await start({ http2: h2 });
    expect((await get(`${s.url}/healthz`)).status).toBe(401);
    expect((await get(`${s.url}/healthz`, "reader")).status).toBe(404);
    const head = await get(`${s.url}/metrics`, "reader", { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  test("a new certificate is served from the next connection on", async () => {
    const s = await start({ http2: h2 });
    const next = await selfSignedCert({ commonName: "next", hosts: ["127.0.0.1"] });
    await s.reload(next);
    const res = await fetch(`${s.url}/metrics`, {
      keepalive: false,
      tls: { ca: next.cert },
      headers: { authorization: "Bearer reader" },
    });
    expect(res.status).toBe(200);
    await expect(get(`${s.url}/metrics`, "reader")).rejects.toThrow();
  });
});

describe("HTTP/2", () => {
  test("is not negotiated by default: a client offering h2 gets no ALPN protocol, so HTTP/1.1", async () => {
    const s = await start();
    expect(await alpn(s.port)).toBe("none");
  });

  test("with http2 an h2 client is answered over HTTP/2, and HTTP/1.1 clients still are", async () => {
    const s = await start({ http2: true });
    expect(await alpn(s.port)).toBe("h2");
    const session = http2.connect(s.url, { ca: pair.cert });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const req = session.request({ ":path": "/metrics", authorization: "Bearer reader" });
        let text = "";
        req.setEncoding("utf8");
        req.on("data", (c: string) => {
          text += c;
        });
        req.on("end", () => resolve(text));
        req.on("error", reject);
        req.end();
      });
      expect(body).toBe("up 1\n");
    } finally {
      session.close();
    }
    expect((await get(`${s.url}/metrics`, "reader")).status).toBe(200);
  });
});

test("a port already in use is reported with what to do", async () => {
  const s = await start();
  await expect(
    startSecureServer({ hostname: "127.0.0.1", port: s.port, tls: pair, auth, metrics: () => "", logger: quiet }),
  ).rejects.toThrow(/cannot serve HTTPS on 127\.0\.0\.1:\d+ .*choose a free port/);
});
