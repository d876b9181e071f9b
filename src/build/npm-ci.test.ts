/**
 * `npm ci` in a fresh clone prints no warning a newcomer has to wonder about (issue #33). Checked with
 * `npm ci --dry-run --offline` on a copy of package.json and package-lock.json in an empty directory with an
 * empty cache: npm resolves the tree from the lockfile alone, so the check reads no network and no
 * node_modules, and takes about a second. It sees what a real `npm ci` warns about before and after installing:
 * an engines range this Node is outside of (EBADENGINE: undici 8 wanted Node >= 22.19) and, with npm 11, an
 * install script not approved in package.json's allowScripts (bun's postinstall).
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const packageJson = () => JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;

/** The `npm warn` lines of `npm ci --dry-run --offline` for this package.json and the repo's lockfile. */
function npmCiWarnings(pkg: Record<string, unknown>): string[] {
  const dir = mkdtempSync(join(tmpdir(), "devctl-npm-ci-"));
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify(pkg, null, 2));
    writeFileSync(join(dir, "package-lock.json"), readFileSync(join(root, "package-lock.json")));
    const args = ["ci", "--dry-run", "--offline", "--no-audit", "--no-fund", "--cache", join(dir, ".cache")];
    const r = Bun.spawnSync(["npm", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    const output = `${r.stdout.toString()}${r.stderr.toString()}`;
    if (r.exitCode !== 0) throw new Error(`npm ${args.join(" ")} failed (exit ${r.exitCode}): ${output.slice(-1500)}`);
    return output.split("\n").filter((l) => /^npm warn/i.test(l));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("npm ci", () => {
  test("installs package.json's lockfile without a single warning", () => {
    expect(npmCiWarnings(packageJson())).toEqual([]);
  }, 60_000);

  test("the check does see a warning: devctl's own engines range put out of this Node's reach", () => {
    const warnings = npmCiWarnings({ ...packageJson(), engines: { node: "<1" } });
    expect(warnings.some((l) => l.includes("EBADENGINE"))).toBe(true);
  }, 60_000);
});
