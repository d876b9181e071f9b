import { describe, expect, test } from "bun:test";
import type { Fleet, ProcessRecord } from "./operators.ts";
import { processChecks } from "./checks.ts";
import { explainExit, type FaultRecord } from "./faults.ts";

const lease = { durationMs: 6_000, renewMs: 4_000, retryMs: 1_000 };
const fault = (kind: FaultRecord["kind"], startedAt: number, endedAt: number, leaderPid?: number): FaultRecord => ({
  kind,
  startedAt,
  endedAt,
  detail: "",
  ...(leaderPid ? { leaderPid } : {}),
});
const proc = (pid: number, startedAt = 0) => ({ pid, startedAt });

describe("which operator exits a fault explains", () => {
  const freeze = fault("apiserver-freeze-past-renew-deadline", 100_000, 115_000, 7);

  test("a lease lost by the replica that led into a freeze past the renew deadline, during it or right after", () => {
    expect(explainExit([freeze], lease, proc(7), "lease-lost", 105_000)).toMatch(/lost the lease it held into fault 1/);
    expect(explainExit([freeze], lease, proc(7), "lease-lost", 124_000)).toBeDefined();
  });

  test("not a lease lost by another replica, long after the outage, before it, or in a short freeze", () => {
    expect(explainExit([freeze], lease, proc(8), "lease-lost", 105_000)).toBeUndefined();
    expect(explainExit([freeze], lease, proc(7), "lease-lost", 126_000)).toBeUndefined();
    expect(explainExit([freeze], lease, proc(7), "lease-lost", 99_000)).toBeUndefined();
    const short = fault("apiserver-freeze", 100_000, 102_000, 7);
    expect(explainExit([short], lease, proc(7), "lease-lost", 101_000)).toBeUndefined();
  });

  test("a restart counts only when the API server was away for longer than the renew deadline allows", () => {
    const quick = fault("apiserver-restart", 100_000, 102_000, 7);
    const slow = fault("apiserver-restart", 100_000, 104_000, 7);
    expect(explainExit([quick], lease, proc(7), "lease-lost", 102_500)).toBeUndefined();
    expect(explainExit([slow], lease, proc(7), "lease-lost", 103_500)).toBeDefined();
  });

  test("a failed start only when it began inside an outage; a crash or a kill is never explained by a fault", () => {
    expect(explainExit([freeze], lease, proc(9, 106_000), "start-failed", 110_000)).toMatch(/started inside fault 1/);
    expect(explainExit([freeze], lease, proc(9, 116_000), "start-failed", 118_000)).toBeUndefined();
    expect(explainExit([freeze], lease, proc(7), "crash", 105_000)).toBeUndefined();
    expect(
      explainExit([fault("kill-leader", 100_000, 101_000, 7)], lease, proc(7), "lease-lost", 100_500),
    ).toBeUndefined();
  });
});

test("a single scrape round with two leaders fails the leadership invariant", () => {
  const fleet = (rounds: number) =>
    ({
      history: [] as ProcessRecord[],
      dualLeadership: { rounds, longestRun: rounds, seen: ["t: pids 1, 2 both leading"] },
    }) as unknown as Fleet;
  const check = (rounds: number) =>
    processChecks(fleet(rounds), []).checks.find((c) => c.name.startsWith("never two leaders"));
  expect(check(0)?.ok).toBe(true);
  expect(check(1)).toMatchObject({
    ok: false,
    problems: ["1 scrape round(s) saw two replicas leading", "t: pids 1, 2 both leading"],
  });
});
