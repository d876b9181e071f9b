/**
 * The secure metrics server (controller-runtime's `SecureServing` with its authentication and authorization
 * filter): HTTPS, every request checked by `auth` (request-auth.ts) before it is routed, only /metrics served.
 *
 * Properties:
 * - HTTP/1.1 only unless `http2`: Bun.serve offers no ALPN protocol, so a client asking for h2 gets HTTP/1.1 (the
 *   HTTP/2 rapid-reset CVEs are why controller-runtime's scaffold turns h2 off). With `http2`, node:http2's secure
 *   server answers h2 and, for clients that do not offer it, HTTP/1.1.
 * - Every request is authenticated and authorized first (401/403/500 as request-auth.ts says), then: GET or HEAD
 *   /metrics is the exposition; other paths 404; other methods 405.
 * - `reload(pair)` serves a new certificate from the next connection on (Bun.serve: the listener is reopened on the
 *   same port, connections open meanwhile finish on the old one; node:http2: its secure context is replaced).
 */
import type { Logger } from "../runtime/logger.ts";
import { type Exposition, familiesAsked, metricsResponse, type RunningServer } from "./http.ts";
import type { RequestAuth } from "./request-auth.ts";
import type { PemPair } from "./self-signed.ts";
import { messageOf } from "../kube/errors.ts";

export interface SecureServerOptions {
  /** Default "0.0.0.0". */
  hostname?: string;
  port: number;
  tls: PemPair;
  auth: RequestAuth;
  metrics: Exposition;
  /** Serve HTTP/2 (ALPN h2) besides HTTP/1.1. Default false. */
  http2?: boolean;
  logger: Logger;
}

export interface RunningSecureServer extends RunningServer {
  reload(pair: PemPair): Promise<void>;
}

const TEXT = { "content-type": "text/plain; charset=utf-8" };

export async function handleSecure(o: Pick<SecureServerOptions, "auth" | "metrics">, req: Request): Promise<Response> {
  const refused = await o.auth.check(req);
  if (refused) return refused;
  const url = new URL(req.url);
  if (url.pathname !== "/metrics") return new Response("not found; try /metrics\n", { status: 404, headers: TEXT });
  if (req.method !== "GET" && req.method !== "HEAD")
    return new Response("method not allowed\n", { status: 405, headers: { ...TEXT, allow: "GET, HEAD" } });
  const res = metricsResponse(o.metrics, familiesAsked(url));
  return req.method === "HEAD" ? new Response(null, { status: res.status, headers: res.headers }) : res;
}

interface Listener {
  port: number;
  close(): Promise<void>;
  /** The listener that serves `pair` from the next connection on (this one, or a new one on the same port). */
  reload(pair: PemPair): Promise<Listener>;
}

function listenBun(o: SecureServerOptions, hostname: string, port: number, tls: PemPair): Listener {
  const server = Bun.serve({
    hostname,
    port,
    tls,
    development: false,
    reusePort: false,
    fetch: (req) => handleSecure(o, req),
    error: (err) => new Response(`internal error: ${err.message}\n`, { status: 500, headers: TEXT }),
  });
  const bound = server.port ?? port;
  return {
    port: bound,
    close: () => server.stop(false),
    // Bun.serve keeps the certificate it started with (reload() takes no tls): reopen the listener. Closing it is
    // immediate; connections open on it finish there.
    reload: (pair) => {
      void server.stop(false);
      return Promise.resolve(listenBun(o, hostname, bound, pair));
    },
  };
}

async function listenHttp2(o: SecureServerOptions, hostname: string, port: number, tls: PemPair): Promise<Listener> {
  // Loaded only with --enable-http2: node:http2 is not part of a default start.
  const http2 = await import("node:http2");
  const server = http2.createSecureServer({ ...tls, allowHTTP1: true }, (req, res) => {
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers))
      if (!k.startsWith(":") && typeof v === "string") headers.set(k, v);
    const request = new Request(`https://${hostname}:${port}${req.url}`, { method: req.method, headers });
    handleSecure(o, request)
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      })
      .catch((e: unknown) => {
        res.writeHead(500, TEXT);
        res.end(`internal error: ${messageOf(e)}\n`);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, hostname, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address();
  const listener: Listener = {
    port: typeof bound === "object" && bound ? bound.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    reload: (pair) => {
      server.setSecureContext({ ...pair });
      return Promise.resolve(listener);
    },
  };
  return listener;
}

export async function startSecureServer(o: SecureServerOptions): Promise<RunningSecureServer> {
  const hostname = o.hostname ?? "0.0.0.0";
  const listen = (port: number, tls: PemPair) =>
    o.http2 ? listenHttp2(o, hostname, port, tls) : Promise.resolve(listenBun(o, hostname, port, tls));
  let listener: Listener;
  try {
    listener = await listen(o.port, o.tls);
  } catch (err) {
    throw new Error(
      `cannot serve HTTPS on ${hostname}:${o.port} (${messageOf(err)}); choose a free port or another address`,
      { cause: err },
    );
  }
  const port = listener.port;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `https://${host}:${port}`,
    port,
    stop: () => listener.close(),
    async reload(pair) {
      listener = await listener.reload(pair);
      o.logger.info(`serving the reloaded certificate on ${host}:${port}`);
    },
  };
}
