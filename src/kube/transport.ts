/**
 * The one HTTP path to the API server, on Bun's own fetch.
 *
 * client-node 2.x hands TLS settings to an undici dispatcher that Bun ignores (see docs/BUN-TLS.md), so
 * this transport passes them through Bun's `tls` fetch option instead: CA, client certificate/key,
 * skip-verify and server name are always applied. Properties:
 * - every request carries the auth headers of the connection and a User-Agent;
 * - no answer at all (refused, TLS failure, reset, DNS) becomes KubeError "Unreachable" naming the server;
 * - every request is reported once to the observer (method, code, host, seconds) for metrics;
 * - a non-watch request times out after `timeoutMs` (default 30 s); watches use only the caller's signal.
 */
import type { Connection } from "./config.ts";
import { fromNetworkError, fromResponse, KubeError } from "./errors.ts";
import type { RequestObservation } from "./types.ts";

export interface TransportRequest {
  method: string;
  /** Path plus optional query, e.g. /api/v1/pods?limit=500 */
  path: string;
  body?: unknown;
  contentType?: string;
  accept?: string;
  signal?: AbortSignal;
  /** 0 = no timeout (watches). */
  timeoutMs?: number;
}

export interface Transport {
  readonly server: string;
  readonly context: string;
  /** Sends a request; resolves with any HTTP answer (2xx or not). */
  send(req: TransportRequest): Promise<Response>;
  /** Sends a request and parses JSON; non-2xx answers reject with a translated KubeError. */
  json<T>(req: TransportRequest): Promise<T>;
}

export interface TransportOptions {
  userAgent?: string;
  timeoutMs?: number;
  observe?: (o: RequestObservation) => void;
}

export function createTransport(conn: Connection, opts: TransportOptions = {}): Transport {
  const host = new URL(conn.server).host;
  const userAgent = opts.userAgent ?? "devctl";
  const defaultTimeout = opts.timeoutMs ?? 30_000;
  const tls = bunTls(conn);
  const describe = (req: TransportRequest) => ({
    method: req.method,
    path: req.path.split("?")[0] ?? req.path,
    server: conn.server,
    context: conn.context,
  });

  async function send(req: TransportRequest): Promise<Response> {
    const started = performance.now();
    const timeoutMs = req.timeoutMs ?? defaultTimeout;
    const signal = withTimeout(req.signal, timeoutMs);
    const headers: Record<string, string> = {
      Accept: req.accept ?? "application/json",
      "User-Agent": userAgent,
      ...(await conn.authHeaders()),
      ...(req.body !== undefined ? { "Content-Type": req.contentType ?? "application/json" } : {}),
    };
    const body = req.body === undefined || typeof req.body === "string" ? req.body : JSON.stringify(req.body);
    let res: Response;
    try {
      res = await fetch(conn.server + req.path, {
        method: req.method,
        headers,
        body,
        signal,
        tls,
        ...(conn.proxy ? { proxy: conn.proxy } : {}),
      } as RequestInit);
    } catch (e) {
      opts.observe?.({ method: req.method, code: "<error>", host, seconds: (performance.now() - started) / 1000 });
      if (req.signal?.aborted) throw e;
      if ((e as Error)?.name === "TimeoutError") {
        throw new KubeError(
          "Timeout",
          `${req.method} ${describe(req).path}: no answer from ${conn.server} within ${timeoutMs} ms`,
          0,
          undefined,
          { cause: e },
        );
      }
      throw fromNetworkError(e, describe(req));
    }
    opts.observe?.({
      method: req.method,
      code: String(res.status),
      host,
      seconds: (performance.now() - started) / 1000,
    });
    return res;
  }

  async function json<T>(req: TransportRequest): Promise<T> {
    const res = await send(req);
    const parsed = await readBody(res);
    if (!res.ok) throw fromResponse(res.status, parsed, describe(req), req.path.split("?")[1] ?? "");
    return parsed as T;
  }

  return { server: conn.server, context: conn.context, send, json };
}

/** Bun's fetch `tls` option from the connection: CA, client certificate/key, server name, verification. */
function bunTls(conn: Connection) {
  return {
    ...(conn.tls.ca ? { ca: conn.tls.ca } : {}),
    ...(conn.tls.cert ? { cert: conn.tls.cert } : {}),
    ...(conn.tls.key ? { key: conn.tls.key } : {}),
    ...(conn.tls.serverName ? { serverName: conn.tls.serverName } : {}),
    rejectUnauthorized: conn.tls.rejectUnauthorized,
  };
}

/** The caller's signal, bounded by `timeoutMs` unless that is 0 (watches). */
function withTimeout(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal | undefined {
  const signals = [signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter(
    (s): s is AbortSignal => !!s,
  );
  return signals.length > 1 ? AbortSignal.any(signals) : signals[0];
}

/** The body as JSON when it says it is JSON and parses, else as text. */
async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  if (!text || !(res.headers.get("content-type") ?? "").includes("json")) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
