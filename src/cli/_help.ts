/**
 * Help laid out as kubectl lays it out: the description, then Examples in their own section, then the
 * Commands (aligned) or the Options (aligned, with value types and defaults), then Usage with the full
 * command path, then where to read more. Lines are wrapped to `width` and never end in a space; styling
 * (bold headings) only when the caller's Styles say so.
 *
 * Source: citty's definitions. A command's `meta.description` is "Summary line\n\nMore paragraphs\n\nExamples:\n  ...";
 * the summary is what the parent's command list shows, the Examples block becomes its own section.
 */
import type { ArgDef, ArgsDef, CommandMeta } from "citty";
import type { Styles } from "./_color.ts";

export interface HelpEntry {
  name: string;
  meta: CommandMeta;
  args: ArgsDef;
  /** Subcommand names and metas, in order; empty for a leaf. */
  commands: { name: string; meta: CommandMeta }[];
  /** Full path, e.g. ["devctl", "webapp", "get"]. */
  path: string[];
}

export const HELP_WIDTH = 100;
const GAP = 3;

export interface Description {
  summary: string;
  body: string;
  examples: string[];
}

export function splitDescription(text = ""): Description {
  const [before = "", after] = text.split(/\n\nExamples:\n/);
  const [summary = "", ...rest] = before.split("\n");
  const examples = (after ?? "")
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  return { summary: summary.trim(), body: rest.join("\n").trim(), examples };
}

/** Words of `text` in lines of at most `width` characters (a longer word gets a line of its own). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const para of text.split("\n")) {
    let line = "";
    for (const word of para.split(/\s+/).filter(Boolean)) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines;
}

/** Two aligned columns: left cells padded to the widest (at most `maxLeft`), right cells wrapped under themselves. */
export function columns(rows: readonly [string, string][], width: number, maxLeft = 36): string[] {
  const left = Math.min(maxLeft, Math.max(0, ...rows.map(([l]) => l.length)));
  const out: string[] = [];
  for (const [l, r] of rows) {
    const indent = " ".repeat(left + GAP);
    const text = wrap(r, Math.max(20, width - left - GAP));
    if (l.length > left) {
      out.push(l);
      for (const t of text) out.push(`${indent}${t}`.trimEnd());
      continue;
    }
    text.forEach((t, i) => {
      out.push((i === 0 ? `${l.padEnd(left + GAP)}${t}` : `${indent}${t}`).trimEnd());
    });
  }
  return out;
}

const aliases = (def: ArgDef): string[] =>
  "alias" in def && def.alias ? (Array.isArray(def.alias) ? def.alias : [def.alias]) : [];

function optionRow(name: string, def: ArgDef): [string, string] {
  const short = aliases(def).find((a) => a.length === 1);
  const type =
    def.type === "boolean"
      ? ""
      : ` ${def.type === "enum" && def.options ? def.options.join("|") : (def.valueHint ?? "string")}`;
  const left = `  ${short ? `-${short}, ` : "    "}--${name}${type}`;
  const dflt =
    def.default === undefined || def.default === "" || def.default === false
      ? ""
      : typeof def.default === "string"
        ? ` (default "${def.default}")`
        : ` (default ${def.default})`;
  return [left, `${def.description ?? ""}${def.required ? " (required)" : ""}${dflt}`];
}

export function renderHelp(e: HelpEntry, s: Styles, width = HELP_WIDTH): string {
  const d = splitDescription(e.meta.description);
  const command = e.path.join(" ");
  const heading = (t: string) => s.bold(t);
  const lines: string[] = [...wrap(d.summary, width)];
  if (d.body) lines.push("", ...d.body.split("\n").flatMap((l) => (l.startsWith(" ") ? [l] : wrap(l, width))));
  if (d.examples.length) lines.push("", heading("Examples:"), ...d.examples);
  if (e.commands.length) {
    const rows = e.commands
      .filter((c) => !c.meta.hidden)
      .map((c): [string, string] => [`  ${c.name}`, splitDescription(c.meta.description).summary]);
    lines.push("", heading("Commands:"), ...columns(rows, width, 24));
  }
  const options = Object.entries(e.args)
    .filter(([, def]) => def.type !== "positional")
    .map(([name, def]) => optionRow(name, def));
  options.push(["  -h, --help", `Help for ${e.path.at(-1)}`]);
  if (e.path.length === 1) options.push(["  -v, --version", "Print the version and exit"]);
  lines.push("", heading("Options:"), ...columns(options, width));
  const positionals = Object.entries(e.args)
    .filter(([, def]) => def.type === "positional")
    .map(([name, def]) =>
      def.required === false || def.default !== undefined ? `[${name.toUpperCase()}]` : name.toUpperCase(),
    );
  const usage = e.commands.length ? `${command} <command> [options]` : [command, ...positionals, "[options]"].join(" ");
  lines.push("", heading("Usage:"), `  ${usage}`);
  if (e.commands.length) lines.push("", `Use "${command} <command> --help" for more information about a command.`);
  return `${lines.map((l) => l.trimEnd()).join("\n")}\n`;
}
