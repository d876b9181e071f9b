/**
 * Strict parsing of one command's arguments against its citty args definitions, as kubectl (pflag) parses:
 * `--name value`, `--name=value`, `-n value`, `-nvalue`, `-n=value`, grouped short booleans (`-Ay`),
 * `--flag`, `--flag=true|false` and `--no-flag` for booleans, a string flag with a bare value
 * (`--dry-run` ≡ `--dry-run=client`, which then takes a value only after `=`), and `--` ending the flags.
 *
 * Properties:
 * - Total: every token is a known flag, its value, or a declared positional; anything else is a UsageError
 *   (unknown flag with a "did you mean", a value missing, a boolean given something other than true/false,
 *   a positional missing or one too many, a required flag not set, a bad value per the flag's check).
 * - Messages name flags as they were typed (`-o "xml" ...`) and the command by its full path.
 * - The result is canonical: `rawArgs` re-spells every given flag as `--name=value`/`--name`/`--no-name`
 *   followed by `--` and the positionals, so citty's own lenient parser reads exactly what was checked.
 * - A flag given twice keeps its last value, as pflag does, unless it is repeatable (_flags.ts): then every value
 *   is kept, checked, and spelled once each in `rawArgs`.
 * Pure: no I/O.
 */
import type { ArgDef, ArgsDef } from "citty";
import { UsageError } from "./_errors.ts";
import { bareValueOf, isRepeatable, parserOf } from "./_flags.ts";
import { suggest } from "./_suggest.ts";

/** A flag's value: a string, a boolean, or every string given to a repeatable flag. */
type FlagValue = string | boolean | string[];

export interface Parsed {
  /** Flag values by definition name, only those given. */
  values: Record<string, FlagValue>;
  positionals: string[];
  /** What citty is handed. */
  rawArgs: string[];
}

interface Known {
  name: string;
  def: ArgDef;
}

const aliasesOf = (def: ArgDef): string[] =>
  "alias" in def && def.alias ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];

/** A token that is a flag (not "-", not a negative number, not after "--"). */
export const isFlagToken = (t: string): boolean => t.startsWith("-") && t !== "-" && !/^-\d/.test(t);

export function parseCommandArgs(defs: ArgsDef, tokens: readonly string[], command: string): Parsed {
  const { longs, shorts, positionalDefs } = indexDefs(defs);
  const scan: Scan = { tokens, command, longs, shorts, values: {}, spelled: {} };
  const positionals: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === "--") {
      positionals.push(...tokens.slice(i + 1));
      break;
    }
    if (!isFlagToken(t)) positionals.push(t);
    else if (t.startsWith("--")) i = readLong(scan, t, i);
    else i = readShorts(scan, t, i);
  }
  checkPositionals(positionalDefs, positionals, command);
  checkFlags(defs, scan.values, scan.spelled, command);
  return { values: scan.values, positionals, rawArgs: canonical(scan.values, positionals) };
}

/** The flags by long name and by one-letter alias, and the positionals in their declared order. */
function indexDefs(defs: ArgsDef): { longs: Map<string, Known>; shorts: Map<string, Known>; positionalDefs: Known[] } {
  const longs = new Map<string, Known>();
  const shorts = new Map<string, Known>();
  const positionalDefs: Known[] = [];
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") {
      positionalDefs.push({ name, def });
      continue;
    }
    longs.set(name, { name, def });
    for (const a of aliasesOf(def)) (a.length === 1 ? shorts : longs).set(a, { name, def });
  }
  return { longs, shorts, positionalDefs };
}

/** The state of one scan over a command's tokens: what is known, and what has been read so far. */
interface Scan {
  tokens: readonly string[];
  command: string;
  longs: Map<string, Known>;
  shorts: Map<string, Known>;
  values: Record<string, FlagValue>;
  /** How each given flag was typed, by definition name. */
  spelled: Record<string, string>;
}

const unknownFlag = (s: Scan, flag: string, hint?: string): never => {
  throw new UsageError(`unknown flag ${flag} for "${s.command}"${hint ? ` (did you mean ${hint}?)` : ""}`);
};

/** The token after index i as the value of flag; a UsageError if there is none or it is a flag. */
function valueAfter(s: Scan, i: number, flag: string): string {
  const next = s.tokens[i + 1];
  if (next === undefined || isFlagToken(next) || next === "--")
    throw new UsageError(`flag ${flag} of "${s.command}" needs a value`);
  return next;
}

