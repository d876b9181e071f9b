/**
 * The client against a small HTTPS server on loopback: proves TLS material and auth from every kind of
 * kubeconfig reaches the wire under Bun, and that answers are translated into KubeErrors once.
 * (The same client is exercised against a real kube-apiserver in tests/.)
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createKubeClient } from "./client.ts";
import { ConfigError } from "./config.ts";
import { KubeError } from "./errors.ts";
import { makePki, writeKubeconfig, type Pki } from "./_test-pki.ts";
import type { RequestObservation, ResourceType } from "./types.ts";

const DEPLOYMENTS: ResourceType = {
  group: "apps",
  version: "v1",
  plural: "deployments",
  kind: "Deployment",
  namespaced: true,
};
const TOKEN = "s3cret-token";

let pki: Pki;
let mtls: ReturnType<typeof Bun.serve>;
let tokenServer: ReturnType<typeof Bun.serve>;
const seen: { path: string; auth: string | null; method: string; contentType: string | null; body?: string }[] = [];

function api(req: Request): Response | Promise<Response> {
  const url = new URL(req.url);
  seen.push({
    path: url.pathname + url.search,
    auth: req.headers.get("authorization"),
    method: req.method,
    contentType: req.headers.get("content-type"),
  });
  const status = (code: number, reason: string, message: string) =>
    Response.json({ kind: "Status", apiVersion: "v1", status: "Failure", code, reason, message }, { status: code });
  if (url.pathname === "/version") return Response.json({ gitVersion: "v1.36.3", platform: "linux/amd64" });
  if (req.method === "DELETE")
    return req.text().then((body) => {
      const last = seen.at(-1);
      if (last) last.body = body;
      return Response.json({ kind: "Status", apiVersion: "v1", status: "Success" });
    });
  if (url.pathname.endsWith("/deployments/missing"))
    return status(404, "NotFound", 'deployments.apps "missing" not found');
  if (url.pathname.endsWith("/deployments/taken")) return status(409, "AlreadyExists", "already exists");
  if (url.pathname.endsWith("/deployments/stale")) return status(409, "Conflict", "the object has been modified");
  if (url.pathname.startsWith("/apis/apps/v1/namespaces/secret/"))
    return status(403, "Forbidden", 'deployments.apps is forbidden: User "x" cannot list resource "deployments"');
  if (url.pathname.startsWith("/apis/apps/v1/namespaces/locked/"))
    return status(
      403,
      "Forbidden",
      'deployments.apps "x" is forbidden: User "x" cannot create resource "deployments" in API group "apps"',
    );
  if (url.searchParams.get("watch") === "1" && url.searchParams.get("resourceVersion") === "1")
    return status(410, "Expired", "too old resource version: 1 (50)");
  if (url.searchParams.get("watch") === "1") {
    const events = [
      { type: "ADDED", object: { metadata: { name: "a", resourceVersion: "11" } } },
      { type: "BOOKMARK", object: { metadata: { resourceVersion: "12" } } },
      { type: "DELETED", object: { metadata: { name: "a", resourceVersion: "13" } } },
    ];
    const text = `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
    // Split mid-line to prove the parser reassembles lines across chunks.
    const cut = text.length / 2 + 3;
    return new Response(
      new ReadableStream({
        async start(c) {
          c.enqueue(new TextEncoder().encode(text.slice(0, cut)));
          await Bun.sleep(20);
          c.enqueue(new TextEncoder().encode(text.slice(cut)));
          c.close();
        },
      }),
      { headers: { "content-type": "application/json" } },
    );
  }
  if (url.pathname === "/apis/apps/v1/deployments") {
    const page = url.searchParams.get("continue") ?? "0";
    const next = { "0": "p1", p1: "p2", p2: "" }[page] ?? "";
    return Response.json({
      kind: "DeploymentList",
      metadata: { resourceVersion: page === "0" ? "42" : "99", continue: next },
      items: [{ metadata: { name: `item-${page}` } }],
    });
  }
  if (req.method === "PATCH")
    return req.json().then((body) => Response.json({ metadata: { name: "x" }, echoed: body }));
  return Response.json({ kind: "Deployment", metadata: { name: url.pathname.split("/").pop() } });
}

beforeAll(() => {
  pki = makePki();
  mtls = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.ca, requestCert: true, rejectUnauthorized: true },
    fetch: api,
  });
  tokenServer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: pki.serverCert, key: pki.serverKey },
    fetch: (req) =>
      req.headers.get("authorization") === `Bearer ${TOKEN}`
        ? api(req)
        : Response.json(
            { kind: "Status", code: 401, reason: "Unauthorized", message: "Unauthorized" },
            { status: 401 },
          ),
  });
});
afterAll(() => {
  mtls.stop(true);
  tokenServer.stop(true);
  rmSync(pki.dir, { recursive: true, force: true });
});

/** The error a call fails with; a call that succeeds fails the test. */
const failure = (p: Promise<unknown>): Promise<KubeError> =>
  p.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (e) => e as KubeError,
  );

