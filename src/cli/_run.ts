/**
 * Runs the command tree with kubectl's exit codes: 0 success, 1 error, 2 usage.
 *
 * - `--help`/`-h` anywhere prints the usage of the deepest command named; `--version` prints the version.
 * - A usage mistake (unknown command, missing or invalid argument) prints the usage and the mistake, exit 2.
 * - Any other failure prints one line `error: <message>` (no stack trace unless DEVCTL_DEBUG is set), exit 1.
 */
import { runCommand, showUsage, type CommandDef } from "citty";
import { versionLine } from "../build/version.ts";

// biome-ignore lint/suspicious/noExplicitAny: citty's CommandDef is generic over each command's own args.
type AnyCommand = CommandDef<any>;

export class UsageError extends Error {
  override readonly name = "UsageError";
}

export async function run(root: AnyCommand, argv: string[]): Promise<void> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    console.log(versionLine());
    return;
  }
  if (argv.includes("--help") || argv.includes("-h") || argv.length === 0) {
    const [cmd, parent] = await resolve(root, argv);
    await showUsage(cmd, parent);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  try {
    await runCommand(root, { rawArgs: argv });
  } catch (e) {
    const err = e as Error & { code?: string };
    const usage = err instanceof UsageError || (err?.name === "CLIError" && err.code !== undefined);
    if (usage) {
      const [cmd, parent] = await resolve(root, argv);
      await showUsage(cmd, parent);
      console.error(`\nerror: ${err.message}`);
      process.exit(2);
    }
    console.error(`error: ${err?.message ?? String(e)}`);
    if (process.env.DEVCTL_DEBUG && err?.stack) console.error(err.stack);
    process.exit(1);
  }
}

/** The deepest subcommand named by argv, and its parent (for usage). */
async function resolve(root: AnyCommand, argv: string[]): Promise<[AnyCommand, AnyCommand | undefined]> {
  let cmd = root;
  let parent: AnyCommand | undefined;
  for (const word of argv) {
    if (word.startsWith("-")) continue;
    const subs = typeof cmd.subCommands === "function" ? await cmd.subCommands() : await cmd.subCommands;
    const next = subs?.[word];
    if (!next) break;
    parent = cmd;
    cmd = await (typeof next === "function" ? (next as () => Promise<AnyCommand>)() : next);
  }
  return [cmd, parent];
}
