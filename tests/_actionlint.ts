/**
 * actionlint for the test suite, built from its Go module and cached outside the clone.
 *
 * Properties:
 * - The binary lives at ~/.cache/devctl/actionlint/<version>/actionlint (DEVCTL_CACHE_DIR moves
 *   ~/.cache/devctl), keyed by the pinned version: a new version builds anew, an old one is reused.
 * - Built with `go install <module>@<version>` into a temporary directory beside it, then renamed
 *   into place, so a build that dies half-way never leaves a binary that looks finished.
 * - No Go on PATH is an error that says so (never a skip).
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const ACTIONLINT_MODULE = "github.com/rhysd/actionlint/cmd/actionlint";
export const ACTIONLINT_VERSION = "v1.7.12";

export function actionlintPath(version = ACTIONLINT_VERSION): string {
  const cache = process.env.DEVCTL_CACHE_DIR ?? join(homedir(), ".cache", "devctl");
  return join(cache, "actionlint", version, "actionlint");
}

export function ensureActionlint(version = ACTIONLINT_VERSION): string {
  const bin = actionlintPath(version);
  if (existsSync(bin)) return bin;
  const dir = join(bin, "..");
  mkdirSync(dir, { recursive: true });
  const tmp = mkdtempSync(join(dir, ".build-"));
  try {
    const started = performance.now();
    const r = Bun.spawnSync(["go", "install", `${ACTIONLINT_MODULE}@${version}`], {
      env: { ...process.env, GOBIN: tmp },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (r.exitCode !== 0)
      throw new Error(
        `building actionlint ${version} with \`go install ${ACTIONLINT_MODULE}@${version}\` failed (exit ${r.exitCode}); ` +
          `Go must be on PATH (https://go.dev/doc/install): ${r.stderr.toString().slice(-800)}`,
      );
    renameSync(join(tmp, "actionlint"), bin);
    console.error(`built actionlint ${version} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${bin}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}
