import { expect, test } from "bun:test";
import { type Scraped, scrapeRound } from "./scrape.ts";

const record = (port: number): Scraped => ({ port, ready: false });
const metrics = (leading: number) =>
  `leader_election_master_status{name="webapp-operator-lock"} ${leading}\ncontroller_runtime_reconcile_total{controller="webapp",result="success"} 7\n`;

test("a replica whose scrape fails keeps its last counters, is not ready, and is not counted as answering this round", async () => {
  const old = record(1001);
  const next = record(1002);
  // Round 1: only the old leader serves, leading.
  await scrapeRound([old], 1000, async (url) =>
    url.endsWith("/metrics") ? new Response(metrics(1)) : new Response("ok"),
  );
  expect([old.scrapedAt, old.ready, old.scrape?.leading]).toEqual([1000, true, 1]);
  // Round 2: the old leader stopped serving as it exits (its exit not seen yet); the standby now leads.
  await scrapeRound([old, next], 2000, async (url) => {
    if (url.includes(":1001/")) throw new Error("connection refused");
    return url.endsWith("/metrics") ? new Response(metrics(1)) : new Response("ok");
  });
  expect([old.scrapedAt, old.ready, old.scrape?.leading, old.scrape?.reconciles]).toEqual([1000, false, 1, 7]);
  expect([next.scrapedAt, next.ready, next.readySeenAt]).toEqual([2000, true, 2000]);
  const leadingNow = [old, next].filter((r) => r.scrapedAt === 2000 && r.scrape?.leading === 1);
  expect(leadingNow).toEqual([next]);
});

test("a replica that answers /metrics but not /readyz with 200 is scraped and not ready", async () => {
  const r = record(1003);
  await scrapeRound([r], 5, async (url) =>
    url.endsWith("/metrics") ? new Response(metrics(0)) : new Response("not synced", { status: 503 }),
  );
  expect([r.scrapedAt, r.ready, r.readySeenAt, r.scrape?.leading]).toEqual([5, false, undefined, 0]);
});