/** Reads the long flag t at index i (`--name`, `--name=value`, `--no-name`); returns the index of its last token. */
function readLong(s: Scan, t: string, i: number): number {
  const eq = t.indexOf("=");
  const key = eq < 0 ? t.slice(2) : t.slice(2, eq);
  const inline = eq < 0 ? undefined : t.slice(eq + 1);
  const flag = `--${key}`;
  const known = s.longs.get(key);
  const negated = key.startsWith("no-") ? s.longs.get(key.slice(3)) : undefined;
  if (!known && negated?.def.type === "boolean" && inline === undefined) {
    s.values[negated.name] = false;
    s.spelled[negated.name] = flag;
    return i;
  }
  if (!known) {
    const near = suggest(key, [...s.longs.keys()]);
    return unknownFlag(s, flag, near ? `--${near}` : undefined);
  }
  s.spelled[known.name] = flag;
  if (known.def.type === "boolean") s.values[known.name] = booleanValue(inline, flag);
  else if (inline !== undefined) setValue(s, known, inline);
  else if (bareValueOf(known.def) !== undefined) {
    const next = s.tokens[i + 1];
    if (next !== undefined && known.def.valueHint?.split("|").includes(next))
      throw new UsageError(`${flag} takes its value after "=": ${flag}=${next}`);
    s.values[known.name] = bareValueOf(known.def) as string;
  } else setValue(s, known, valueAfter(s, i++, flag));
  return i;
}

/** A string flag's value: the last one given, or every one for a repeatable flag. */
function setValue(s: Scan, known: Known, value: string): void {
  const before = s.values[known.name];
  s.values[known.name] = isRepeatable(known.def) ? [...(Array.isArray(before) ? before : []), value] : value;
}

/** Reads one or more short flags at index i: -A, -Ay, -n value, -nvalue, -n=value; returns the index of the last. */
function readShorts(s: Scan, t: string, i: number): number {
  const chars = t.slice(1);
  for (let j = 0; j < chars.length; j++) {
    const c = chars[j] as string;
    const known = s.shorts.get(c);
    if (!known) {
      const near = [...s.shorts.keys()].find((k) => k.toLowerCase() === c.toLowerCase());
      return unknownFlag(s, `-${c}`, near ? `-${near}` : s.longs.has(c) ? `--${c}` : undefined);
    }
    s.spelled[known.name] = `-${c}`;
    if (known.def.type === "boolean") {
      s.values[known.name] = true;
      continue;
    }
    const rest = chars.slice(j + 1);
    setValue(s, known, rest.startsWith("=") ? rest.slice(1) : rest !== "" ? rest : valueAfter(s, i++, `-${c}`));
    break;
  }
  return i;
}

/** Every required flag is set, and every given value passes its enum options and its flag's own check. */
function checkFlags(
  defs: ArgsDef,
  values: Readonly<Record<string, FlagValue>>,
  spelled: Readonly<Record<string, string>>,
  command: string,
): void {
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    const given = values[name];
    if (given === undefined) {
      if (def.required && def.default === undefined)
        throw new UsageError(`required flag --${name} of "${command}" is not set`);
      continue;
    }
    if (typeof given === "boolean") continue;
    const flag = spelled[name] ?? `--${name}`;
    for (const value of Array.isArray(given) ? given : [given]) {
      if (def.type === "enum" && def.options && !def.options.includes(value))
        throw new UsageError(`${flag} "${value}" must be one of: ${def.options.join(", ")}`);
      parserOf(def)?.(value, flag);
    }
  }
}

function booleanValue(inline: string | undefined, flag: string): boolean {
  if (inline === undefined || inline === "true") return true;
  if (inline === "false") return false;
  throw new UsageError(`${flag} "${inline}" must be true or false`);
}

function checkPositionals(defs: readonly Known[], given: readonly string[], command: string): void {
  defs.forEach(({ name, def }, i) => {
    const required = def.required !== false && def.default === undefined;
    if (given[i] === undefined && required)
      throw new UsageError(`missing argument ${name.toUpperCase()} for "${command}"`);
  });
  const extra = given[defs.length];
  if (extra !== undefined) {
    const what = defs.length === 0 ? "takes no arguments" : `takes ${defs.map((d) => d.name.toUpperCase()).join(" ")}`;
    throw new UsageError(`unexpected argument "${extra}" for "${command}" (it ${what})`);
  }
}

function canonical(values: Record<string, FlagValue>, positionals: readonly string[]): string[] {
  const flags = Object.entries(values).flatMap(([name, v]) =>
    v === true ? `--${name}` : v === false ? `--no-${name}` : (Array.isArray(v) ? v : [v]).map((x) => `--${name}=${x}`),
  );
  return [...flags, "--", ...positionals];
}
