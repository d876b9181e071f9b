/**
 * Secure metrics against the real API server (issue #33): `devctl operator run` with its defaults (HTTPS, bearer
 * tokens checked by TokenReview, access by SubjectAccessReview on GET /metrics), running out of cluster with the
 * credentials of the installed operator's own ServiceAccount, so the install's RBAC is what makes the reviews.
 *
 * - A ServiceAccount bound to the installed devctl-metrics-reader ClusterRole scrapes: 200 with the exposition.
 * - One bound to nothing: 403 naming it. No token: 401. A token the API server does not know: 401.
 * - The probes stay plain HTTP on their own port, and no token ever reaches the operator's log.
 * Tokens come from the TokenRequest API (kubectl create token). Uninstalled afterwards (the CRD is kept).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { adminConnection, bindMetricsReader, createServiceAccount, kubeconfigYaml, tokenFor } from "./_identities.ts";
import { freePort } from "./_operator.ts";
import { DEVCTL, devctl, eventually, tempNamespace } from "./_support.ts";

setDefaultTimeout(120_000);

const INSTALL_NS = `metrics-auth-${Math.random().toString(36).slice(2, 8)}`;
const BINDING = `${INSTALL_NS}-reader`;

let scrapers: Awaited<ReturnType<typeof tempNamespace>>;
let unbind: (() => Promise<void>) | undefined;
let proc: ReturnType<typeof Bun.spawn> | undefined;
let logs = "";
let metricsUrl = "";
let healthUrl = "";
/** Holds the operator identity's kubeconfig (a token): removed after the suite. */
let configDir: string | undefined;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  const r = devctl(["operator", "install", "-n", INSTALL_NS, "--image", "ghcr.io/devctl/devctl:e2e"]);
  if (r.code !== 0) throw new Error(`devctl operator install: ${r.stderr}`);
  scrapers = await tempNamespace("scrapers");
  await createServiceAccount("reader", scrapers.name);
  await createServiceAccount("stranger", scrapers.name);
  unbind = await bindMetricsReader(BINDING, "reader", scrapers.name);
  tokens.reader = tokenFor("reader", scrapers.name);
  tokens.stranger = tokenFor("stranger", scrapers.name);
  tokens.operator = tokenFor("webapp-operator", INSTALL_NS);

  // The installed operator's identity, out of cluster: its ServiceAccount token in a kubeconfig of its own.
  const admin = adminConnection();
  configDir = mkdtempSync(join(tmpdir(), "metrics-auth-"));
  const config = join(configDir, "kubeconfig");
  writeFileSync(config, kubeconfigYaml(admin.server, "operator", { ca: admin.ca, token: tokens.operator }));
  const [metricsPort, healthPort] = [await freePort(), await freePort()];
  metricsUrl = `https://127.0.0.1:${metricsPort}`;
  healthUrl = `http://127.0.0.1:${healthPort}`;
  proc = Bun.spawn(
    [
      DEVCTL,
      "operator",
      "run",
      "--kubeconfig",
      config,
      "--leader-elect=false",
      "--metrics-bind-address",
      `127.0.0.1:${metricsPort}`,
      "--health-probe-bind-address",
      `127.0.0.1:${healthPort}`,
      "--log-format",
      "json",
      "--log-level",
      "debug",
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const c of s) logs += d.decode(c, { stream: true });
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  await eventually(
    async () => {
      if (proc?.exitCode !== null) throw new Error(`operator exited with ${proc?.exitCode}: ${logs}`);
      return (await fetch(`${healthUrl}/readyz`).catch(() => undefined))?.status === 200;
    },
    60_000,
    "the operator to be ready",
  );
}, 180_000);

afterAll(async () => {
  if (proc && proc.exitCode === null) {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
  }
  if (configDir) rmSync(configDir, { recursive: true, force: true });
  await unbind?.();
  await scrapers?.drop();
  const r = devctl(["operator", "uninstall", "-n", INSTALL_NS]);
  expect(r.code).toBe(0);
});

/** What `curl -k -H "Authorization: Bearer <token>" <url>/metrics` gets. */
async function scrape(token?: string, path = "/metrics") {
  const res = await fetch(`${metricsUrl}${path}`, {
    tls: { rejectUnauthorized: false },
    keepalive: false,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: await res.text() };
}

describe("the operator's secure /metrics", () => {
  test("a ServiceAccount bound to devctl-metrics-reader gets the exposition (200)", async () => {
    const r = await scrape(tokens.reader);
    expect(r.status).toBe(200);
    expect(r.body).toMatch(/^rest_client_requests_total\{/m);
    expect(r.body).toContain("# TYPE workqueue_adds_total counter");
  });

  test("a ServiceAccount bound to nothing is refused with 403 naming it", async () => {
    expect(await scrape(tokens.stranger)).toEqual({
      status: 403,
      body: `Authorization denied for user system:serviceaccount:${scrapers.name}:stranger\n`,
    });
  });

  test("no token is 401; a token the API server does not know is 401", async () => {
    expect(await scrape()).toEqual({ status: 401, body: "Unauthorized\n" });
    const garbage = `${tokens.reader?.slice(0, -8)}AAAAAAAA`;
    expect(await scrape(garbage)).toEqual({ status: 401, body: "Unauthorized\n" });
    expect(await scrape("not-a-token")).toEqual({ status: 401, body: "Unauthorized\n" });
  });

  test("the reader may get /metrics and nothing else there", async () => {
    expect(await scrape(tokens.reader, "/debug/pprof")).toEqual({
      status: 403,
      body: `Authorization denied for user system:serviceaccount:${scrapers.name}:reader\n`,
    });
  });

  test("is HTTPS with a self-signed certificate for 127.0.0.1, which a client that trusts it verifies", async () => {
    const pem = await new Promise<string>((resolve, reject) => {
      const url = new URL(metricsUrl);
      const socket = connect({ host: url.hostname, port: Number(url.port), rejectUnauthorized: false }, () => {
        const der = socket.getPeerCertificate().raw as Buffer;
        socket.end();
        resolve(new X509Certificate(der).toString());
      });
      socket.on("error", reject);
    });
    const cert = new X509Certificate(pem);
    expect(cert.subject).toBe("CN=devctl-operator-metrics");
    expect(cert.subjectAltName).toContain("IP Address:127.0.0.1");
    const res = await fetch(`${metricsUrl}/metrics`, {
      tls: { ca: pem },
      keepalive: false,
      headers: { authorization: `Bearer ${tokens.reader}` },
    });
    expect(res.status).toBe(200);
  });

  test("the probes stay plain HTTP and need no token", async () => {
    expect((await fetch(`${healthUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${healthUrl}/metrics`)).status).toBe(404);
  });

  test("no token reaches the operator's log", () => {
    expect(logs).toContain("serving /metrics over HTTPS");
    for (const [who, token] of Object.entries(tokens))
      expect({ who, leaked: logs.includes(token) }).toEqual({ who, leaked: false });
    expect(logs).not.toContain("not-a-token");
  });
});
