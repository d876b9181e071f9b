/**
 * Parsing of flag values that citty leaves as strings: durations ("30s", "10h", "500ms", "2m") and
 * positive integers. A bad value is a UsageError naming the flag and an example (exit code 2).
 */
import { UsageError } from "./_run.ts";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(value: string | undefined, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec((value ?? "").trim());
  if (!m)
    throw new UsageError(`--${flag} "${value}" is not a duration; use a number with a unit, e.g. 30s, 2m, 10h, 500ms`);
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}

export function parsePositiveInt(value: string | undefined, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(String(value ?? "").trim()) || !Number.isInteger(n) || n < 1 || n > max) {
    throw new UsageError(`--${flag} "${value}" must be a whole number from 1 to ${max}`);
  }
  return n;
}

export function parseChoice<T extends string>(value: string | undefined, flag: string, choices: readonly T[]): T {
  if (!choices.includes(value as T)) throw new UsageError(`--${flag} "${value}" must be one of: ${choices.join(", ")}`);
  return value as T;
}
