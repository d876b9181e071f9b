/**
 * The control plane's logs of one soak, kept beside the operators' logs. The local cluster's components append to
 * .cluster/logs/<component>.log for as long as the cluster lives (tests/cluster/processes.ts opens them "a"), and
 * `npm run cluster:down` deletes them: a soak that failed lost the evidence of why with the cluster (a node marked
 * NotReady, a controller-manager 50 s behind its watches: both were read there, 2026-12-07). `markLogs` notes how long
 * each log is when the soak starts; `copyLogsSince` copies what each one gained since into the soak's directory.
 */
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** The length of each log in `dir` when the soak started, by file name. */
export type LogMark = { dir: string; sizes: Map<string, number> };

export function markLogs(dir: string): LogMark {
  const sizes = new Map<string, number>();
  for (const name of logNames(dir)) sizes.set(name, statSync(join(dir, name)).size);
  return { dir, sizes };
}

/**
 * Copies what each log of `mark.dir` gained since `mark` into `dest` under the same name: from the mark's length, or
 * whole when the log is new or shorter than it was (replaced). Returns the names and byte counts copied; a log that
 * gained nothing is not copied.
 */
export function copyLogsSince(mark: LogMark, dest: string): { name: string; bytes: number }[] {
  const copied: { name: string; bytes: number }[] = [];
  for (const name of logNames(mark.dir)) {
    const path = join(mark.dir, name);
    const size = statSync(path).size;
    const before = mark.sizes.get(name) ?? 0;
    const from = size < before ? 0 : before;
    if (size === from) continue;
    const bytes = Buffer.alloc(size - from);
    const fd = openSync(path, "r");
    try {
      readSync(fd, bytes, 0, bytes.length, from);
    } finally {
      closeSync(fd);
    }
    mkdirSync(dest, { recursive: true });
    writeFileSync(join(dest, name), bytes);
    copied.push({ name, bytes: bytes.length });
  }
  return copied;
}

function logNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(".log")) : [];
}
