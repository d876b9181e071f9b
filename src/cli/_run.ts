/**
 * Runs the command tree strictly, with kubectl's exit codes: 0 success, 1 error, 2 usage.
 *
 * - The words before the flags name the command (`devctl webapp list`); an unknown one is a usage error
 *   with a "did you mean". A group named without a subcommand prints its help (exit 0), as kubectl does.
 * - `--help`/`-h` anywhere before `--`, and `devctl help [command]`, print that command's help on stdout (exit 0);
 *   `devctl --version` prints the version.
 * - Every argument of the command is checked by parseCommandArgs against the command's citty args before
 *   citty runs it, so a mistake stops everything before any side effect.
 * - A usage mistake prints on stderr `error: <what>` and `see '<command> --help'`, nothing on stdout, exit 2.
 *   Any other failure prints `error: <message>` (no stack trace unless DEVCTL_DEBUG is set), exit 1.
 */
import { type ArgsDef, type CommandDef, type CommandMeta, runCommand } from "citty";
import { versionLine } from "../build/version.ts";
import { stderrStyles, stdoutStyles } from "./_color.ts";
import { UsageError } from "./_errors.ts";
import { HELP_WIDTH, type HelpEntry, renderHelp } from "./_help.ts";
import { out } from "./_output.ts";
import { isFlagToken, parseCommandArgs } from "./_parse.ts";
import { suggest } from "./_suggest.ts";

export { UsageError } from "./_errors.ts";

// biome-ignore lint/suspicious/noExplicitAny: citty's CommandDef is generic over each command's own args.
export type AnyCommand = CommandDef<any>;

const HELP_COMMAND: CommandMeta = { name: "help", description: "Help about any command" };

const resolved = async <T>(v: unknown): Promise<T> =>
  (typeof v === "function" ? await (v as () => unknown)() : await v) as T;

export async function subCommandsOf(cmd: AnyCommand): Promise<Record<string, AnyCommand>> {
  const subs = await resolved<Record<string, unknown> | undefined>(cmd.subCommands);
  const entries = await Promise.all(
    Object.entries(subs ?? {}).map(async ([k, v]) => [k, await resolved<AnyCommand>(v)] as const),
  );
  return Object.fromEntries(entries);
}

export const argsOf = (cmd: AnyCommand): Promise<ArgsDef> => resolved<ArgsDef>(cmd.args ?? {});
export const metaOf = (cmd: AnyCommand): Promise<CommandMeta> => resolved<CommandMeta>(cmd.meta ?? {});

/** Everything help needs about one command. */
export async function helpEntry(cmd: AnyCommand, path: string[]): Promise<HelpEntry> {
  const subs = await subCommandsOf(cmd);
  const commands = await Promise.all(Object.entries(subs).map(async ([name, c]) => ({ name, meta: await metaOf(c) })));
  if (path.length === 1) commands.push({ name: "help", meta: HELP_COMMAND });
  commands.sort((a, b) => a.name.localeCompare(b.name));
  return { name: path.at(-1) ?? "", meta: await metaOf(cmd), args: await argsOf(cmd), commands, path };
}

interface Walked {
  cmd: AnyCommand;
  path: string[];
  rest: string[];
  isGroup: boolean;
}

/** Follows the command words of argv down the tree; `at` always holds the deepest path reached. */
async function walk(root: AnyCommand, words: readonly string[], at: string[], help: boolean): Promise<Walked> {
  let cmd = root;
  let i = 0;
  for (; ; i++) {
    const subs = await subCommandsOf(cmd);
    if (Object.keys(subs).length === 0) return { cmd, path: [...at], rest: words.slice(i), isGroup: false };
    const word = words[i];
    if (word === undefined || word === "--help" || word === "-h")
      return { cmd, path: [...at], rest: words.slice(i), isGroup: true };
    const command = `"${at.join(" ")}"`;
    if (isFlagToken(word)) throw new UsageError(`unknown flag ${word} for ${command}: name a command first`);
    const next = subs[word];
    if (!next) {
      const names = Object.keys(subs);
      if (at.length === 1 && !help) names.push("help");
      const near = suggest(word, names);
      throw new UsageError(`unknown command "${word}" for ${command}${near ? ` (did you mean ${near}?)` : ""}`);
    }
    at.push(word);
    cmd = next;
  }
}

async function printHelp(cmd: AnyCommand, path: string[]): Promise<void> {
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined;
  const width = columns && columns >= 40 ? Math.min(columns, HELP_WIDTH) : HELP_WIDTH;
  process.stdout.write(renderHelp(await helpEntry(cmd, path), stdoutStyles(), width));
}

async function dispatch(root: AnyCommand, argv: readonly string[], at: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    out(versionLine());
    return 0;
  }
  const help = argv[0] === "help";
  const w = await walk(root, help ? argv.slice(1) : argv, at, help);
  const end = w.rest.indexOf("--");
  const flags = end < 0 ? w.rest : w.rest.slice(0, end);
  if (help) {
    const extra = w.rest[0];
    if (extra !== undefined) throw new UsageError(`unknown command "${extra}" for "${w.path.join(" ")}"`);
    await printHelp(w.cmd, w.path);
    return 0;
  }
  if (w.isGroup || flags.includes("--help") || flags.includes("-h")) {
    await printHelp(w.cmd, w.path);
    return 0;
  }
  const parsed = parseCommandArgs(await argsOf(w.cmd), w.rest, w.path.join(" "));
  await runCommand(w.cmd, { rawArgs: parsed.rawArgs });
  return typeof process.exitCode === "number" ? process.exitCode : 0;
}

/** Runs argv against the tree and returns the exit code (nothing is printed to stdout on an error). */
export async function run(root: AnyCommand, argv: readonly string[]): Promise<number> {
  const at = [(await metaOf(root)).name ?? "devctl"];
  try {
    return await dispatch(root, argv, at);
  } catch (e) {
    const err = e as Error & { code?: string };
    const red = stderrStyles().red;
    if (err instanceof UsageError || (err?.name === "CLIError" && err.code !== undefined)) {
      process.stderr.write(`${red("error:")} ${err.message}\nsee '${at.join(" ")} --help'\n`);
      return 2;
    }
    // An API server's message may carry raw newlines (admission webhooks, validation lists): one line.
    const message = err?.message ?? String(e);
    process.stderr.write(
      `${red("error:")} ${err?.name === "KubeError" ? message.replace(/\s*\n\s*/g, " ") : message}\n`,
    );
    if (process.env.DEVCTL_DEBUG && err?.stack) process.stderr.write(`${err.stack}\n`);
    return 1;
  }
}
