/**
 * The one HTTP path to the API server, on Bun's own fetch.
 *
 * client-node 2.x hands TLS settings to an undici dispatcher that Bun ignores (see docs/BUN-TLS.md), so
 * this transport passes them through Bun's `tls` fetch option instead: CA, client certificate/key,
 * skip-verify and server name are always applied. Properties:
 * - every request carries the auth headers of the connection and a User-Agent;
 * - no answer at all (refused, TLS failure, reset, DNS) becomes KubeError "Unreachable" naming the server;
 * - every request is reported once to the observer (method, code, host, seconds) for metrics;
 * - every answer's Date header is told to `serverDate` with the wall-clock times (Date.now()) the request was sent
 *   and answered, from which runtime/server-time.ts tells the API server's clock;
 * - a non-watch request times out after `timeoutMs` (default 30 s), body included; watches use only the
 *   caller's signal. `json()` arms one timer and at most one listener on the caller's signal per request and
 *   disarms both once the body is read (AbortSignal.timeout + AbortSignal.any cost ~2.5% of the operator's
 *   CPU in a profile of 1,000 WebApps converging);
 * - `discardBody` (json only): a 2xx answer's body is read off the connection but not decoded or parsed, and
 *   json() resolves to undefined; an error answer is still parsed into its KubeError.
 */
import type { Connection } from "./config.ts";
import { fromNetworkError, fromResponse, KubeError, type RequestDescription } from "./errors.ts";
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
  /** json() only: do not decode or parse a 2xx answer's body; resolve to undefined. */
  discardBody?: boolean;
}

export interface Transport {
  readonly server: string;
  readonly context: string;
  /** Sends a request; resolves with any HTTP answer (2xx or not). */
  send(req: TransportRequest): Promise<Response>;
  /** Sends a request and parses JSON (unless `discardBody`); non-2xx answers reject with a translated KubeError. */
  json<T>(req: TransportRequest): Promise<T>;
}

export interface TransportOptions {
  userAgent?: string;
  timeoutMs?: number;
  observe?: (o: RequestObservation) => void;
  /** Told the Date header of each answer (null when it has none), and when the request was sent and answered. */
  serverDate?: (date: string | null, sentAtMs: number, receivedAtMs: number) => void;
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

  /** One request, aborted by `signal`; `timedOut()` tells a timeout apart from the caller's abort. */
  async function exchange(
    req: TransportRequest,
    signal: AbortSignal | undefined,
    timedOut: () => boolean,
    timeoutMs: number,
  ): Promise<Response> {
    const started = performance.now();
    const sentAt = opts.serverDate ? Date.now() : 0;
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
      throw timedOut() ? timeoutError(e, describe(req), timeoutMs) : fromNetworkError(e, describe(req));
    }
    opts.observe?.({
      method: req.method,
      code: statusText(res.status),
      host,
      seconds: (performance.now() - started) / 1000,
    });
    opts.serverDate?.(res.headers.get("date"), sentAt, Date.now());
    return res;
  }

  function send(req: TransportRequest): Promise<Response> {
    const timeoutMs = req.timeoutMs ?? defaultTimeout;
    const timeout = timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined;
    // The caller reads the body after this returns, so the timeout must outlive it: AbortSignal's own timer does.
    const signal = timeout && req.signal ? AbortSignal.any([req.signal, timeout]) : (timeout ?? req.signal);
    return exchange(req, signal, () => !!timeout?.aborted, timeoutMs);
  }

  async function json<T>(req: TransportRequest): Promise<T> {
    const timeoutMs = req.timeoutMs ?? defaultTimeout;
    const deadline = new Deadline(req.signal, timeoutMs);
    try {
      const res = await exchange(req, deadline.signal, () => deadline.timedOut, timeoutMs);
      if (res.ok && req.discardBody) {
        await res.arrayBuffer(); // read off the connection so that it is reused
        return undefined as T;
      }
      const parsed = await readBody(res);
      if (!res.ok) throw fromResponse(res.status, parsed, describe(req), req.path.split("?")[1] ?? "");
      return parsed as T;
    } finally {
      deadline.release();
    }
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

function timeoutError(cause: unknown, req: RequestDescription, timeoutMs: number): KubeError {
  const message = `${req.method} ${req.path}: no answer from ${req.server} within ${timeoutMs} ms`;
  return new KubeError("Timeout", message, 0, undefined, { cause });
}

/** Status codes as strings, made once: the observer gets one per request. */
const STATUS_TEXT = new Map<number, string>();
function statusText(code: number): string {
  let s = STATUS_TEXT.get(code);
  if (s === undefined) STATUS_TEXT.set(code, (s = String(code)));
  return s;
}

/**
 * The caller's signal bounded by `timeoutMs` (0: unbounded); `release()` disarms it once the answer is read.
 * Without a caller's signal this is AbortSignal.timeout (cheapest: ~0.7 µs); with one, one controller, one
 * timer and one listener (~2.7 µs) instead of AbortSignal.timeout + AbortSignal.any (~4.4 µs, measured with
 * Bun 1.4.5), and nothing left armed for 30 s after the request. A timeout aborts with a TimeoutError
 * DOMException either way.
 */
class Deadline {
  readonly signal: AbortSignal | undefined;
  /** Set when the caller gave a signal and there is a timeout: aborted by either. */
  readonly #controller: AbortController | undefined;
  readonly #caller: AbortSignal | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timedOut = false;

  constructor(caller: AbortSignal | undefined, timeoutMs: number) {
    if (timeoutMs <= 0 || caller?.aborted) {
      this.signal = caller; // unbounded, or already aborted: fetch rejects at once
    } else if (!caller) {
      this.signal = AbortSignal.timeout(timeoutMs);
    } else {
      this.#controller = new AbortController();
      this.signal = this.#controller.signal;
      this.#caller = caller;
      caller.addEventListener("abort", this);
      this.#timer = setTimeout(onDeadline, timeoutMs, this);
      this.#timer.unref?.();
    }
  }

  get timedOut(): boolean {
    if (this.#controller) return this.#timedOut;
    return !this.#caller && this.signal?.reason instanceof DOMException && this.signal.reason.name === "TimeoutError";
  }

  /** The caller aborted (the EventListener protocol: no closure per request). */
  handleEvent(): void {
    this.#controller?.abort(this.#caller?.reason);
    this.release();
  }

  expire(): void {
    this.#timedOut = true;
    this.#controller?.abort(new DOMException("The operation timed out.", "TimeoutError"));
    this.release();
  }

  release(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#caller?.removeEventListener("abort", this);
  }
}

function onDeadline(d: Deadline): void {
  d.expire();
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
