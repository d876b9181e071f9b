/**
 * The alerts of `devctl operator manifests --monitoring` (src/install/monitoring.ts), read by Prometheus's own tool:
 * promtool (built from its Go module and cached, tests/_gotool.ts) checks the rendered rules and runs the unit tests
 * in alerts.promtest.yaml (each alert fires with its labels and annotations, and stays quiet when it should). Every
 * alert has a test there, a runbook in docs/runbooks and a line in that folder's README.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { toYaml } from "../../src/api/yaml.ts";
import {
  type AlertTimings,
  alerts,
  buildMonitoring,
  DEFAULT_TIMINGS,
  ruleGroups,
} from "../../src/install/monitoring.ts";
import { ensureGoTool, PROMTOOL } from "../_gotool.ts";

const root = resolve(import.meta.dir, "../..");
const scratch = mkdtempSync(join(tmpdir(), "devctl-rules-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const UNIT_TESTS = join(import.meta.dir, "alerts.promtest.yaml");

function promtool(args: string[]): { code: number; out: string } {
  const r = Bun.spawnSync([ensureGoTool(PROMTOOL), ...args], { cwd: scratch, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode, out: `${r.stdout.toString()}${r.stderr.toString()}` };
}
/** Writes the rules as rendered with `timings` beside a copy of the unit tests; runs `promtool test rules`. */
function testRules(timings: AlertTimings = DEFAULT_TIMINGS) {
  writeFileSync(join(scratch, "rules.yaml"), toYaml(ruleGroups(timings)));
  copyFileSync(UNIT_TESTS, join(scratch, "alerts.promtest.yaml"));
  return promtool(["test", "rules", "alerts.promtest.yaml"]);
}

describe("the alerts, read by promtool", () => {
  test("promtool check rules accepts every rule", () => {
    writeFileSync(join(scratch, "rules.yaml"), toYaml(ruleGroups()));
    const r = promtool(["check", "rules", "rules.yaml"]);
    expect(r).toEqual({ code: 0, out: expect.stringContaining(`SUCCESS: ${alerts().length} rules found`) });
  }, 900_000);

  test("promtool's unit tests pass: each alert fires with its labels and annotations, and stays quiet otherwise", () => {
    const r = testRules();
    expect(r).toEqual({ code: 0, out: expect.stringContaining("SUCCESS") });
  }, 900_000);

  test("the unit tests can fail: a rule that waits longer than they expect is caught", () => {
    const r = testRules({ ...DEFAULT_TIMINGS, stalledFor: "12m" });
    expect(r.code).toBe(1);
    expect(r.out).toContain("alertname: WebAppStalled");
  }, 900_000);

  test("the PrometheusRule holds exactly these rule groups", () => {
    const rule = buildMonitoring("devctl-system").find((o) => o.kind === "PrometheusRule");
    expect(rule?.spec).toEqual(ruleGroups());
  });
});

describe("every alert is documented and tested", () => {
  const unitTests = readFileSync(UNIT_TESTS, "utf8");
  const index = readFileSync(join(root, "docs/runbooks/README.md"), "utf8");
  for (const a of alerts()) {
    test(`${a.alert}: a runbook, a line in the runbooks' index, a firing unit test`, () => {
      const runbook = join(root, "docs/runbooks", `${a.alert}.md`);
      expect(existsSync(runbook)).toBe(true);
      const text = readFileSync(runbook, "utf8");
      for (const section of ["## What it means", "## Confirm", "## Escalate"]) expect(text).toContain(section);
      expect(text).toMatch(/## What to do/);
      expect(index).toContain(`[${a.alert}](${a.alert}.md)`);
      expect(unitTests).toMatch(new RegExp(`alertname: ${a.alert}\\n\\s+exp_alerts:\\n\\s+- exp_labels:`));
    });
  }
});
