/**
 * Test tools built from their Go modules and cached outside the clone (actionlint, helm, promtool, prometheus).
 *
 * Properties:
 * - A tool lives at ~/.cache/devctl/<name>/<version>/<name> (DEVCTL_CACHE_DIR moves ~/.cache/devctl),
 *   keyed by the pinned version: a new version builds anew, an old one is reused.
 * - Built with `go install <module>@<version>` into a temporary directory beside it, then renamed
 *   into place, so a build that dies half-way never leaves a binary that looks finished.
 * - No Go on PATH, or a failed build, is an error that says so (never a skip).
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export interface GoTool {
  name: string;
  module: string;
  version: string;
}

export const ACTIONLINT: GoTool = {
  name: "actionlint",
  module: "github.com/rhysd/actionlint/cmd/actionlint",
  version: "v1.7.12",
};
export const HELM: GoTool = { name: "helm", module: "helm.sh/helm/v4/cmd/helm", version: "v4.3.2" };
/** Prometheus 3.16 (its Go module versions are v0.3xx): promtool checks and unit-tests the alerts. */
const PROMETHEUS_MODULE_VERSION = "v0.316.0";
export const PROMTOOL: GoTool = {
  name: "promtool",
  module: "github.com/prometheus/prometheus/cmd/promtool",
  version: PROMETHEUS_MODULE_VERSION,
};
/** The server, for the end-to-end alert test (no web UI assets: its HTTP API is what the test reads). */
export const PROMETHEUS: GoTool = {
  name: "prometheus",
  module: "github.com/prometheus/prometheus/cmd/prometheus",
  version: PROMETHEUS_MODULE_VERSION,
};

export function goToolPath(t: GoTool): string {
  const cache = process.env.DEVCTL_CACHE_DIR ?? join(homedir(), ".cache", "devctl");
  return join(cache, t.name, t.version, t.name);
}

export function ensureGoTool(t: GoTool): string {
  const bin = goToolPath(t);
  if (existsSync(bin)) return bin;
  const dir = join(bin, "..");
  mkdirSync(dir, { recursive: true });
  const tmp = mkdtempSync(join(dir, ".build-"));
  try {
    const started = performance.now();
    const r = Bun.spawnSync(["go", "install", "-trimpath", "-ldflags=-s -w", `${t.module}@${t.version}`], {
      env: { ...process.env, GOBIN: tmp },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (r.exitCode !== 0)
      throw new Error(
        `building ${t.name} ${t.version} with \`go install ${t.module}@${t.version}\` failed (exit ${r.exitCode}); ` +
          `Go must be on PATH (https://go.dev/doc/install): ${r.stderr.toString().slice(-800)}`,
      );
    renameSync(join(tmp, t.name), bin);
    console.error(`built ${t.name} ${t.version} in ${((performance.now() - started) / 1000).toFixed(1)} s: ${bin}`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return bin;
}

if (import.meta.main) {
  const wanted = [ACTIONLINT, HELM, PROMTOOL, PROMETHEUS].filter((t) => process.argv.slice(2).includes(t.name));
  for (const t of wanted) console.log(ensureGoTool(t));
}
