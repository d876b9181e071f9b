/**
 * The pinned kubectl: built from the same Kubernetes module as the control plane (build.ts), so its
 * version is the API server's (v1.36.3), whatever kubectl the machine has. Suites, the main job and
 * the docs' examples use this one.
 *
 * Contract:
 * - kubectlPath(): the binary in the binary cache of the current pins (computed synchronously from
 *   the same key files as build.ts); throws, saying how to build it, when it is not there yet.
 * - KUBECTL_CACHE_ENV: where the suites' kubectl keeps its HTTP cache; `npm test` (tests/run.ts) sets it to a
 *   directory of each phase's own and removes it with the phase. claimKubectlCache() names one for a process no caller
 *   named one for (a bare `bun test`: tests/_preload.ts; the chaos soak), and returns its removal.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { binaryCacheRoot, KEY_FILES, keyName } from "./build.ts";

export const KUBECTL_CACHE_ENV = "DEVCTL_KUBECTL_CACHE";

/**
 * Unless a caller named kubectl's cache directory (KUBECTL_CACHE_ENV), names one of this process's own, inherited by
 * what it starts: a fresh path under the temporary directory, which kubectl makes on first use (a process that never
 * calls kubectl makes nothing). Returns what removes it, or undefined when the directory is the caller's to remove.
 */
export function claimKubectlCache(): (() => void) | undefined {
  if (process.env[KUBECTL_CACHE_ENV]) return undefined;
  const own = join(tmpdir(), `devctl-kubectl-cache-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  process.env[KUBECTL_CACHE_ENV] = own;
  return () => rmSync(own, { recursive: true, force: true });
}

export function pinnedBinDir(): string {
  const hash = createHash("sha256");
  for (const f of KEY_FILES) hash.update(readFileSync(join(import.meta.dir, "go", f)));
  return join(binaryCacheRoot(), keyName(hash.digest("hex")));
}

export function kubectlPath(): string {
  const file = join(pinnedBinDir(), "kubectl");
  if (!existsSync(file)) {
    throw new Error(
      `the pinned kubectl is not built yet (${file}): run \`npm run cluster:up\` once, which builds it with the control plane`,
    );
  }
  return file;
}
