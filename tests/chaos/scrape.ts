/**
 * What the soak reads from an operator replica's own endpoints, once a second: its /metrics (the counters the
 * checks add up, and leader_election_master_status) and its /readyz. Imports nothing that needs a cluster.
 */
import type { ProcessRecord } from "./operators.ts";

/** What a scrape round reads and writes of a replica's record. */
export type Scraped = Pick<ProcessRecord, "port" | "scrape" | "scrapedAt" | "ready" | "readyAt" | "readySeenAt">;

export interface Scrape {
  reconciles: number;
  reconcileErrors: number;
  /** rest_client_requests_total by "METHOD CODE". */
  requests: Record<string, number>;
  leading?: number;
}

export function parseScrape(text: string): Scrape {
  const s: Scrape = { reconciles: 0, reconcileErrors: 0, requests: {} };
  for (const line of text.split("\n")) {
    const value = Number(line.split(" ").at(-1));
    if (line.startsWith("controller_runtime_reconcile_total{")) s.reconciles += value;
    else if (line.startsWith("controller_runtime_reconcile_errors_total{")) s.reconcileErrors += value;
    else if (line.startsWith("leader_election_master_status{")) s.leading = value;
    else if (line.startsWith("rest_client_requests_total{")) {
      const method = /method="([^"]*)"/.exec(line)?.[1] ?? "?";
      const code = /code="([^"]*)"/.exec(line)?.[1] ?? "?";
      s.requests[`${method} ${code}`] = (s.requests[`${method} ${code}`] ?? 0) + value;
    }
  }
  return s;
}

/**
 * One scrape round over the live replicas (in parallel): each that answers gets its /metrics (`scrape`, `scrapedAt`
 * = `round`) and its /readyz (`ready`, `readySeenAt`); one that does not (not listening yet, or exiting) is not
 * ready, and its `scrape` stays the last it answered: a leader that stopped serving as it exits (a SIGTERM handover)
 * still shows leading=1 there until its exit is seen, which is why only `scrapedAt === round` says what it reports now.
 */
export async function scrapeRound(
  live: readonly Scraped[],
  round: number,
  get: (url: string, init: { signal: AbortSignal }) => Promise<Response>,
): Promise<void> {
  await Promise.all(
    live.map(async (rec) => {
      try {
        const base = `http://127.0.0.1:${rec.port}`;
        rec.scrape = parseScrape(await (await get(`${base}/metrics`, { signal: AbortSignal.timeout(2000) })).text());
        rec.scrapedAt = round;
        rec.ready = (await get(`${base}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200;
        if (rec.ready) {
          rec.readyAt ??= Date.now();
          rec.readySeenAt = round;
        }
      } catch {
        rec.ready = false; // not listening yet, or exiting
      }
    }),
  );
}
