/**
 * Typed flags on top of citty's string flags. A builder returns a plain citty arg definition (so citty's
 * args stay the single source of truth for names, aliases, defaults and help) and records, for that
 * definition object, how its value is checked. The strict parser (_parse.ts) runs that check on every
 * value given, before any command runs; the command may call the same parse function to get the typed value.
 * Every parse function throws a UsageError naming the flag as it was typed, e.g. `--timeout "soon" is not a duration`.
 */
import type { ArgDef } from "citty";
import { UsageError } from "./_errors.ts";

/** Checks (and converts) one flag value; `flag` is the spelling the user typed ("--timeout", "-o"). */
export type FlagParser = (value: string, flag: string) => unknown;

const PARSERS = new WeakMap<object, FlagParser>();

/** The check recorded for an arg definition, if it has one. */
export const parserOf = (def: ArgDef): FlagParser | undefined => PARSERS.get(def);

/** Records `parse` as the check of `def` and returns `def` itself. */
export function typed<const D extends ArgDef>(def: D, parse: FlagParser): D {
  PARSERS.set(def, parse);
  return def;
}

const dashed = (flag: string) => (flag.startsWith("-") ? flag : `--${flag}`);

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function parseDuration(value: string | undefined, flag: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec((value ?? "").trim());
  if (!m)
    throw new UsageError(
      `${dashed(flag)} "${value}" is not a duration; use a number with a unit, e.g. 30s, 2m, 10h, 500ms`,
    );
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}

export function parsePositiveInt(value: string | undefined, flag: string, max = Number.MAX_SAFE_INTEGER): number {
  return parseIntIn(value, flag, 1, max);
}

export function parseIntIn(value: string | undefined, flag: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(String(value ?? "").trim()) || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`${dashed(flag)} "${value}" must be a whole number from ${min} to ${max}`);
  }
  return n;
}

export function parseChoice<T extends string>(value: string | undefined, flag: string, choices: readonly T[]): T {
  if (!choices.includes(value as T))
    throw new UsageError(`${dashed(flag)} "${value}" must be one of: ${choices.join(", ")}`);
  return value as T;
}

type StringDef = { description: string; default?: string; alias?: string; required?: boolean };

/** A duration flag ("30s", "2m"): help shows `--name duration`. */
export const durationFlag = <const D extends StringDef>(d: D) =>
  typed({ type: "string", valueHint: "duration", ...d } as const, parseDuration);

/** A whole-number flag from `min` to `max`: help shows `--name int`. */
export const intFlag = <const D extends StringDef>(d: D, min: number, max: number) =>
  typed({ type: "string", valueHint: "int", ...d } as const, (v, f) => parseIntIn(v, f, min, max));

/** A flag with a fixed set of values: help shows `--name text|json`. */
export const choiceFlag = <const D extends StringDef>(d: D, choices: readonly string[]) =>
  typed({ type: "string", valueHint: choices.join("|"), ...d } as const, (v, f) => parseChoice(v, f, choices));

const REPEATABLE = new WeakSet<object>();

/**
 * A string flag that may be given more than once (`--env A=1 --env B=2`): the strict parser checks every value and
 * hands them all on, each as its own `--name=value` (citty itself keeps only the last; read them with allValues).
 */
export function repeatable<const D extends ArgDef>(def: D): D {
  REPEATABLE.add(def);
  return def;
}

export const isRepeatable = (def: ArgDef): boolean => REPEATABLE.has(def);

/** Every value of a repeatable flag, in the order given, from the canonical arguments a command is run with. */
export function allValues(rawArgs: readonly string[], name: string): string[] {
  const end = rawArgs.indexOf("--");
  const prefix = `--${name}=`;
  return (end < 0 ? rawArgs : rawArgs.slice(0, end))
    .filter((a) => a.startsWith(prefix))
    .map((a) => a.slice(prefix.length));
}

const BARE = new WeakMap<object, string>();

/** The value a string flag takes when given bare (`--dry-run` ≡ `--dry-run=client`); it then only takes `=value`. */
export const bareValueOf = (def: ArgDef): string | undefined => BARE.get(def);

export const DRY_RUN = ["none", "client", "server"] as const;
export type DryRun = (typeof DRY_RUN)[number];

/** kubectl's --dry-run: `none`, `client` (print, send nothing) or `server` (the API server checks, stores nothing). */
export function dryRunFlag(description: string) {
  const def = choiceFlag({ default: "none", description }, DRY_RUN);
  BARE.set(def, "client");
  return def;
}

/** A namespace name (a DNS-1123 label). */
export function parseNamespaceName(value: string, flag: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value) || value.length > 63)
    throw new UsageError(
      `${dashed(flag)} "${value}" is not a valid namespace name (lower-case letters, digits and '-', at most 63 characters)`,
    );
  return value;
}
