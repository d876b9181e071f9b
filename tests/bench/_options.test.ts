import { expect, test } from "bun:test";
import { OptionsError, parseOptions, SCENARIOS } from "./_options.ts";

test("without flags every scenario runs at the issue's sizes and the report goes to BENCHMARKS.md", () => {
  const o = parseOptions([], "/repo");
  expect(o.scenarios).toEqual([...SCENARIOS]);
  expect(o.sizes).toEqual([100, 1000]);
  expect(o.memoryLarge).toBe(10_000);
  expect(o.healTrials).toBeGreaterThanOrEqual(100);
  expect(o.out).toBe("/repo/BENCHMARKS.md");
  // 3 repeats at the largest size, 5 below it (short runs, relatively more noise); --quick 1 of each.
  expect([o.repeats, o.smallRepeats]).toEqual([3, 5]);
  const q = parseOptions(["--quick", "--small-repeats", "2"], "/repo");
  expect([q.repeats, q.smallRepeats]).toEqual([1, 2]);
});

test("--quick shrinks the sizes and writes no report file unless --out is given", () => {
  const o = parseOptions(["--quick"], "/repo");
  expect(Math.max(...o.sizes)).toBeLessThan(1000);
  expect(o.out).toBeUndefined();
  expect(parseOptions(["--quick", "--out", "x.md"], "/repo").out).toBe("x.md");
});

test("--warm runs the warm-up bursts and, unless --out is given, writes no report file", () => {
  expect(parseOptions([], "/repo").warm).toBe(false);
  const o = parseOptions(["--warm", "--scenario", "convergence"], "/repo");
  expect(o.warm).toBe(true);
  expect(o.out).toBeUndefined();
  expect(parseOptions(["--warm", "--out=w.md"], "/repo").out).toBe("w.md");
});

test("explicit flags win over --quick, in either order, with or without '='", () => {
  expect(parseOptions(["--n", "500", "--quick"], "/r").sizes).toEqual([100, 500]);
  expect(parseOptions(["--quick", "--n=50"], "/r").sizes).toEqual([50]);
  expect(parseOptions(["--scenario", "heal,startup", "--scenario=heal"], "/r").scenarios).toEqual(["heal", "startup"]);
});

test("an unknown scenario or a bad number is an error naming what is accepted", () => {
  expect(() => parseOptions(["--scenario", "speed"], "/r")).toThrow(/choose from convergence/);
  expect(() => parseOptions(["--n", "ten"], "/r")).toThrow(OptionsError);
  expect(() => parseOptions(["--frobnicate"], "/r")).toThrow(/unknown option/);
});

test("the Go peer runs beside devctl unless --no-peer is given; the last of --peer and --no-peer wins", () => {
  expect(parseOptions([], "/r").peer).toBe(true);
  expect(parseOptions(["--quick"], "/r").peer).toBe(true);
  expect(parseOptions(["--no-peer"], "/r").peer).toBe(false);
  expect(parseOptions(["--no-peer", "--peer"], "/r").peer).toBe(true);
});

test("the busy-machine convergence runs at 500 (or a smaller largest size) with the peer, not without it; --busy-n wins", () => {
  expect(parseOptions([], "/r").busyN).toBe(500);
  expect(parseOptions(["--quick"], "/r").busyN).toBe(100);
  expect(parseOptions(["--no-peer"], "/r").busyN).toBe(0);
  expect(parseOptions(["--busy-n", "500", "--no-peer"], "/r").busyN).toBe(500);
  expect(parseOptions(["--busy-n=0"], "/r").busyN).toBe(0);
});
