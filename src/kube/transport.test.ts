import { afterAll, describe, expect, spyOn, test } from "bun:test";
import { getEventListeners } from "node:events";
import { clientFromTransport } from "./client.ts";
import type { Connection } from "./config.ts";
import { KubeError } from "./errors.ts";
import { createTransport } from "./transport.ts";
import type { KubeObject, RequestObservation, ResourceType } from "./types.ts";

const CONFIGMAPS: ResourceType = {
  group: "",
  version: "v1",
  plural: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
};
const patches: unknown[] = [];

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    if (url.pathname === "/slow") await Bun.sleep(400);
    if (url.pathname === "/dated") return Response.json({}, { headers: { date: "Tue, 01 Jan 2030 00:00:00 GMT" } });
    if (url.pathname.endsWith("/missing/status"))
      return Response.json({ kind: "Status", code: 404, reason: "NotFound", message: "not found" }, { status: 404 });
    if (req.method === "PATCH") {
      patches.push(await req.json());
      // Not JSON at all: a caller that discards the answer must not try to parse it.
      return new Response("{ not json", { headers: { "content-type": "application/json" } });
    }
    return Response.json({ kind: "ConfigMap", metadata: { name: "x" } });
  },
});
afterAll(() => server.stop(true));

const conn: Connection = {
  server: `http://127.0.0.1:${server.port}`,
  context: "test",
  namespace: "default",
  tls: { rejectUnauthorized: true },
  authHeaders: async () => ({}),
};
const seen: RequestObservation[] = [];
const transport = createTransport(conn, { timeoutMs: 100, observe: (o) => seen.push(o) });
const failure = (p: Promise<unknown>) =>
  p.then(
    () => Promise.reject(new Error("expected a failure")),
    (e) => e,
  );

describe("timeouts and the caller's signal", () => {
  test("a request with no answer within timeoutMs is a Timeout KubeError, with or without a caller's signal", async () => {
    for (const signal of [undefined, new AbortController().signal]) {
      const err = await failure(transport.json({ method: "GET", path: "/slow", signal }));
      expect(err).toBeInstanceOf(KubeError);
      expect(err.reason).toBe("Timeout");
      expect(err.message).toBe(`GET /slow: no answer from ${conn.server} within 100 ms`);
    }
  });

  test("the caller's abort rejects with the caller's reason, not a KubeError", async () => {
    const caller = new AbortController();
    const pending = failure(transport.json({ method: "GET", path: "/slow", signal: caller.signal, timeoutMs: 5_000 }));
    setTimeout(() => caller.abort(new Error("stop")), 20);
    expect((await pending).message).toBe("stop");
    const already = AbortSignal.abort(new Error("gone already"));
    expect((await failure(transport.json({ method: "GET", path: "/", signal: already }))).message).toBe("gone already");
  });

  test("a long-lived signal collects no listeners from requests that finished, failed or timed out", async () => {
    const shared = new AbortController().signal;
    for (let i = 0; i < 20; i++) await transport.json({ method: "GET", path: "/", signal: shared });
    await failure(transport.json({ method: "GET", path: "/slow", signal: shared }));
    await failure(transport.json({ method: "PATCH", path: "/api/v1/x/missing/status", body: {}, signal: shared }));
    expect(getEventListeners(shared, "abort")).toHaveLength(0);
  });
});

describe("a patch whose answer the caller does not need", () => {
  const client = clientFromTransport(transport, "default");

  test("is sent as usual and resolves to undefined without parsing the answer", async () => {
    const before = seen.length;
    const decoded = spyOn(Response.prototype, "text");
    const result = await client.patch(CONFIGMAPS, "web", "team-a", { data: { a: "1" } }, "merge", {
      subresource: "status",
      discardResponse: true,
    });
    expect(decoded).not.toHaveBeenCalled();
    decoded.mockRestore();
    expect(result).toBeUndefined();
    expect(patches.at(-1)).toEqual({ data: { a: "1" } });
    expect(seen.slice(before).map((o) => `${o.method} ${o.code}`)).toEqual(["PATCH 200"]);
  });

  test("still parses the answer without the option (here: unparsable, so it comes back as text)", async () => {
    expect(await client.patch<KubeObject>(CONFIGMAPS, "web", "team-a", {}, "merge")).toBe("{ not json" as never);
  });

  test("still fails with the server's Status", async () => {
    const err = await failure(
      client.patch(CONFIGMAPS, "missing", "team-a", {}, "merge", { subresource: "status", discardResponse: true }),
    );
    expect(err.reason).toBe("NotFound");
    expect(err.status?.message).toBe("not found");
  });
});

describe("the API server's Date header", () => {
  test("is told with the wall-clock times the request was sent and answered, for an answer of any code", async () => {
    const dates: [string | null, number, number][] = [];
    const dated = createTransport(conn, { serverDate: (d, sent, received) => dates.push([d, sent, received]) });
    const before = Date.now();
    await dated.json({ method: "GET", path: "/dated" });
    await failure(dated.json({ method: "PATCH", path: "/x/missing/status", body: {} }));
    const after = Date.now();
    expect(dates.map(([d]) => d)).toEqual(["Tue, 01 Jan 2030 00:00:00 GMT", expect.stringMatching(/ GMT$/)]);
    for (const [, sent, received] of dates) {
      expect(sent).toBeGreaterThanOrEqual(before);
      expect(received).toBeGreaterThanOrEqual(sent);
      expect(received).toBeLessThanOrEqual(after);
    }
  });
});
