import { expect, test } from "bun:test";
import { createFakeClock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import { type EndpointOptions, type SecureMetrics, serveEndpoints } from "./endpoints.ts";
import { createRequestAuth } from "./request-auth.ts";
import { selfSignedCert } from "./self-signed.ts";

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const clock = createFakeClock();
const secure: SecureMetrics = {
  tls: await selfSignedCert({ commonName: "t", hosts: ["127.0.0.1"] }),
  auth: createRequestAuth({
    authenticate: async (t) => (t === "ok" ? { username: "u" } : undefined),
    authorize: async () => ({ allowed: true }),
    clock,
    logger: quiet,
  }),
  http2: false,
  clock,
};
const base: EndpointOptions = { readyz: () => true, metrics: () => "up 1\n", logger: quiet };
const stopAll = (runnables: Awaited<ReturnType<typeof serveEndpoints>>) =>
  Promise.all(runnables.map((r) => r.start(AbortSignal.abort())));

test("secure: /metrics is HTTPS with a token on its address, the probes plain HTTP on theirs without /metrics", async () => {
  let urls: { metrics?: string; health?: string } = {};
  const runnables = await serveEndpoints({
    ...base,
    secure,
    metricsAt: { hostname: "127.0.0.1", port: 0 },
    healthAt: { hostname: "127.0.0.1", port: 0 },
    onListening: (u) => {
      urls = u;
    },
  });
  try {
    expect(urls.metrics).toStartWith("https://127.0.0.1:");
    expect(urls.health).toStartWith("http://127.0.0.1:");
    const tls = { ca: secure.tls.cert };
    expect((await fetch(`${urls.metrics}/metrics`, { tls, headers: { authorization: "Bearer ok" } })).status).toBe(200);
    expect((await fetch(`${urls.metrics}/metrics`, { tls })).status).toBe(401);
    expect((await fetch(`${urls.health}/readyz`)).status).toBe(200);
    expect((await fetch(`${urls.health}/metrics`)).status).toBe(404);
  } finally {
    await stopAll(runnables);
  }
});

test("secure metrics and the probes on one fixed address are refused, and nothing is left listening", async () => {
  const at = { hostname: "127.0.0.1", port: 18_443 };
  await expect(serveEndpoints({ ...base, secure, metricsAt: at, healthAt: at })).rejects.toThrow(
    "secure metrics and the health probes cannot share 127.0.0.1:18443: the probes are plain HTTP",
  );
});

test("plain: one server answers both on a shared fixed address", async () => {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  let urls: { metrics?: string; health?: string } = {};
  const at = { hostname: "127.0.0.1", port };
  const runnables = await serveEndpoints({ ...base, metricsAt: at, healthAt: at, onListening: (u) => void (urls = u) });
  try {
    expect(urls).toEqual({ metrics: `http://127.0.0.1:${port}`, health: `http://127.0.0.1:${port}` });
    expect(await (await fetch(`${urls.metrics}/metrics`)).text()).toBe("up 1\n");
    expect(runnables).toHaveLength(1);
  } finally {
    await stopAll(runnables);
  }
});
