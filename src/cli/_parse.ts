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
 * Pure: no I/O.
 */
import type { ArgDef, ArgsDef } from "citty";
import { UsageError } from "./_errors.ts";
import { bareValueOf, parserOf } from "./_flags.ts";
import { suggest } from "./_suggest.ts";

export interface Parsed {
  /** Flag values by definition name, only those given. */
  values: Record<string, string | boolean>;
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
  const values: Record<string, string | boolean> = {};
  const spelled: Record<string, string> = {};
  const positionals: string[] = [];
  const unknown = (flag: string, hint?: string): never => {
    throw new UsageError(`unknown flag ${flag} for "${command}"${hint ? ` (did you mean ${hint}?)` : ""}`);
  };
  const valueAfter = (i: number, flag: string): string => {
    const next = tokens[i + 1];
    if (next === undefined || isFlagToken(next) || next === "--")
      throw new UsageError(`flag ${flag} of "${command}" needs a value`);
    return next;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as string;
    if (t === "--") {
      positionals.push(...tokens.slice(i + 1));
      break;
    }
    if (!isFlagToken(t)) {
      positionals.push(t);
      continue;
    }
    if (t.startsWith("--")) {
      const eq = t.indexOf("=");
      const key = eq < 0 ? t.slice(2) : t.slice(2, eq);
      const inline = eq < 0 ? undefined : t.slice(eq + 1);
      const flag = `--${key}`;
      const known = longs.get(key);
      const negated = key.startsWith("no-") ? longs.get(key.slice(3)) : undefined;
      if (!known && negated?.def.type === "boolean" && inline === undefined) {
        values[negated.name] = false;
        spelled[negated.name] = flag;
        continue;
      }
      if (!known) {
        const near = suggest(key, [...longs.keys()]);
        unknown(flag, near ? `--${near}` : undefined);
        continue;
      }
      spelled[known.name] = flag;
      if (known.def.type === "boolean") values[known.name] = booleanValue(inline, flag);
      else if (inline !== undefined) values[known.name] = inline;
      else if (bareValueOf(known.def) !== undefined) {
        const next = tokens[i + 1];
        if (next !== undefined && known.def.valueHint?.split("|").includes(next))
          throw new UsageError(`${flag} takes its value after "=": ${flag}=${next}`);
        values[known.name] = bareValueOf(known.def) as string;
      } else values[known.name] = valueAfter(i++, flag);
      continue;
    }
    // One or more short flags: -A, -Ay, -n value, -nvalue, -n=value.
    const chars = t.slice(1);
    for (let j = 0; j < chars.length; j++) {
      const c = chars[j] as string;
      const known = shorts.get(c);
      if (!known) {
        const near = [...shorts.keys()].find((s) => s.toLowerCase() === c.toLowerCase());
        unknown(`-${c}`, near ? `-${near}` : longs.has(c) ? `--${c}` : undefined);
        break;
      }
      spelled[known.name] = `-${c}`;
      if (known.def.type === "boolean") {
        values[known.name] = true;
        continue;
      }
      const rest = chars.slice(j + 1);
      values[known.name] = rest.startsWith("=") ? rest.slice(1) : rest !== "" ? rest : valueAfter(i++, `-${c}`);
      break;
    }
  }
  checkPositionals(positionalDefs, positionals, command);
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    const given = values[name];
    if (given === undefined) {
      if (def.required && def.default === undefined)
        throw new UsageError(`required flag --${name} of "${command}" is not set`);
      continue;
    }
    if (typeof given !== "string") continue;
    const flag = spelled[name] ?? `--${name}`;
    if (def.type === "enum" && def.options && !def.options.includes(given))
      throw new UsageError(`${flag} "${given}" must be one of: ${def.options.join(", ")}`);
    parserOf(def)?.(given, flag);
  }
  return { values, positionals, rawArgs: canonical(values, positionals) };
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

function canonical(values: Record<string, string | boolean>, positionals: readonly string[]): string[] {
  const flags = Object.entries(values).map(([name, v]) =>
    v === true ? `--${name}` : v === false ? `--no-${name}` : `--${name}=${v}`,
  );
  return [...flags, "--", ...positionals];
}
