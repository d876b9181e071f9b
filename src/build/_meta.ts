/**
 * What a build stamps into its outputs: the version from package.json and the git commit
 * ($DEVCTL_COMMIT when set, else `git rev-parse --short=12 HEAD`, with "-dirty" for tracked changes).
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

export function readVersion(): string {
  return (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
}

export function gitCommit(): string {
  if (process.env.DEVCTL_COMMIT && process.env.DEVCTL_COMMIT !== "unknown") return process.env.DEVCTL_COMMIT;
  const r = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: root, stderr: "ignore" });
  const sha = r.exitCode === 0 ? r.stdout.toString().trim() : "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], {
    cwd: root,
    stderr: "ignore",
  });
  return sha !== "unknown" && dirty.stdout.toString().trim() ? `${sha}-dirty` : sha;
}
