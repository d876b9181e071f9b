/**
 * tests/_preload.ts, which every `bun test` preloads: a bare run names kubectl's cache directory under the temporary
 * directory and leaves none behind; a directory its caller named is used and left to the caller. Each case runs
 * `bun test` on a probe file that makes the directory as kubectl does and writes into it.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { KUBECTL_CACHE_ENV } from "./cluster/kubectl.ts";

const ROOT = resolve(import.meta.dir, "..");
const scratch = mkdtempSync(join(tmpdir(), "devctl-preload-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const probe = join(scratch, "probe.test.ts");
writeFileSync(
  probe,
  `import { test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
test("uses kubectl's cache directory", () => {
  const dir = process.env.${KUBECTL_CACHE_ENV} as string;
  mkdirSync(dir, { recursive: true });
  writeFileSync(dir + "/cached", "x");
  console.log("CACHE=" + dir);
});
`,
);

/** `bun test` on the probe from the repository (its bunfig.toml), with `env` over this one less the cache's. */
function runProbe(env: Record<string, string>): string {
  const { [KUBECTL_CACHE_ENV]: _named, ...rest } = process.env;
  const r = Bun.spawnSync([process.execPath, "test", probe], { cwd: ROOT, env: { ...rest, ...env } });
  const out = `${r.stdout.toString()}${r.stderr.toString()}`;
  expect(r.exitCode, out).toBe(0);
  const dir = /CACHE=(\S+)/.exec(out)?.[1];
  expect(dir, out).toBeDefined();
  return dir as string;
}

test("a bare bun test names a directory under the temporary directory and removes it at the end", () => {
  const tmp = mkdtempSync(join(scratch, "tmp-"));
  const dir = runProbe({ TMPDIR: tmp });
  expect(dir.startsWith(`${tmp}/devctl-kubectl-cache-`)).toBe(true);
  expect(existsSync(dir)).toBe(false);
  expect(readdirSync(tmp)).toEqual([]);
});

test("a directory the caller named is used and left to the caller", () => {
  const named = join(scratch, "named-cache");
  expect(runProbe({ [KUBECTL_CACHE_ENV]: named })).toBe(named);
  expect(readdirSync(named)).toEqual(["cached"]);
});
