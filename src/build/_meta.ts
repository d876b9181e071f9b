/**
 * What a build stamps into its outputs: the version from package.json and the git commit
 * ($DEVCTL_COMMIT when set, else `git rev-parse --short=12 HEAD`, with "-dirty" for tracked changes), and the
 * build time (buildTime) where an output must be reproducible.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

/** The platforms `npm run release` builds an executable for, each as dist/release/devctl-<target>. */
export const RELEASE_TARGETS = ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64"] as const;

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

/**
 * The build's time, for what must be reproducible (the SBOM's timestamp): $SOURCE_DATE_EPOCH (seconds, the
 * reproducible-builds.org convention) when set, else the commit's committer time, else now (no git).
 */
export function buildTime(): Date {
  const epoch = process.env.SOURCE_DATE_EPOCH;
  if (epoch !== undefined && epoch !== "") {
    if (!/^\d+$/.test(epoch))
      throw new Error(`SOURCE_DATE_EPOCH=${epoch} is not a number of seconds since 1970 (e.g. 1764892800)`);
    return new Date(Number(epoch) * 1000);
  }
  const r = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { cwd: root, stderr: "ignore" });
  const ct = r.exitCode === 0 ? r.stdout.toString().trim() : "";
  return /^\d+$/.test(ct) ? new Date(Number(ct) * 1000) : new Date();
}
