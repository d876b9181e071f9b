import { describe, expect, test } from "bun:test";
import { parseArgs } from "citty";
import { metricsSecurity, runArgs } from "../cli/operator/run.ts";
import { localOperatorArgs } from "./_start-steps.ts";

/** What `operator run` reads of its parsed flags to check the metrics and probe addresses. */
type Flags = Parameters<typeof metricsSecurity>[0];
const parse = (flags: string[]) => parseArgs(flags, runArgs) as unknown as Flags;

describe("npm start's local operator (no real node)", () => {
  const addr = "127.0.0.1:43421";
  const [group, command, ...flags] = localOperatorArgs(addr);

  test("is `devctl operator run`, whose checks accept its flags: probes and plain-HTTP metrics on one address", () => {
    expect([group, command]).toEqual(["operator", "run"]);
    const args = parse(flags);
    expect(args["metrics-bind-address"]).toBe(addr);
    expect(args["health-probe-bind-address"]).toBe(addr);
    expect(metricsSecurity(args)).toEqual({});
  });

  test("the same address without --metrics-secure=false is refused, as it was before this was set", () => {
    const args = parse(flags.filter((f) => f !== "--metrics-secure=false"));
    expect(() => metricsSecurity(args)).toThrow(/both 127\.0\.0\.1:43421/);
  });
});
