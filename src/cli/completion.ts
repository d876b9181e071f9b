/** `devctl completion bash|zsh|fish`: a completion script for the shell, generated from the command tree. */
import { defineCommand } from "citty";
import { bashCompletion, type CompletionNode, fishCompletion, zshCompletion } from "./_completion.ts";
import { UsageError } from "./_errors.ts";
import { bareValueOf } from "./_flags.ts";
import { type AnyCommand, argsOf, metaOf, subCommandsOf } from "./_run.ts";

const SHELLS = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion } as const;

async function nodesOf(cmd: AnyCommand, path: string[]): Promise<CompletionNode[]> {
  const subs = await subCommandsOf(cmd);
  const args = await argsOf(cmd);
  const flags = Object.entries(args)
    .filter(([, d]) => d.type !== "positional")
    .map(([long, d]) => {
      const alias = ("alias" in d && d.alias ? [d.alias].flat() : []).find((a) => a.length === 1);
      const values = d.type === "enum" ? d.options : d.valueHint?.includes("|") ? d.valueHint.split("|") : undefined;
      return {
        long,
        ...(alias ? { short: alias } : {}),
        takesValue: d.type !== "boolean" && bareValueOf(d) === undefined,
        ...(values ? { values } : {}),
      };
    });
  flags.push({ long: "help", short: "h", takesValue: false });
  const hidden = await Promise.all(Object.values(subs).map(async (c) => (await metaOf(c)).hidden === true));
  const names = Object.keys(subs).filter((_, i) => !hidden[i]);
  // A positional with a fixed set of values completes like subcommands.
  const choices = Object.values(args).flatMap((d) =>
    d.type === "positional" && d.valueHint?.includes("|") ? d.valueHint.split("|") : [],
  );
  const here: CompletionNode = {
    path: path.join(" "),
    subcommands: [...names, ...choices, ...(path.length === 0 ? ["help"] : [])],
    flags,
  };
  const below = await Promise.all(names.map((n) => nodesOf(subs[n] as AnyCommand, [...path, n])));
  return [here, ...below.flat()];
}

export default defineCommand({
  meta: {
    name: "completion",
    description: `Print a shell completion script for bash, zsh or fish

Examples:
  source <(devctl completion bash)                        # bash, this shell only
  devctl completion zsh > "\${fpath[1]}/_devctl"           # zsh
  devctl completion fish > ~/.config/fish/completions/devctl.fish`,
  },
  args: { shell: { type: "positional", valueHint: "bash|zsh|fish", description: "bash, zsh or fish", required: true } },
  async run({ args }) {
    const gen = SHELLS[args.shell as keyof typeof SHELLS];
    if (!gen) throw new UsageError(`SHELL "${args.shell}" must be one of: ${Object.keys(SHELLS).join(", ")}`);
    const { devctl } = await import("./index.ts");
    process.stdout.write(gen("devctl", await nodesOf(devctl, [])));
  },
});
