/**
 * The operator's metrics and health endpoints (http.ts) as runnables of a runtime Manager. Imports no operator code.
 *
 * Properties:
 * - Listening when serveEndpoints returns; `onListening` then has the bound URLs (port 0 picks a free one).
 * - One server when both addresses are the same fixed address, as a pod's probes and scrapes may share a port.
 * - Each server is a runnable that closes it when the manager stops.
 */
import { onStop, type Runnable } from "../runtime/manager.ts";
import type { Logger } from "../runtime/logger.ts";
import { type Probe, startServer } from "./http.ts";

export interface Address {
  hostname: string;
  port: number;
}

export interface EndpointOptions {
  /** Where /metrics (and the probes) are served; undefined: not served. */
  metricsAt?: Address;
  /** Where /healthz and /readyz (and /metrics) are served; undefined: not served. */
  healthAt?: Address;
  readyz: Probe;
  /** The Prometheus text exposition. */
  metrics: () => string;
  logger: Logger;
  onListening?: (urls: { metrics?: string; health?: string }) => void;
}

export function serveEndpoints(o: EndpointOptions): Runnable[] {
  const runnables: Runnable[] = [];
  const serve = (addr: Address, what: string): string => {
    const s = startServer({ ...addr, healthz: () => true, readyz: o.readyz, metrics: o.metrics });
    runnables.push(onStop(`${what} server ${s.url}`, () => s.stop()));
    return s.url;
  };
  const { metricsAt: m, healthAt: h } = o;
  const shared = !!m && !!h && m.port !== 0 && m.port === h.port && m.hostname === h.hostname;
  const urls: { metrics?: string; health?: string } = {};
  if (m) urls.metrics = serve(m, "metrics");
  if (h) urls.health = shared ? urls.metrics : serve(h, "health");
  o.onListening?.(urls);
  if (urls.metrics || urls.health) o.logger.info("serving /healthz, /readyz and /metrics", urls);
  return runnables;
}
