/**
 * The chaos soak (tests/chaos/, `npm run chaos`) in short, for the regular suite: 40 WebApps, about
 * 75 s of churn with every fault kind injected once and only once (API-server restart, expired resourceVersions,
 * short and long freezes, leader kill, standby kill, leader handover), shorter leader-election timings
 * (6/4/1 s) so that failovers fit, then every invariant of the long soak. Skips itself on an
 * external cluster: it restarts, freezes and compacts the local control plane.
 */
import { expect } from "bun:test";
import { rmSync } from "node:fs";
import { LOCAL_CONTROL_PLANE, testWhen } from "../_skip.ts";
import { FAULT_KINDS } from "../chaos/faults.ts";
import { DEFAULT_SOAK, runSoak } from "../chaos/run.ts";
import { formatSummary } from "../chaos/summary.ts";

testWhen(LOCAL_CONTROL_PLANE)(
  "a short soak: 40 WebApps under churn and every kind of fault converge, and every invariant holds, zero orphans included",
  async () => {
    const seed = Math.floor(Math.random() * 1e9);
    const report = await runSoak({
      ...DEFAULT_SOAK,
      minutes: 1.25,
      webapps: 40,
      seed,
      faultGapMs: [1_000, 3_000],
      lease: { durationMs: 6_000, renewMs: 4_000, retryMs: 1_000 },
      maxFaults: FAULT_KINDS.length,
      // Bounds, not typical times (a few seconds): after repeated restarts, the scheduler's and kwok's own
      // informers back off up to ~60 s (client-go), and pods are Ready only after they catch up.
      settleMs: 180_000,
      quietMs: 8_000,
      log: (line) => console.error(line),
    });
    console.error(formatSummary(report));
    expect(FAULT_KINDS.filter((k) => !report.faults.some((f) => f.kind === k))).toEqual([]);
    // Every invariant fails the test, the orphan one included: children the garbage collector misses
    // after an API-server restart are collected by the operator (src/operator/orphans.ts).
    expect(report.checks.length).toBeGreaterThan(10);
    expect(report.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.problems.slice(0, 5).join("; ")}`)).toEqual(
      [],
    );
    expect(report.ok).toBe(true);
    // The operator's logs and its token's kubeconfig are kept for a failed soak only (the log line names them).
    rmSync(report.logDir, { recursive: true, force: true });
  },
  360_000,
);
