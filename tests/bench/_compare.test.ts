import { expect, test } from "bun:test";
import type { Context, Figure, Section } from "./_context.ts";
import { alternated, forImpl, goalsOf, join, type Parted, ratioTable, turnOrder } from "./_compare.ts";

const fig = (name: string, value: number): Figure => ({ name, value, show: (x) => `${x} ms` });
const section = (over: Partial<Section>): Section => ({
  id: "heal",
  title: "4. Heal latency",
  verdict: "met",
  headline: "h",
  tables: [{ caption: "trials", head: ["a"], rows: [["1"]] }],
  notes: ["devctl note"],
  ...over,
});

test("the ratio table divides devctl's figure by the peer's and says n/a where the peer has none", () => {
  const t = ratioTable([fig("p50", 20), fig("p99", 90), fig("writes", 0)], [fig("p50", 40), fig("writes", 0)]);
  expect(t.head).toEqual(["figure", "devctl", "Go peer", "devctl / Go"]);
  expect(t.rows).toEqual([
    ["p50", "20 ms", "40 ms", "**0.50**"],
    ["p99", "90 ms", "n/a", "n/a"],
    ["writes", "0 ms", "0 ms", "0 / 0"],
  ]);
});

test("a joined section keeps devctl's verdict and headline and labels the peer's tables", () => {
  const j = join(
    section({ figures: [fig("p50", 10)] }),
    section({ verdict: "missed", headline: "peer", figures: [fig("p50", 20)] }),
  );
  expect(j.verdict).toBe("met");
  expect(j.headline).toBe("h");
  expect(j.tables.map((t) => t.caption)).toEqual([
    expect.stringContaining("devctl beside"),
    "trials",
    "Go peer: trials",
  ]);
  expect(j.failed).toBeUndefined();
  expect(join(section({}), section({ failed: true })).failed).toBe(true);
});

test("a context for one operator starts that operator by default and lists only it", async () => {
  const started: unknown[] = [];
  const base = {
    impls: ["devctl", "peer"],
    fixture: undefined,
    operator: async (...a: unknown[]) => started.push(a),
  } as unknown as Context;
  const peer = forImpl(base, "peer");
  expect(peer.impls).toEqual(["peer"]);
  await peer.operator("ns", ["--x"]);
  expect(started).toEqual([["ns", ["--x"], { impl: "peer" }]]);
  peer.fixture = { namespace: "f", floorNamespace: "g", n: 1, image: "i" };
  expect(base.fixture?.namespace).toBe("f");
});

test("the floor is measured in devctl's pass of a comparison and not again in the peer's", () => {
  const base = { impls: ["devctl", "peer"], measuresFloor: true } as unknown as Context;
  expect(forImpl(base, "devctl").measuresFloor).toBe(true);
  expect(forImpl(base, "peer").measuresFloor).toBe(false);
});

test("figures that carry a goal become goals beside the peer's figure; a section without its own goal is judged by them", () => {
  const p99 = (v: number): Figure => ({ ...fig("p99", v), goal: { name: "heal p99", ratioAtMost: 1 } });
  const j = join(
    section({ verdict: "no goal", figures: [p99(30), fig("p50", 10)] }),
    section({ figures: [p99(20), fig("p50", 10)] }),
  );
  expect(j.goals?.map((g) => [g.name, g.ratio, g.verdict])).toEqual([["heal p99", "1.50", "missed"]]);
  expect(j.verdict).toBe("missed");
  expect(goalsOf([p99(30)])[0]?.verdict).toBe("not measured");
});

test("the operators take turns part by part, so that neither always goes first", () => {
  expect([0, 1, 2, 3].map((p) => turnOrder(["devctl", "peer"], p))).toEqual([
    ["devctl", "peer"],
    ["peer", "devctl"],
    ["devctl", "peer"],
    ["peer", "devctl"],
  ]);
  expect(turnOrder(["devctl"], 1)).toEqual(["devctl"]);
});

/** A context over a fixture of 10 that records the calls of a parted scenario and each stop of the operators. */
function recordingContext(impls: string[]) {
  const calls: string[] = [];
  const ctx = {
    impls,
    opts: { sizes: [10] },
    fixture: { namespace: "f", floorNamespace: "g", n: 10, image: "i" },
    log: () => {},
    stopOperators: async () => {
      calls.push("stop");
    },
  } as unknown as Context;
  const scenario: Parted<number[]> = {
    parts: () => 3,
    empty: () => [],
    async measure(c, part, into) {
      calls.push(`${c.impls[0]}:${part}${c.measuresFloor ? "+floor" : ""}`);
      into.push(part);
    },
    report: (c, samples) =>
      section({ headline: `${c.impls[0]} ${samples.join(",")}`, figures: [fig("p99", samples.length)] }),
  };
  return { ctx, calls, scenario };
}

test("an alternated scenario measures every part for each operator in turn, stops them after each, and joins one report each", async () => {
  const { ctx, calls, scenario } = recordingContext(["devctl", "peer"]);
  const joined = await alternated(ctx, scenario);
  expect(calls).toEqual([
    ...["devctl:0+floor", "stop", "peer:0", "stop"],
    ...["peer:1", "stop", "devctl:1+floor", "stop"],
    ...["devctl:2+floor", "stop", "peer:2", "stop"],
  ]);
  expect(joined.headline).toBe("devctl 0,1,2");
  expect(joined.tables[0]?.rows).toEqual([["p99", "3 ms", "3 ms", "**1.00**"]]);
  expect(joined.notes.at(-1)).toContain("took turns");
});

test("an alternated scenario without the peer is devctl's section with its goals judged alone", async () => {
  const { ctx, calls, scenario } = recordingContext(["devctl"]);
  const alone = await alternated(ctx, scenario);
  expect(calls).toEqual(["devctl:0+floor", "stop", "devctl:1+floor", "stop", "devctl:2+floor", "stop"]);
  expect(alone.headline).toBe("devctl 0,1,2");
  expect(alone.tables).toHaveLength(1);
});
