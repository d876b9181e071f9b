import { describe, expect, test } from "bun:test";
import type { RolloutRecord } from "../../api/rollout-history.ts";
import type { WebAppObject } from "../../api/webapp.ts";
import { historyTable, revisionDetail } from "./rollout-history.ts";

const NOW = Date.parse("2026-12-05T12:00:00Z");
const RECORDS: RolloutRecord[] = [
  { revision: 1, image: "app:v1", digest: "d1", startedAt: "2026-12-05T10:00:00Z", readyAt: "2026-12-05T10:00:12Z" },
  {
    revision: 2,
    image: "app:v1",
    digest: "d1",
    restartedAt: "2026-12-05T11:00:00Z",
    startedAt: "2026-12-05T11:00:01Z",
    readyAt: "2026-12-05T11:00:31Z",
  },
  {
    revision: 3,
    image: "app:v2",
    digest: "d2",
    startedAt: "2026-12-05T11:50:00Z",
    failedAt: "2026-12-05T11:51:05Z",
    reason: "CrashLoopBackOff",
    message: "pod p: back-off restarting failed container",
  },
];
const app = (rollouts?: RolloutRecord[]): WebAppObject => ({
  metadata: { name: "shop" },
  spec: { image: "app:v2", port: 80 },
  status: rollouts ? { rollouts, lastReadyRevision: 2 } : {},
});

describe("rollout history", () => {
  test("one row per revision, oldest first: result, how long it took, age, and which is a restart, last ready, current", () => {
    expect(historyTable(app(RECORDS), NOW).split("\n")).toEqual([
      "REVISION   IMAGE    RESULT                      TOOK   AGE    NOTE",
      "1          app:v1   Ready                       12s    120m   ",
      "2          app:v1   Ready                       30s    59m    restart, last ready",
      "3          app:v2   Failed (CrashLoopBackOff)   65s    10m    current",
    ]);
  });

  test("a WebApp without history says so", () => {
    expect(historyTable(app(), NOW)).toBe(
      'No rollout history for webapp "shop" yet (the operator records a revision when it rolls one out)',
    );
  });

  test("--revision N shows the record in full; an unknown one is an error listing those there are", () => {
    expect(revisionDetail(app(RECORDS), 3)).toBe(
      [
        'webapp "shop" revision 3: Failed (CrashLoopBackOff)',
        "  Image:       app:v2",
        "  Digest:      d2",
        "  Started:     2026-12-05T11:50:00Z",
        "  Failed:      2026-12-05T11:51:05Z (CrashLoopBackOff)",
        "  Message:     pod p: back-off restarting failed container",
      ].join("\n"),
    );
    expect(() => revisionDetail(app(RECORDS), 7)).toThrow(
      '--revision 7: webapp "shop" has no such revision (it has: 1, 2, 3)',
    );
  });
});
