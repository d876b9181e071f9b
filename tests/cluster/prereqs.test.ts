import { expect, test } from "bun:test";
import { describeMissing, isPresent, missing, PREREQUISITES, realNodeSupport } from "./prereqs.ts";

test("every prerequisite says what needs it and, where apt has it, which package provides it", () => {
  for (const p of PREREQUISITES) {
    expect(p.why.length).toBeGreaterThan(0);
    expect(p.aptPackage).toMatch(/^[a-z0-9][a-z0-9.+-]+$/);
  }
});

test("a missing tool is described with its purpose and the command that installs it", () => {
  const text = describeMissing([{ command: "frobnicate", aptPackage: "frob", neededBy: "realNode", why: "frobs" }]);
  expect(text).toBe("  - frobnicate: frobs; apt-get install frob");
  expect(isPresent("/definitely/not/here")).toBe(false);
  expect(isPresent("sh")).toBe(true);
});

test("only the tools of the parts asked for are checked", () => {
  const forCluster = missing(["cluster"]).map((p) => p.neededBy);
  expect(forCluster.every((n) => n === "cluster")).toBe(true);
});

test("DEVCTL_REAL_NODE=0 turns the real node off, saying so", () => {
  const before = process.env.DEVCTL_REAL_NODE;
  process.env.DEVCTL_REAL_NODE = "0";
  try {
    expect(realNodeSupport()).toEqual({ kind: "unsupported", reason: "DEVCTL_REAL_NODE=0 is set" });
  } finally {
    if (before === undefined) delete process.env.DEVCTL_REAL_NODE;
    else process.env.DEVCTL_REAL_NODE = before;
  }
});
