import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { type KstatusCondition, kstatusConditions, kstatusOf, type Progress } from "./kstatus.ts";

const TRUE_ONE = { ready: "Ready", reconciling: "Reconciling", stalled: "Stalled" } as const;
const states: Progress[] = [
  { kind: "ready", reason: "Available", message: "3/3 replicas are ready" },
  { kind: "reconciling", reason: "RollingOut", message: "1 of 3 new replicas have been updated" },
  { kind: "stalled", reason: "ResourceExists", message: "delete it" },
];

describe("kstatusConditions", () => {
  test("Ready, and Reconciling or Stalled only while True (abnormal-true); Ready's reason names the cause", () => {
    const types: Record<Progress["kind"], KstatusCondition["type"][]> = {
      ready: ["Ready"],
      reconciling: ["Ready", "Reconciling"],
      stalled: ["Ready", "Stalled"],
    };
    for (const p of states) {
      const conds = kstatusConditions(p);
      expect(conds.map((c) => c.type)).toEqual(types[p.kind]);
      expect(conds.filter((c) => c.status === "True").map((c) => c.type)).toEqual([TRUE_ONE[p.kind]]);
      expect(conds[0]?.reason).toBe(p.reason);
      expect(conds.every((c) => c.reason.length > 0 && c.message.length > 0)).toBe(true);
    }
  });
});

const obj = (status: unknown, meta: Partial<KubeObject["metadata"]> = {}): KubeObject => ({
  kind: "WebApp",
  metadata: { name: "x", generation: 2, ...meta },
  status,
});

describe("kstatusOf (kstatus's generic rules)", () => {
  test("our three states read as Current, InProgress and Failed", () => {
    const verdicts = states.map((p) => kstatusOf(obj({ observedGeneration: 2, conditions: kstatusConditions(p) })));
    expect(verdicts).toEqual([
      { status: "Current", message: "Resource is Ready" },
      { status: "InProgress", message: "1 of 3 new replicas have been updated" },
      { status: "Failed", message: "delete it" },
    ]);
  });

  test("deletion wins over everything, then an unobserved generation", () => {
    const stalled = { observedGeneration: 1, conditions: kstatusConditions(states[2]!) };
    expect(kstatusOf(obj(stalled, { deletionTimestamp: "2024-05-01T12:00:00Z" })).status).toBe("Terminating");
    expect(kstatusOf(obj(stalled))).toEqual({
      status: "InProgress",
      message: "WebApp generation is 2, but latest observed generation is 1",
    });
  });

  test("Available/Progressing/Degraded alone, or no status at all, are Current: why the kstatus three are needed", () => {
    const old = [
      { type: "Available", status: "False" },
      { type: "Progressing", status: "True" },
      { type: "Degraded", status: "True" },
    ];
    expect(kstatusOf(obj({ observedGeneration: 2, conditions: old })).status).toBe("Current");
    expect(kstatusOf(obj(undefined)).status).toBe("Current");
  });

  test("the first of Reconciling or Stalled in list order decides when both are True", () => {
    const both = [
      { type: "Stalled", status: "True", message: "s" },
      { type: "Reconciling", status: "True", message: "r" },
    ];
    expect(kstatusOf(obj({ conditions: both })).status).toBe("Failed");
    expect(kstatusOf(obj({ conditions: both.toReversed() })).status).toBe("InProgress");
  });
});
