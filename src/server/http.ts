/**
 * The operator's HTTP endpoints, on Bun.serve. It imports no operator code: everything it reports
 * comes from the callbacks it is given.
 *
 * - GET /healthz, /readyz: 200 "ok" when the probe returns true; 500 with the probe's reason (a
 *   string) otherwise, or with the error message when the probe throws.
 * - GET /metrics: the callback's text as `text/plain; version=0.0.4` (Prometheus text format), only the families
 *   `name[]` asks for if it is given (familiesAsked); 404 without one
 *   (secure metrics are served by https.ts, never here). An exposition given in chunks is streamed a chunk per turn
 *   of the event loop, so a large one never holds up the operator's other work: 10,000 WebApps' series (6 MB, ~80 ms
 *   to produce) held it for 50-90 ms in one go, and for at most 3-10 ms at a time once each chunk waited its turn.
 * - HEAD is answered like GET without a body; other methods get 405, other paths 404.
 * - Port 0 picks a free port; the returned `url` and `port` say which.
 * - `stop()` closes the listener and open connections.
 */
import { messageOf } from "../kube/errors.ts";

/** true when fine, otherwise the reason (shown to the prober). */
export type Probe = () => true | string;

export interface ServerOptions {
  /** Default "0.0.0.0" (all interfaces, as a pod needs for kubelet probes). */
  hostname?: string;
  port: number;
  healthz: Probe;
  readyz: Probe;
  /** Undefined: /metrics is not served here (it is served securely elsewhere) and answers 404. */
  metrics?: Exposition;
}

export interface RunningServer {
  /** e.g. "http://127.0.0.1:8080". */
  readonly url: string;
  readonly port: number;
  stop(): Promise<void>;
}

const TEXT = "text/plain; charset=utf-8";
const METRICS = "text/plain; version=0.0.4; charset=utf-8";

/** An error's message, or the thrown value as text. */

function probeResponse(probe: Probe, name: string): Response {
  let result: true | string;
  try {
    result = probe();
  } catch (err) {
    result = `${name} check failed: ${messageOf(err)}`;
  }
  if (result === true) return new Response("ok", { headers: { "content-type": TEXT } });
  return new Response(result || `${name} check failed`, { status: 500, headers: { "content-type": TEXT } });
}

/**
 * The Prometheus exposition: all of it, or chunks of whole lines streamed as they are made (Registry.exposeChunks);
 * with `only`, just the families of those names.
 */
export type Exposition = (only?: ReadonlySet<string>) => string | Iterable<string>;

/**
 * `/metrics?name[]=A&name[]=B`: only the families A and B, for a tool that polls a few series often (the 10,000
 * WebApps' series cost ~100 ms of CPU per scrape; a Prometheus scrape every 30 s reads everything). Undefined: all.
 */
export function familiesAsked(url: URL): ReadonlySet<string> | undefined {
  const names = url.searchParams.getAll("name[]");
  return names.length > 0 ? new Set(names) : undefined;
}

/**
 * The Prometheus exposition, or 500 with why collecting it failed. Chunks are streamed: the first is made before
 * the response starts (a collector that fails at once is a 500); a failure later cuts the body short, which a
 * scraper reports as a failed scrape.
 */
export function metricsResponse(metrics: Exposition, only?: ReadonlySet<string>): Response {
  try {
    const text = metrics(only);
    if (typeof text === "string") return new Response(text, { headers: { "content-type": METRICS } });
    const chunks = text[Symbol.iterator]();
    const first = chunks.next();
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        if (first.done) controller.close();
        else controller.enqueue(encoder.encode(first.value));
      },
      async pull(controller) {
        await new Promise((resolve) => setImmediate(resolve)); // let I/O and timers run between chunks
        const next = chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
    });
    return new Response(body, { headers: { "content-type": METRICS } });
  } catch (err) {
    return new Response(`collecting metrics failed: ${messageOf(err)}`, {
      status: 500,
      headers: { "content-type": TEXT },
    });
  }
}

function route(opts: ServerOptions, url: URL): Response {
  const path = url.pathname;
  switch (path) {
    case "/healthz":
      return probeResponse(opts.healthz, "healthz");
    case "/readyz":
      return probeResponse(opts.readyz, "readyz");
    case "/metrics":
      if (opts.metrics) return metricsResponse(opts.metrics, familiesAsked(url));
      return new Response("not found: /metrics is served over HTTPS on the metrics address\n", {
        status: 404,
        headers: { "content-type": TEXT },
      });
    default:
      return new Response(`not found; try /healthz, /readyz${opts.metrics ? " or /metrics" : ""}\n`, {
        status: 404,
        headers: { "content-type": TEXT },
      });
  }
}

export function startServer(opts: ServerOptions): RunningServer {
  const hostname = opts.hostname ?? "0.0.0.0";
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({
      hostname,
      port: opts.port,
      development: false,
      reusePort: false, // a second process on the same port is an error, not a silent load balancer
      fetch(req) {
        if (req.method !== "GET" && req.method !== "HEAD") {
          return new Response("method not allowed\n", {
            status: 405,
            headers: { allow: "GET, HEAD", "content-type": TEXT },
          });
        }
        const res = route(opts, new URL(req.url));
        return req.method === "HEAD" ? new Response(null, { status: res.status, headers: res.headers }) : res;
      },
      error(err) {
        return new Response(`internal error: ${err.message}`, { status: 500, headers: { "content-type": TEXT } });
      },
    });
  } catch (err) {
    throw new Error(
      `cannot listen on ${hostname}:${opts.port} (${messageOf(err)}); choose a free port or another address`,
      { cause: err },
    );
  }
  const port = server.port ?? opts.port;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    stop: async () => {
      await server.stop(true);
    },
  };
}
