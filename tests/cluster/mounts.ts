/**
 * Mounts the cluster leaves behind (kubelet volumes, container root filesystems, pod netns files).
 *
 * Contract:
 * - mountsUnder(dir): mount points at or under dir, deepest first (the order they must go in).
 * - unmountUnder(dir): unmounts each (lazily when busy); resolves to the ones still mounted.
 */
import { readFileSync } from "node:fs";
import { run } from "./processes.ts";

export function mountsUnder(dir: string, mountinfo = readFileSync("/proc/self/mountinfo", "utf8")): string[] {
  const points = mountinfo
    .split("\n")
    .map((l) => l.split(" ")[4] ?? "")
    .filter((m) => m === dir || m.startsWith(`${dir}/`));
  return [...new Set(points)].sort((a, b) => b.length - a.length || a.localeCompare(b));
}

export async function unmountUnder(dir: string): Promise<string[]> {
  for (const m of mountsUnder(dir)) {
    await run(["umount", m]).catch(() => run(["umount", "-l", m]).catch(() => undefined));
  }
  return mountsUnder(dir);
}
