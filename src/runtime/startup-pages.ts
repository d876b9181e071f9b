/**
 * Gives back the executable's code pages that only start-up used, once start-up is over.
 *
 * Why: most of the operator's idle RSS is not data but pages of the executable itself (the Bun runtime is
 * ~100 MiB of code and read-only data). Starting up (JSC and module initialisation, loading bytecode, the
 * first TLS handshake, JIT-compiling start-up code) touches code all over it, and the kernel maps every
 * page-cache page of the 64 KiB window around each fault ("fault-around"), so ~40 MiB of code stays mapped
 * (measured 2026-12-01, Bun 1.4.5: r-xp 33-35 MiB, r--p 7.3 MiB of the operator's 56-58 MiB idle RSS).
 * These pages are clean and file-backed: `madvise(MADV_DONTNEED)` unmaps them, the page cache keeps them,
 * and whatever runs later maps again what it uses (a minor fault each, no disk read while cached).
 *
 * Contract:
 * - `releasableMappings(smaps, executable)` (pure): the mappings of `executable` in a /proc/<pid>/smaps text
 *   that are private, not writable and hold no anonymous page (no page was ever copied on write), so
 *   dropping them cannot lose a byte: the kernel re-reads exactly the file's contents. Writable mappings
 *   (.data, .bss, Bun's module graph) and read-only ones that were written before being protected (JSC's
 *   frozen config pages) are never chosen.
 * - `releaseStartupPages()`: on Linux x64/arm64, MADV_DONTNEED over those mappings of this process's own
 *   executable, through libc's madvise (bun:ffi). Returns the resident bytes they held, or undefined where it
 *   does nothing (another platform, no libc, an error): it never throws.
 * - `releaseStartupPagesWhenQuiet(opts)`: a Runnable (every replica) that waits until `ready()` (caches
 *   synced) and then until the process has been quiet (under `QUIET_CPU_SHARE` of a core) for
 *   `QUIET_SAMPLES` consecutive samples of `SAMPLE_MS`, i.e. the first pass is over, releases once, logs the
 *   amount (info) and returns. Nothing repeats: it is start-up's pages that go, not the working set.
 */
import { readFileSync, readlinkSync } from "node:fs";
import type { Clock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import type { Runnable } from "./manager.ts";

export interface Mapping {
  start: number;
  end: number;
  /** Resident bytes (smaps "Rss:"). */
  rss: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$/;
const FIELD = /^(Rss|Anonymous):\s+(\d+) kB$/;

/** The mappings of `executable` that can be dropped without losing data (see the contract), in address order. */
export function releasableMappings(smaps: string, executable: string): Mapping[] {
  const out: Mapping[] = [];
  let cur: (Mapping & { ok: boolean }) | undefined;
  const flush = () => {
    if (cur?.ok && cur.rss > 0) out.push({ start: cur.start, end: cur.end, rss: cur.rss });
  };
  for (const line of smaps.split("\n")) {
    const h = HEADER.exec(line);
    if (h) {
      flush();
      const perms = h[3] as string;
      cur = {
        start: Number.parseInt(h[1] as string, 16),
        end: Number.parseInt(h[2] as string, 16),
        rss: 0,
        ok: h[4] === executable && perms[1] === "-" && perms[3] === "p",
      };
      continue;
    }
    const f = cur?.ok ? FIELD.exec(line) : null;
    if (!f || !cur) continue;
    const bytes = Number(f[2]) * 1024;
    if (f[1] === "Rss") cur.rss = bytes;
    else if (bytes > 0) cur.ok = false;
  }
  flush();
  return out;
}

/** Linux's MADV_DONTNEED on x86-64 and arm64 (asm-generic/mman-common.h). */
const MADV_DONTNEED = 4;

type Madvise = (addr: number, length: number, advice: number) => number;
let madvise: Madvise | undefined;

async function libcMadvise(): Promise<Madvise> {
  if (!madvise) {
    const { dlopen, FFIType } = await import("bun:ffi");
    const libc = dlopen("libc.so.6", {
      madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 },
    });
    madvise = (addr, length, advice) => libc.symbols.madvise(addr, length, advice);
  }
  return madvise;
}

/** Drops this process's releasable executable pages; the resident bytes they held, or undefined (see the contract). */
export async function releaseStartupPages(): Promise<number | undefined> {
  if (process.platform !== "linux" || (process.arch !== "x64" && process.arch !== "arm64")) return undefined;
  try {
    const call = await libcMadvise();
    const mappings = releasableMappings(readFileSync("/proc/self/smaps", "utf8"), readlinkSync("/proc/self/exe"));
    let released = 0;
    for (const m of mappings) if (call(m.start, m.end - m.start, MADV_DONTNEED) === 0) released += m.rss;
    return released;
  } catch {
    return undefined;
  }
}

export const SAMPLE_MS = 500;
export const QUIET_SAMPLES = 2;
/** Share of one core below which a sample counts as quiet. */
export const QUIET_CPU_SHARE = 0.05;

export interface QuietReleaseOptions {
  /** True once start-up's own work can begin to settle (every cache synced). */
  ready: () => boolean;
  clock: Clock;
  logger: Logger;
  /** This process's CPU time in microseconds (default: process.cpuUsage(), user + system). */
  cpuMicros?: () => number;
  /** Default releaseStartupPages. */
  release?: () => Promise<number | undefined>;
}

const processCpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

export function releaseStartupPagesWhenQuiet(opts: QuietReleaseOptions): Runnable {
  const cpu = opts.cpuMicros ?? processCpuMicros;
  const release = opts.release ?? releaseStartupPages;
  return {
    description: "start-up page release",
    async start(stop) {
      let quiet = 0;
      let last = cpu();
      while (quiet < QUIET_SAMPLES) {
        await opts.clock.sleep(SAMPLE_MS, stop);
        if (stop.aborted) return;
        const now = cpu();
        const busy = (now - last) / 1000 / SAMPLE_MS;
        last = now;
        quiet = opts.ready() && busy < QUIET_CPU_SHARE ? quiet + 1 : 0;
      }
      const bytes = await release();
      if (bytes !== undefined)
        opts.logger.info(`start-up over: released ${(bytes / 1048576).toFixed(1)} MiB of start-up code pages`);
    },
  };
}
