import { describe, expect, test } from "bun:test";
import { bashCompletion, type CompletionNode, fishCompletion, zshCompletion } from "./_completion.ts";

const tree: CompletionNode[] = [
  { path: "", subcommands: ["webapp", "help"], flags: [{ long: "help", short: "h", takesValue: false }] },
  { path: "webapp", subcommands: ["list", "get"], flags: [] },
  {
    path: "webapp list",
    subcommands: [],
    flags: [
      { long: "output", short: "o", takesValue: true, values: ["json", "yaml"] },
      { long: "all-namespaces", short: "A", takesValue: false },
    ],
  },
  { path: "webapp get", subcommands: [], flags: [] },
];

/** What bash completes for the words typed (the last one is being completed). */
function complete(...words: string[]): string {
  const script = `${bashCompletion("devctl", tree)}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _devctl; echo "\${COMPREPLY[*]}"`;
  const r = Bun.spawnSync(["bash", "-c", script], { stdout: "pipe", stderr: "pipe" });
  expect(r.stderr.toString()).toBe("");
  return r.stdout.toString().trim();
}

describe("shell completion", () => {
  test("bash completes commands, then flags of the command named, then values of a flag", () => {
    expect(complete("devctl", "")).toBe("webapp help --help -h");
    expect(complete("devctl", "webapp", "l")).toBe("list");
    expect(complete("devctl", "webapp", "list", "--a")).toBe("--all-namespaces");
    expect(complete("devctl", "webapp", "list", "-o", "")).toBe("json yaml");
    expect(complete("devctl", "webapp", "list", "-A", "--output", "y")).toBe("yaml");
  });

  test("zsh loads the same function through bashcompinit; fish gets one complete line per word", () => {
    expect(zshCompletion("devctl", tree)).toStartWith("#compdef devctl\n");
    expect(zshCompletion("devctl", tree)).toContain("complete -o default -F _devctl devctl");
    const fish = fishCompletion("devctl", tree);
    expect(fish).toContain(`complete -c devctl -n '__devctl_path_is "webapp"' -a 'list get'`);
    expect(fish).toContain(`complete -c devctl -n '__devctl_path_is "webapp list"' -l output -s o -x -a 'json yaml'`);
  });
});
