/**
 * The previous release of devctl, built from its recorded commit for the upgrade test (issue #31 item 4): users
 * upgrade devctl under running services, and a pod template that changes is a rollout of every app.
 *
 * Properties:
 * - PREVIOUS_RELEASE names the commit (this repository has no tags yet): the last one before issue #31's spec fields,
 *   whose CRD is schema 3. Move it forward when a release is cut.
 * - Built once per commit into `${XDG_CACHE_HOME:-~/.cache}/devctl/previous/<commit>/` (devctl and its CRD file),
 *   as the Go tools are: from `git archive` of that commit (no worktree, nothing in .git changes), with this
 *   checkout's node_modules, by the commit's own src/build/build.ts. That node_modules must be the one the commit
 *   installed, as far as a build can tell (checked, else an error): package.json's dependencies and
 *   devDependencies, and every package in package-lock.json at its version and integrity, except the root entry
 *   and packages Bun provides itself (undici, ws: no build reads them from node_modules).
 * - A clone without that commit (a shallow one) is an error that says so, never a skip.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, sh } from "./_support.ts";

export const PREVIOUS_RELEASE = {
  commit: "8c4f10d1695ef69f1479f49122550f9eccf889ae",
  what: "the last commit before issue #31's spec fields (CRD schema 3)",
} as const;

export interface PreviousRelease {
  binary: string;
  crd: string;
}

const git = (...args: string[]) => sh(["git", "-C", ROOT, ...args]);

/** What of package.json or package-lock.json decides the node_modules a build reads (see the header). */
export function installedTree(file: string, json: Record<string, unknown>): string {
  if (file === "package.json") return JSON.stringify([json.dependencies, json.devDependencies]);
  const packages = (json.packages ?? {}) as Record<string, { version?: string; integrity?: string }>;
  const bunBuiltin = (path: string) => {
    const name = path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);
    try {
      return Bun.resolveSync(name, ROOT) === name;
    } catch {
      return false; // not installed at the top (nested, or another platform's): not a built-in either
    }
  };
  const kept = Object.entries(packages).filter(([path]) => path !== "" && !bunBuiltin(path));
  return JSON.stringify(kept.map(([path, p]) => [path, p.version, p.integrity]).sort());
}

export async function previousRelease(): Promise<PreviousRelease> {
  const { commit } = PREVIOUS_RELEASE;
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  const dir = join(base, "devctl", "previous", commit);
  const out = { binary: join(dir, "devctl"), crd: join(dir, "webapps.apps.example.com.yaml") };
  if (existsSync(out.binary) && existsSync(out.crd)) return out;
  if (git("cat-file", "-e", `${commit}^{commit}`).code !== 0)
    throw new Error(`the previous release's commit ${commit} is not in this clone (a shallow clone?): fetch it first`);
  for (const file of ["package.json", "package-lock.json"]) {
    const then = installedTree(file, JSON.parse(git("show", `${commit}:${file}`).stdout));
    if (then !== installedTree(file, JSON.parse(readFileSync(join(ROOT, file), "utf8"))))
      throw new Error(`${file} changed since ${commit}: the previous release cannot be built with this node_modules`);
  }
  const src = mkdtempSync(join(tmpdir(), "devctl-previous-"));
  try {
    const archive = sh(["sh", "-c", `git -C '${ROOT}' archive ${commit} | tar -x -C '${src}'`]);
    if (archive.code !== 0) throw new Error(`git archive ${commit}: ${archive.stderr}`);
    symlinkSync(join(ROOT, "node_modules"), join(src, "node_modules"));
    const built = sh([process.execPath, "run", "src/build/build.ts"], { cwd: src, env: { DEVCTL_COMMIT: commit } });
    if (built.code !== 0) throw new Error(`building ${commit}: ${built.stderr}`);
    mkdirSync(dir, { recursive: true });
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp);
    renameSync(join(src, "dist", "devctl"), join(tmp, "devctl"));
    renameSync(join(src, "crd", "webapps.apps.example.com.yaml"), join(tmp, "webapps.apps.example.com.yaml"));
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
  return out;
}
