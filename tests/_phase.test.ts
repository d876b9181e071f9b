import { describe, expect, test } from "bun:test";
import { describeFailure, judgePhase, parseJunit, parseSummary } from "./_phase.ts";

const junit = (cases: string) => `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test">
  <testsuite name="a.test.ts" file="a.test.ts">
${cases}
  </testsuite>
</testsuites>`;
const pass = (name: string, file = "a.test.ts") => `<testcase name="${name}" classname="" file="${file}" line="1" />`;
const skip = (name: string, classname = "") =>
  `<testcase name="${name}" classname="${classname}" file="a.test.ts" line="1"><skipped /></testcase>`;
const fail = (name: string) =>
  `<testcase name="${name}" classname="" file="a.test.ts" line="1"><failure message="x">x</failure></testcase>`;
const summary = (p: number, f: number, s = 0) =>
  `a.test.ts:\n ${p} pass\n${s ? ` ${s} skip\n` : ""} ${f} fail\nRan ${p + f + s} tests across 1 file. [5.00ms]`;
const base = { exitCode: 0, files: ["a.test.ts"], skipLog: [], ci: false };

describe("the verdict on a bun test phase", () => {
  test("reads bun's summary and JUnit cases, with describe scopes innermost first and entities decoded", () => {
    expect(parseSummary(summary(2, 1, 3))).toEqual({ pass: 2, fail: 1, skip: 3, ran: 6, files: 1 });
    expect(parseSummary("a.test.ts:\n(pass) x\n")).toBeUndefined();
    expect(parseJunit(junit(skip("deep &amp; &quot;q&quot;", "inner &gt; outer")))).toEqual([
      { file: "a.test.ts", scopes: ["inner", "outer"], name: 'deep & "q"', outcome: "skipped" },
    ]);
  });

  test("a clean phase counts what bun reported", () => {
    const v = judgePhase({ ...base, output: summary(2, 1), junit: junit(pass("a") + pass("b") + fail("c")) });
    expect(v).toEqual({
      passed: 2,
      failed: 1,
      skipped: 0,
      problems: [],
      skips: [],
      failures: [{ test: "a.test.ts > c", message: "x" }],
    });
  });

  test("a phase that ended without bun's summary or report fails, whatever the exit code", () => {
    const v = judgePhase({ ...base, output: "a.test.ts:\n(pass) a\n", junit: undefined });
    expect(v.failed).toBe(2);
    expect(v.problems.join("\n")).toMatch(/no summary[\s\S]*no JUnit report/);
  });

  test("a selected file with no test in the report fails, and so does a phase of zero tests", () => {
    const v = judgePhase({
      ...base,
      files: ["a.test.ts", "empty.test.ts"],
      output: summary(1, 0),
      junit: junit(pass("a")),
    });
    expect(v.problems).toEqual([expect.stringMatching(/^empty\.test\.ts: no test of it ran/)]);
    expect(v.failed).toBe(1);
    const none = judgePhase({ ...base, files: [], output: summary(0, 0), junit: junit("") });
    expect(none.problems).toEqual(["zero tests ran"]);
  });

  test("a summary that disagrees with the report fails", () => {
    const v = judgePhase({ ...base, output: summary(3, 0), junit: junit(pass("a")) });
    expect(v.problems).toEqual([expect.stringContaining("disagrees with its JUnit report")]);
  });

  test("a skip without a recorded reason fails; one with a reason counts as skipped, or as failed on CI", () => {
    const phase = { ...base, output: summary(0, 0, 2), junit: junit(skip("t1") + skip("t2", "the block")) };
    const unexplained = judgePhase({ ...phase, skipLog: [{ name: "t1", reason: "needs x", prerequisite: true }] });
    expect(unexplained.problems).toEqual([expect.stringMatching(/the block > t2: skipped without a reason/)]);
    const log = [
      { name: "t1", reason: "needs x", prerequisite: true as const },
      { name: "the block", reason: "needs y", prerequisite: true as const },
    ];
    const local = judgePhase({ ...phase, skipLog: log });
    expect({ failed: local.failed, skipped: local.skipped, reasons: local.skips.map((s) => s.reason) }).toEqual({
      failed: 0,
      skipped: 2,
      reasons: ["needs x", "needs y"],
    });
    const ci = judgePhase({ ...phase, skipLog: log, ci: true });
    expect({ failed: ci.failed, skipped: ci.skipped }).toEqual({ failed: 2, skipped: 0 });
  });

  test("bun exiting non-zero with every test passed fails", () => {
    const v = judgePhase({ ...base, exitCode: 1, output: summary(1, 0), junit: junit(pass("a")) });
    expect(v.problems).toEqual(["bun exited 1 outside any test"]);
  });

  test("a failed test keeps bun's message, repeated at the end of the run up to a bound of lines", () => {
    const message = "expect(received).toEqual(expected)&#10;&#10;-   &quot;code&quot;: 0,&#10;+   &quot;code&quot;: 1,";
    const xml = junit(
      `<testcase name="t" classname="inner &gt; outer" file="a.test.ts" line="1"><failure type="AssertionError" message="${message}">AssertionError: at a.test.ts:2</failure></testcase>`,
    );
    const [f] = judgePhase({ ...base, output: summary(0, 1), junit: xml }).failures;
    expect(f).toEqual({
      test: "a.test.ts > outer > inner > t",
      message: 'expect(received).toEqual(expected)\n\n-   "code": 0,\n+   "code": 1,',
    });
    expect(describeFailure(f ?? { test: "", message: "" }, 3)).toBe(
      'failed: a.test.ts > outer > inner > t\n    expect(received).toEqual(expected)\n\n    -   "code": 0,\n    ... (1 more line: see the test\'s output above)',
    );
  });
});