const mtlsUrl = () => `https://127.0.0.1:${mtls.port}`;
const tokenUrl = () => `https://127.0.0.1:${tokenServer.port}`;
const certClient = (extra: Partial<Parameters<typeof writeKubeconfig>[3]> = {}, context?: string) =>
  createKubeClient({
    kubeconfig: writeKubeconfig(pki.dir, `cert-${Math.random()}.yaml`, mtlsUrl(), {
      ca: pki.ca,
      user: { clientCert: pki.clientCert, clientKey: pki.clientKey },
      ...extra,
    }),
    ...(context ? { context } : {}),
  });

describe("authentication from a kubeconfig", () => {
  test("a client certificate and CA from the kubeconfig are presented to a server that demands them", async () => {
    const v = await certClient().raw<{ gitVersion: string }>("GET", "/version");
    expect(v.gitVersion).toBe("v1.36.3");
  });

  test("a kubeconfig that trusts another CA is refused and the error names the server", async () => {
    const err = await failure(certClient({ ca: pki.otherCa }).raw("GET", "/version"));
    expect(err).toBeInstanceOf(KubeError);
    expect(err.reason).toBe("Unreachable");
    expect(err.message).toContain(mtlsUrl());
  });

  test("without the client certificate the handshake fails", async () => {
    const kc = writeKubeconfig(pki.dir, "nocert.yaml", mtlsUrl(), { ca: pki.ca, user: {} });
    const err = await failure(createKubeClient({ kubeconfig: kc }).raw("GET", "/version"));
    expect(err.reason).toBe("Unreachable");
  });

  test("a bearer token with a CA authenticates", async () => {
    const kc = writeKubeconfig(pki.dir, "token.yaml", tokenUrl(), {
      ca: pki.ca,
      user: { token: TOKEN },
      namespace: "team-a",
    });
    const client = createKubeClient({ kubeconfig: kc });
    expect(client.namespace).toBe("team-a");
    expect((await client.raw<{ gitVersion: string }>("GET", "/version")).gitVersion).toBe("v1.36.3");
  });

  test("a wrong token is reported as unauthorized with the context named", async () => {
    const kc = writeKubeconfig(pki.dir, "badtoken.yaml", tokenUrl(), { ca: pki.ca, user: { token: "nope" } });
    const err = await failure(createKubeClient({ kubeconfig: kc }).raw("GET", "/version"));
    expect(err.reason).toBe("Unauthorized");
    expect(err.message).toContain('context "test"');
  });

  test("insecure-skip-tls-verify connects without a CA", async () => {
    const kc = writeKubeconfig(pki.dir, "insecure.yaml", tokenUrl(), { insecure: true, user: { token: TOKEN } });
    expect((await createKubeClient({ kubeconfig: kc }).raw<{ gitVersion: string }>("GET", "/version")).gitVersion).toBe(
      "v1.36.3",
    );
  });

  test("an exec credential plugin supplies the token", async () => {
    const script = join(pki.dir, "cred.sh");
    writeFileSync(
      script,
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'\n`,
    );
    chmodSync(script, 0o755);
    const kc = writeKubeconfig(pki.dir, "exec.yaml", tokenUrl(), {
      ca: pki.ca,
      user: { exec: { command: script, args: [] } },
    });
    expect((await createKubeClient({ kubeconfig: kc }).raw<{ gitVersion: string }>("GET", "/version")).gitVersion).toBe(
      "v1.36.3",
    );
  });

  test("in-cluster configuration reads the service account token, CA and namespace", async () => {
    const root = join(pki.dir, "incluster");
    const sa = join(root, "var/run/secrets/kubernetes.io/serviceaccount");
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, "token"), TOKEN);
    writeFileSync(join(sa, "ca.crt"), pki.ca);
    writeFileSync(join(sa, "namespace"), "devctl-system");
    const client = createKubeClient({
      inClusterRoot: root,
      env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: String(tokenServer.port), HOME: root },
    });
    expect(client.namespace).toBe("devctl-system");
    expect(client.context).toBe("");
    expect((await client.raw<{ gitVersion: string }>("GET", "/version")).gitVersion).toBe("v1.36.3");
  });
});

