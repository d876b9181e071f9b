import { expect, test } from "bun:test";
import { kube, NAMESPACES } from "../_support.ts";
import { waitOutRetryBacklog } from "./_retry-gate.ts";

test("the retry gate's probe fails its first sync on the quota, is retried once the quota is gone, and leaves nothing", async () => {
  const before = new Set((await kube.list(NAMESPACES)).items.map((n) => n.metadata.name));
  // The suite's own earlier faults may have left the controller-manager a backlog: the gate's limit, not a tighter one.
  const waited = await waitOutRetryBacklog(kube, 240_000);
  expect(waited).toBeGreaterThan(0);
  const gates = (await kube.list(NAMESPACES)).items.filter(
    (n) => n.metadata.name?.startsWith("retry-gate-") && !before.has(n.metadata.name),
  );
  expect(gates.every((n) => n.metadata.deletionTimestamp !== undefined)).toBe(true);
}, 300_000);
