/**
 * The operator's metrics and health endpoints (http.ts, https.ts) as runnables of a runtime Manager. Imports no
 * operator code.
 *
 * Properties:
 * - Listening when serveEndpoints resolves; `onListening` then has the bound URLs (port 0 picks a free one).
 * - Plain metrics (no `secure`): one server when both addresses are the same fixed address, as a pod's probes and
 *   scrapes may share a port. Secure metrics: HTTPS with authentication and authorization (https.ts), /metrics
 *   only; the probes stay plain HTTP on their own address (the kubelet probes without a token), so the two
 *   addresses must differ.
 * - With `secure.certDir`, a changed certificate there is served from the next connection on (cert-dir.ts).
 * - Each server is a runnable that closes it (and stops watching its certificate) when the manager stops.
 */
import type { Clock } from "../runtime/clock.ts";
import type { Logger } from "../runtime/logger.ts";
import { onStop, type Runnable } from "../runtime/manager.ts";
import { watchCertDir } from "./cert-dir.ts";
import { type Exposition, type Probe, startServer } from "./http.ts";
import { startSecureServer } from "./https.ts";
import type { RequestAuth } from "./request-auth.ts";
import type { PemPair } from "./self-signed.ts";

export interface Address {
  hostname: string;
  port: number;
}

export interface SecureMetrics {
  tls: PemPair;
  /** Where `tls` was read from, watched for a renewed certificate; undefined for a self-signed one. */
  certDir?: string;
  auth: RequestAuth;
  http2: boolean;
  clock: Clock;
}

export interface EndpointOptions {
  /** Where /metrics (and, unless secure, the probes) are served; undefined: not served. */
  metricsAt?: Address;
  /** Where /healthz and /readyz (and, unless secure, /metrics) are served; undefined: not served. */
  healthAt?: Address;
  /** HTTPS and a bearer token for /metrics; undefined: plain HTTP for anyone who can reach it. */
  secure?: SecureMetrics;
  readyz: Probe;
  /** The Prometheus text exposition. */
  metrics: Exposition;
  logger: Logger;
  onListening?: (urls: { metrics?: string; health?: string }) => void;
}

const sameAddress = (a: Address, b: Address) => a.port !== 0 && a.port === b.port && a.hostname === b.hostname;

export async function serveEndpoints(o: EndpointOptions): Promise<Runnable[]> {
  const runnables: Runnable[] = [];
  const serve = (addr: Address, what: string): string => {
    // Plain /metrics only when metrics are not secure: the health port must not hand them out without a token.
    const s = startServer({
      ...addr,
      healthz: () => true,
      readyz: o.readyz,
      ...(o.secure ? {} : { metrics: o.metrics }),
    });
    runnables.push(onStop(`${what} server ${s.url}`, () => s.stop()));
    return s.url;
  };
  const { metricsAt: m, healthAt: h, secure } = o;
  if (secure && m && h && sameAddress(m, h))
    throw new Error(
      `secure metrics and the health probes cannot share ${m.hostname}:${m.port}: the probes are plain HTTP`,
    );
  const urls: { metrics?: string; health?: string } = {};
  try {
    if (m) urls.metrics = secure ? await serveSecure(m, secure, o, runnables) : serve(m, "metrics");
    if (h) urls.health = !secure && m && sameAddress(m, h) ? urls.metrics : serve(h, "health");
  } catch (e) {
    await Promise.all(runnables.map((r) => r.start(AbortSignal.abort()).catch(() => {})));
    throw e;
  }
  o.onListening?.(urls);
  if (urls.metrics || urls.health)
    o.logger.info(
      secure
        ? "serving /metrics over HTTPS to authorized bearer tokens, /healthz and /readyz"
        : "serving /healthz, /readyz and /metrics",
      urls,
    );
  return runnables;
}

async function serveSecure(addr: Address, s: SecureMetrics, o: EndpointOptions, runnables: Runnable[]) {
  const server = await startSecureServer({
    ...addr,
    tls: s.tls,
    auth: s.auth,
    metrics: o.metrics,
    http2: s.http2,
    logger: o.logger,
  });
  const stopWatching = s.certDir
    ? watchCertDir(s.certDir, { clock: s.clock, logger: o.logger, onChange: (pair) => server.reload(pair) })
    : () => {};
  runnables.push(
    onStop(`metrics server ${server.url}`, async () => {
      stopWatching();
      await server.stop();
    }),
  );
  return server.url;
}
