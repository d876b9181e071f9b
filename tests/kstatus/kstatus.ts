/**
 * kstatus itself (sigs.k8s.io/cli-utils/pkg/kstatus/status.Compute, the rules Flux, Helm 4 --wait, kpt and
 * cli-utils appliers decide readiness with), built from the Go module pinned in ./go.mod as a test tool.
 *
 * Contract:
 * - Location: `${XDG_CACHE_HOME:-$HOME/.cache}/devctl/kstatus/cli-utils-<version>_<8 hex of sha256 over
 *   go.mod, go.sum and main.go>/kstatus-json`: a pin or source change gives a new key; never in the clone.
 * - Complete or absent: built into a temp file and renamed into place. With a warm Go build cache (the test
 *   cluster's k8s.io modules are the same version) a build takes a few seconds.
 * - kstatus(objects) answers in input order, one result per object; a Compute error is a result with
 *   status "Error", so a test sees it.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";

export const CLI_UTILS_VERSION = "v0.37.2";
const DIR = import.meta.dir;

export type KstatusStatus = "InProgress" | "Failed" | "Current" | "Terminating" | "NotFound" | "Unknown" | "Error";
export interface KstatusResult {
  status: KstatusStatus;
  message: string;
  conditions: { type: string; status: string; reason?: string; message?: string }[] | null;
  error?: string;
}

async function binaryPath(): Promise<string> {
  const hash = createHash("sha256");
  for (const f of ["go.mod", "go.sum", "main.go"]) hash.update(await Bun.file(join(DIR, f)).bytes());
  const base = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(
    base,
    "devctl",
    "kstatus",
    `cli-utils-${CLI_UTILS_VERSION}_${hash.digest("hex").slice(0, 8)}`,
    "kstatus-json",
  );
}

/** The path of the kstatus-json tool, built first if it is not in the cache. */
export async function ensureKstatus(): Promise<string> {
  const bin = await binaryPath();
  if (existsSync(bin)) return bin;
  const dir = join(bin, "..");
  await mkdir(dir, { recursive: true });
  const tmp = `${bin}.tmp-${process.pid}`;
  const child = Bun.spawn(["go", "build", "-trimpath", "-o", tmp, "."], {
    cwd: DIR,
    env: { ...process.env, CGO_ENABLED: "0" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, err] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  if (code !== 0) {
    await rm(tmp, { force: true });
    throw new Error(`building the kstatus test tool (go build in ${DIR}) failed (exit ${code}):\n${err}`);
  }
  await rename(tmp, bin);
  return bin;
}

/** kstatus of each object, as Flux or `helm --wait` would compute it. */
export async function kstatus(objects: readonly unknown[]): Promise<KstatusResult[]> {
  const child = Bun.spawn([await ensureKstatus()], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.write(JSON.stringify(objects));
  await child.stdin.end();
  const [code, out, err] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`kstatus-json failed (exit ${code}): ${err}`);
  const results = JSON.parse(out) as KstatusResult[];
  if (results.length !== objects.length)
    throw new Error(`kstatus-json answered ${results.length} of ${objects.length}`);
  return results;
}
