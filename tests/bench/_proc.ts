/**
 * What processes cost, read from Linux /proc (no sampling, no extra process).
 *
 * Properties:
 * - cpuSeconds(pid): user + system CPU the process has used since it started (/proc/PID/stat fields
 *   14 and 15, in clock ticks of 1/100 s); undefined once the process is gone.
 * - rssBytes(pid): resident set size now (VmRSS of /proc/PID/status); undefined once gone. residentOf(pid)
 *   reads it with its anonymous part (RssAnon) from the same read.
 * - machineCpu(): cumulative busy and total CPU seconds of the whole machine (/proc/stat), so the
 *   difference of two readings tells how busy all cores were in between, whoever used them.
 * - CpuMeter: one reading of a set of named PIDs and the machine, and the difference to a later one.
 */
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux architecture we run on

export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** VmRSS and its anonymous part (RssAnon: not backed by a file, so not reclaimable without swap), in bytes. */
export function residentOf(pid: number): { rss: number; anon: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rss: kb("VmRSS") * 1024, anon: kb("RssAnon") * 1024 };
  } catch {
    return undefined;
  }
}

export function rssBytes(pid: number): number | undefined {
  const rss = residentOf(pid)?.rss;
  return rss !== undefined && Number.isFinite(rss) ? rss : undefined;
}

export function machineCpu(): { busy: number; total: number } {
  const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const at = (i: number) => v[i] ?? 0;
  const total = at(0) + at(1) + at(2) + at(3) + at(4) + at(5) + at(6) + at(7);
  const idle = at(3) + at(4);
  return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

export function loadAverage(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  } catch {
    return "n/a";
  }
}

export interface CpuUsage {
  wallSeconds: number;
  /** CPU seconds per named process over the interval (a process that ended counts up to its last reading). */
  byProcess: Record<string, number>;
  /** All cores: CPU seconds used by anyone, and the capacity (cores x wall). */
  machineBusy: number;
  machineCapacity: number;
}

export interface CpuMeter {
  /** The usage since the meter was made. */
  read(): CpuUsage;
}

/** Starts measuring now; `pids` maps a name ("operator", "kube-apiserver", ...) to a PID. */
export function cpuMeter(pids: Record<string, number | undefined>): CpuMeter {
  const started = performance.now();
  const m0 = machineCpu();
  const base: Record<string, number> = {};
  const last: Record<string, number> = {};
  for (const [name, pid] of Object.entries(pids)) {
    const s = pid === undefined ? undefined : cpuSeconds(pid);
    if (s !== undefined) base[name] = last[name] = s;
  }
  const self0 = process.cpuUsage();
  return {
    read() {
      const byProcess: Record<string, number> = {};
      for (const [name, pid] of Object.entries(pids)) {
        if (base[name] === undefined || pid === undefined) continue;
        const now = cpuSeconds(pid);
        if (now !== undefined) last[name] = now;
        byProcess[name] = (last[name] as number) - (base[name] as number);
      }
      const self = process.cpuUsage(self0);
      byProcess["bench client"] = (self.user + self.system) / 1e6;
      const m1 = machineCpu();
      return {
        wallSeconds: (performance.now() - started) / 1000,
        byProcess,
        machineBusy: m1.busy - m0.busy,
        machineCapacity: m1.total - m0.total,
      };
    },
  };
}
