import { expect, test } from "bun:test";
import type { Context, Figure, Section } from "./_context.ts";
import { forImpl, goalsOf, join, ratioTable } from "./_compare.ts";

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
