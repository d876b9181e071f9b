import { describe, expect, test } from "bun:test";
import { readFileSync, readlinkSync } from "node:fs";
import { createFakeClock } from "./clock.ts";
import type { Logger } from "./logger.ts";
import {
  QUIET_CPU_SHARE,
  releasableMappings,
  releaseStartupPages,
  releaseStartupPagesWhenQuiet,
  SAMPLE_MS,
} from "./startup-pages.ts";

const EXE = "/opt/devctl";

/** One smaps entry: the header line and the two fields releasableMappings reads, among others it ignores. */
function entry(range: string, perms: string, path: string, rssKb: number, anonKb: number): string {
  return [
    `${range} ${perms} 00000000 fe:00 42                            ${path}`,
    `Size:              ${rssKb * 2} kB`,
    `Rss:               ${rssKb} kB`,
    `Private_Clean:     ${rssKb - anonKb} kB`,
    `Anonymous:         ${anonKb} kB`,
    "VmFlags: rd mr mw me",
  ].join("\n");
}

describe("releasableMappings", () => {
  test("chooses the executable's private read-only and executable mappings that never had a page written", () => {
    const smaps = [
      entry("00200000-01a39000", "r--p", EXE, 7396, 0),
      entry("01a40000-0684a000", "r-xp", EXE, 35652, 0),
      entry("7f00-8f00", "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1100, 0),
    ].join("\n");
    expect(releasableMappings(smaps, EXE)).toEqual([
      { start: 0x200000, end: 0x1a39000, rss: 7396 * 1024 },
      { start: 0x1a40000, end: 0x684a000, rss: 35652 * 1024 },
    ]);
  });

  test("never chooses a writable, shared, written-then-protected or empty mapping, nor anonymous memory", () => {
    const smaps = [
      entry("0684a000-0685f000", "rw-p", EXE, 84, 56),
      entry("06867000-06fb7000", "rw-p", EXE, 3300, 0),
      entry("0685f000-06867000", "r--p", EXE, 32, 32),
      entry("06900000-06a00000", "r--s", EXE, 100, 0),
      entry("06a00000-06b00000", "r--p", EXE, 0, 0),
      entry("43639200000-43679200000", "rw-p", "", 8848, 8848),
      entry("7f983fbaa000-7f987fbaa000", "rwxp", "", 160, 160),
    ].join("\n");
    expect(releasableMappings(smaps, EXE)).toEqual([]);
  });

  test("an anonymous page anywhere in a mapping excludes the whole mapping", () => {
    const smaps = [entry("1000-9000", "r--p", EXE, 32, 4), entry("9000-a000", "r-xp", EXE, 4, 0)].join("\n");
    expect(releasableMappings(smaps, EXE)).toEqual([{ start: 0x9000, end: 0xa000, rss: 4096 }]);
  });
});

/** Resident kB of this process's releasable executable mappings. */
const residentKb = (): number =>
  releasableMappings(readFileSync("/proc/self/smaps", "utf8"), readlinkSync("/proc/self/exe")).reduce(
    (kb, m) => kb + m.rss / 1024,
    0,
  );

describe("releaseStartupPages", () => {
  test.if(process.platform === "linux")(
    "unmaps this process's clean executable pages and reports what they held; the process runs on",
    async () => {
      const before = residentKb();
      const released = await releaseStartupPages();
      const after = residentKb();
      expect(before).toBeGreaterThan(1024);
      expect(released).toBeGreaterThan(0);
      expect(after).toBeLessThan(before / 2);
      expect([1, 2, 3].map((n) => n * 2)).toEqual([2, 4, 6]);
    },
  );
});

function harness(opts: { ready?: () => boolean } = {}) {
  const clock = createFakeClock(0);
  let cpuMicros = 0;
  const releases: number[] = [];
  const lines: string[] = [];
  const logger: Logger = {
    debug() {},
    info: (m: string) => lines.push(m),
    warn() {},
    error() {},
  };
  const runnable = releaseStartupPagesWhenQuiet({
    ready: opts.ready ?? (() => true),
    clock,
    logger,
    cpuMicros: () => cpuMicros,
    release: async () => {
      releases.push(clock.now());
      return 40 * 1048576;
    },
  });
  /** Uses `share` of a core during the next sample. */
  const busy = (share: number) => {
    cpuMicros += share * SAMPLE_MS * 1000;
  };
  return { clock, runnable, releases, lines, busy };
}

describe("releaseStartupPagesWhenQuiet", () => {
  test("releases once, after two quiet samples in a row, and logs how much", async () => {
    const h = harness();
    const stop = new AbortController();
    const done = h.runnable.start(stop.signal);
    h.busy(0.9);
    await h.clock.advance(SAMPLE_MS); // busy
    await h.clock.advance(SAMPLE_MS); // quiet 1
    h.busy(QUIET_CPU_SHARE * 2);
    await h.clock.advance(SAMPLE_MS); // busy again: starts over
    await h.clock.advance(SAMPLE_MS); // quiet 1
    expect(h.releases).toEqual([]);
    await h.clock.advance(SAMPLE_MS); // quiet 2
    await done;
    expect(h.releases).toEqual([5 * SAMPLE_MS]);
    expect(h.lines).toEqual(["start-up over: released 40.0 MiB of start-up code pages"]);
    await h.clock.advance(60_000);
    expect(h.releases).toHaveLength(1);
  });

  test("a quiet process whose caches have not synced yet does not count as done starting", async () => {
    let synced = false;
    const h = harness({ ready: () => synced });
    const done = h.runnable.start(new AbortController().signal);
    await h.clock.advance(10 * SAMPLE_MS);
    expect(h.releases).toEqual([]);
    synced = true;
    await h.clock.advance(2 * SAMPLE_MS);
    await done;
    expect(h.releases).toEqual([12 * SAMPLE_MS]);
  });

  test("stops without releasing when shut down first", async () => {
    const h = harness({ ready: () => false });
    const stop = new AbortController();
    const done = h.runnable.start(stop.signal);
    await h.clock.advance(SAMPLE_MS);
    stop.abort();
    await done;
    await h.clock.advance(10 * SAMPLE_MS);
    expect(h.releases).toEqual([]);
  });
});
