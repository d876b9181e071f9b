import { expect, test } from "bun:test";
import { kube, NAMESPACES } from "../_support.ts";
import { waitOutRetryBacklog } from "./_retry-gate.ts";

test("the retry gate's probe fails its first sync on the quota, is retried once the quota is gone, and leaves nothing", async () => {
  const before = new Set((await kube.list(NAMESPACES)).items.map((n) => n.metadata.name));
  const waited = await waitOutRetryBacklog(kube, 60_000);
  expect(waited).toBeGreaterThan(0);
  expect(waited).toBeLessThan(60_000);
  const gates = (await kube.list(NAMESPACES)).items.filter(
    (n) => n.metadata.name?.startsWith("retry-gate-") && !before.has(n.metadata.name),
  );
  expect(gates.every((n) => n.metadata.deletionTimestamp !== undefined)).toBe(true);
}, 90_000);