describe("configuration errors say what to fix", () => {
  test("--context picks another context, and an unreachable server is named with its context", async () => {
    const err = await failure(certClient({}, "other").raw("GET", "/version"));
    expect(err.reason).toBe("Unreachable");
    expect(err.message).toContain("https://127.0.0.1:1");
    expect(err.message).toContain('context "other"');
  });

  test("an unknown context lists the known ones", () => {
    expect(() => certClient({}, "nope")).toThrow(/context "nope" is not in kubeconfig .*known contexts: test, other/);
  });

  test("a malformed kubeconfig is a ConfigError naming the file", () => {
    const file = join(pki.dir, "broken.yaml");
    writeFileSync(file, "apiVersion: v1\nclusters: [ {\n");
    expect(() => createKubeClient({ kubeconfig: file })).toThrow(ConfigError);
    expect(() => createKubeClient({ kubeconfig: file })).toThrow(file);
  });

  test("TLS material that is not PEM is a ConfigError naming the field, never quoting the material", () => {
    const junk = "bm90IGEgY2VydA-secret-looking-junk";
    const cases: [Parameters<typeof writeKubeconfig>[3], RegExp][] = [
      [
        { ca: junk, user: { token: TOKEN } },
        /certificate-authority-data of cluster "c" in kubeconfig .* is not a PEM certificate/,
      ],
      [
        { ca: pki.ca, user: { clientCert: junk, clientKey: pki.clientKey } },
        /client-certificate-data of user "u" in kubeconfig .* is not a PEM certificate/,
      ],
      [
        { ca: pki.ca, user: { clientCert: pki.clientCert, clientKey: junk } },
        /client-key-data of user "u" in kubeconfig .* is not a PEM private key/,
      ],
    ];
    for (const [opts, message] of cases) {
      const file = writeKubeconfig(pki.dir, `junk-${Math.random()}.yaml`, mtlsUrl(), opts);
      let err: unknown;
      try {
        createKubeClient({ kubeconfig: file });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(message);
      expect((err as Error).message).not.toContain(junk);
      expect((err as Error).message).not.toContain(Buffer.from(junk).toString("base64"));
    }
  });

  test("an unreachable server's message does not repeat the error code", async () => {
    const err = await failure(certClient({}, "other").raw("GET", "/version"));
    expect(err.message).not.toMatch(/(\w+): \1:/);
    expect(err.message).not.toContain("?.");
  });

  test("a missing kubeconfig file is a ConfigError", () => {
    expect(() => createKubeClient({ kubeconfig: "/nonexistent/kubeconfig" })).toThrow(/does not exist/);
  });

  test("no configuration at all says where it looked", () => {
    expect(() => createKubeClient({ env: { HOME: "/nonexistent" } })).toThrow(/no Kubernetes configuration found/);
  });
});

describe("requests and answers", () => {
  test("HTTP errors become KubeErrors with a reason, and forbidden names the verb and resource", async () => {
    const c = certClient();
    expect((await failure(c.get(DEPLOYMENTS, "missing", "default"))).reason).toBe("NotFound");
    expect((await failure(c.get(DEPLOYMENTS, "taken", "default"))).reason).toBe("AlreadyExists");
    expect((await failure(c.get(DEPLOYMENTS, "stale", "default"))).reason).toBe("Conflict");
    const forbidden = await failure(c.list(DEPLOYMENTS, { namespace: "secret" }));
    expect(forbidden.reason).toBe("Forbidden");
    expect(forbidden.message).toContain('cannot list deployments.apps in namespace "secret"');
  });

  test("a forbidden server-side apply names the verb the API server checked", async () => {
    const obj = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", namespace: "locked" } };
    const err = await failure(certClient().apply(DEPLOYMENTS, obj, { fieldManager: "devctl" }));
    expect(err.reason).toBe("Forbidden");
    expect(err.message).toContain('forbidden: cannot create deployments.apps "x" in namespace "locked"');
  });

  test("listAll follows continue tokens and keeps the first page's resourceVersion", async () => {
    const list = await certClient().listAll(DEPLOYMENTS);
    expect(list.items.map((i) => i.metadata.name)).toEqual(["item-0", "item-p1", "item-p2"]);
    expect(list.metadata.resourceVersion).toBe("42");
    expect(seen.filter((s) => s.path.startsWith("/apis/apps/v1/deployments?")).map((s) => s.path)).toEqual([
      "/apis/apps/v1/deployments?limit=500",
      "/apis/apps/v1/deployments?limit=500&continue=p1",
      "/apis/apps/v1/deployments?limit=500&continue=p2",
    ]);
  });

  test("a watch stream split mid-line yields whole events in order", async () => {
    const events = [];
    for await (const e of await certClient().watch(DEPLOYMENTS, {
      namespace: "default",
      resourceVersion: "10",
      allowWatchBookmarks: true,
      timeoutSeconds: 30,
    }))
      events.push(e);
    expect(events.map((e) => `${e.type}:${e.object.metadata?.resourceVersion}`)).toEqual([
      "ADDED:11",
      "BOOKMARK:12",
      "DELETED:13",
    ]);
    expect(seen.at(-1)?.path).toBe(
      "/apis/apps/v1/namespaces/default/deployments?watch=1&resourceVersion=10&allowWatchBookmarks=true&timeoutSeconds=30",
    );
  });

  test("a watch refused with HTTP 410 rejects with reason Gone", async () => {
    const err = await failure(certClient().watch(DEPLOYMENTS, { resourceVersion: "1" }));
    expect(err.reason).toBe("Gone");
  });

  test("server-side apply sends the object as an apply patch with field manager and force", async () => {
    const obj = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", namespace: "default" } };
    await certClient().apply(DEPLOYMENTS, obj, { fieldManager: "devctl", force: true });
    expect(seen.at(-1)).toMatchObject({
      method: "PATCH",
      path: "/apis/apps/v1/namespaces/default/deployments/x?fieldManager=devctl&force=true",
      contentType: "application/apply-patch+yaml",
    });
  });

  test("a server dry-run delete says dryRun in the query and, with a propagation policy, in the DeleteOptions body too", async () => {
    // The API server reads dryRun from the body when there is one: a query alone would really delete.
    await certClient().delete(DEPLOYMENTS, "x", "default", { dryRun: true });
    expect(seen.at(-1)).toMatchObject({
      method: "DELETE",
      path: "/apis/apps/v1/namespaces/default/deployments/x?dryRun=All",
    });
    await certClient().delete(DEPLOYMENTS, "x", "default", { dryRun: true, propagationPolicy: "Foreground" });
    expect(JSON.parse(seen.at(-1)?.body ?? "{}")).toEqual({
      kind: "DeleteOptions",
      apiVersion: "v1",
      propagationPolicy: "Foreground",
      dryRun: ["All"],
    });
  });

  test("every request is reported once to the observer with its method and code", async () => {
    const observed: RequestObservation[] = [];
    const kc = writeKubeconfig(pki.dir, "obs.yaml", mtlsUrl(), {
      ca: pki.ca,
      user: { clientCert: pki.clientCert, clientKey: pki.clientKey },
    });
    const c = createKubeClient({ kubeconfig: kc, observe: (o) => observed.push(o) });
    await c.get(DEPLOYMENTS, "ok", "default");
    await c.get(DEPLOYMENTS, "missing", "default").catch(() => {});
    expect(observed.map((o) => `${o.method} ${o.code}`)).toEqual(["GET 200", "GET 404"]);
    expect(observed[0]?.host).toBe(`127.0.0.1:${mtls.port}`);
  });
});
