/**
 * The verdict on one `bun test` phase of the runner (tests/run.ts), from what bun itself reported: its
 * closing summary ("N pass", "N skip", "N fail", "Ran N tests across M files") and its JUnit report
 * (`--reporter=junit`), which names every test bun collected in every file, with its outcome.
 *
 * Properties (pure; run.ts does the I/O):
 * - Nothing disappears silently: a phase without bun's summary or without its JUnit report (a test
 *   exited the process early, bun crashed), a selected file with no test in the report (zero tests
 *   defined, or it failed to load), a summary that disagrees with the report, or a phase that ran
 *   zero tests is a failure, with a line saying which.
 * - Counting what was defined: bun collects every `test()` of a file before running any, and the report
 *   lists all of them (skipped ones too), so passed + failed + skipped is what the files define; a test
 *   left out with an `if` instead of `testWhen` (tests/_skip.ts) is the one way around it.
 * - Every skip has a one-line reason from the skip log; one without is a failure; on CI a skip for a
 *   missing prerequisite is a failure too.
 * - Every failed test keeps bun's failure message from the report, so that the run can repeat it at its
 *   end, where a CI log cut to its tail still shows why.
 */
import type { SkipRecord } from "./_skip.ts";

export interface TestCase {
  file: string;
  /** Describe blocks, innermost first (bun's `classname`, split on " > "). */
  scopes: string[];
  name: string;
  outcome: "passed" | "failed" | "skipped";
  /** bun's failure message (the assertion and its diff), for a failed test. */
  message?: string;
}

export interface Failure {
  test: string;
  message: string;
}

export interface Skip {
  test: string;
  reason: string | undefined;
  prerequisite: boolean;
}

export interface PhaseVerdict {
  passed: number;
  failed: number;
  skipped: number;
  /** One line each: why this phase fails beyond its failed tests. */
  problems: string[];
  skips: Skip[];
  /** Each failed test with bun's message. */
  failures: Failure[];
}

const decode = (s: string) =>
  s
    .replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)))
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

const attr = (tag: string, name: string) => {
  const v = new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  return v === undefined ? undefined : decode(v);
};

/** Every <testcase> of a bun JUnit report. */
export function parseJunit(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const tag = m[1] ?? "";
    const body = m[3] ?? "";
    const classname = attr(tag, "classname") ?? "";
    const failure = /<(?:failure|error)\b([^>]*)>/.exec(body);
    const outcome = failure ? "failed" : /<skipped\b/.test(body) ? "skipped" : "passed";
    cases.push({
      file: attr(tag, "file") ?? "",
      scopes: classname ? classname.split(" > ") : [],
      name: attr(tag, "name") ?? "",
      outcome,
      ...(failure ? { message: attr(failure[1] ?? "", "message") ?? "" } : {}),
    });
  }
  return cases;
}

export interface Summary {
  pass: number;
  fail: number;
  skip: number;
  ran: number;
  files: number;
}

/** bun's closing summary, or undefined if it printed none. */
export function parseSummary(output: string): Summary | undefined {
  const ran = /^Ran (\d+) tests? across (\d+) files?\./m.exec(output);
  if (!ran) return undefined;
  const count = (word: string) => Number(new RegExp(`^\\s*(\\d+) ${word}$`, "m").exec(output)?.[1] ?? 0);
  return { pass: count("pass"), fail: count("fail"), skip: count("skip"), ran: Number(ran[1]), files: Number(ran[2]) };
}

export interface PhaseInput {
  exitCode: number;
  /** bun's stdout and stderr. */
  output: string;
  /** The JUnit report, undefined if bun wrote none. */
  junit: string | undefined;
  /** The files the phase selected (relative to the repository), undefined when a filter chose them. */
  files: string[] | undefined;
  skipLog: SkipRecord[];
  ci: boolean;
}

export function judgePhase(p: PhaseInput): PhaseVerdict {
  const problems: string[] = [];
  const summary = parseSummary(p.output);
  if (!summary)
    problems.push(
      "bun printed no summary (a test ended the process early, or bun crashed): the tests after it never ran",
    );
  if (p.junit === undefined) problems.push("bun wrote no JUnit report: the phase did not finish");
  const cases = parseJunit(p.junit ?? "");
  const count = (o: TestCase["outcome"]) => cases.filter((c) => c.outcome === o).length;
  const passed = count("passed");
  let failed = count("failed");
  const label = (c: TestCase) => `${c.file} > ${[...c.scopes].reverse().concat(c.name).join(" > ")}`;
  const skipped: Skip[] = cases
    .filter((c) => c.outcome === "skipped")
    .map((c) => {
      const why = p.skipLog.find((r) => r.name === c.name || c.scopes.includes(r.name));
      return { test: label(c), reason: why?.reason, prerequisite: why?.prerequisite ?? false };
    });
  const failures = cases
    .filter((c) => c.outcome === "failed")
    .map((c) => ({ test: label(c), message: c.message ?? "" }));
  if (p.junit !== undefined && cases.length === 0) problems.push("zero tests ran");
  for (const f of p.files ?? [])
    if (p.junit !== undefined && !cases.some((c) => c.file === f))
      problems.push(`${f}: no test of it ran (it defines none, or it failed to load: see its output above)`);
  if (summary && p.junit !== undefined) {
    const have = { pass: passed, fail: failed, skip: skipped.length };
    const said = { pass: summary.pass, fail: summary.fail, skip: summary.skip };
    if (JSON.stringify(have) !== JSON.stringify(said))
      problems.push(`bun's summary ${JSON.stringify(said)} disagrees with its JUnit report ${JSON.stringify(have)}`);
  }
  for (const s of skipped) {
    if (!s.reason) problems.push(`${s.test}: skipped without a reason (register it with testWhen/describeWhen)`);
    else if (p.ci && s.prerequisite) failed++;
  }
  if (p.exitCode !== 0 && failed === 0 && problems.length === 0)
    problems.push(`bun exited ${p.exitCode} outside any test`);
  const skippedCount = skipped.filter((s) => !(p.ci && s.prerequisite && s.reason)).length;
  return { passed, failed: failed + problems.length, skipped: skippedCount, problems, skips: skipped, failures };
}

/** A failed test and the first `maxLines` lines of bun's message, for the end of the run. */
export function describeFailure(f: Failure, maxLines = 30): string {
  const lines = f.message.trimEnd().split("\n");
  const shown = lines.slice(0, maxLines).map((l) => (l ? `    ${l}` : ""));
  const more = lines.length - maxLines;
  if (more > 0) shown.push(`    ... (${more} more line${more === 1 ? "" : "s"}: see the test's output above)`);
  return [`failed: ${f.test}`, ...shown].join("\n");
}

/** One line per skip, for the end of the run. */
export function describeSkip(s: Skip, ci: boolean): string {
  const verdict = ci && s.prerequisite && s.reason ? "FAILED on CI (a missing prerequisite): " : "";
  return `skipped: ${s.test}: ${verdict}${s.reason ?? "NO REASON GIVEN"}`;
}
