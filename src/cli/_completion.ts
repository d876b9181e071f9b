/**
 * Shell completion scripts for bash, zsh and fish, generated from the command tree (so a new command or
 * flag completes without editing anything here). Each path of command words maps to what may follow it:
 * subcommands for a group; flags (and, after a flag that takes a value, nothing) for a leaf.
 * zsh reuses the bash function through bashcompinit. Keys of the bash tables start with "@" (bash refuses an
 * empty key, and the root's path is empty). Pure: the tree is given.
 */

export interface CompletionNode {
  /** Command words after the program name, e.g. "webapp list"; "" for the root. */
  path: string;
  subcommands: string[];
  flags: { long: string; short?: string; takesValue: boolean; values?: string[] }[];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashCompletion(program: string, nodes: readonly CompletionNode[]): string {
  const fn = `_${program.replace(/\W/g, "_")}`;
  const entries = nodes.map((n) => {
    const flags = n.flags.flatMap((f) => [`--${f.long}`, ...(f.short ? [`-${f.short}`] : [])]);
    return `    [${q(`@${n.path}`)}]=${q([...n.subcommands, ...flags].join(" "))}`;
  });
  const valued = nodes.flatMap((n) =>
    n.flags
      .filter((f) => f.takesValue)
      .flatMap((f) =>
        [`--${f.long}`, ...(f.short ? [`-${f.short}`] : [])].map(
          (s) => `    [${q(`@${n.path} ${s}`)}]=${q((f.values ?? []).join(" "))}`,
        ),
      ),
  );
  return `# ${program} completion for bash (and zsh through bashcompinit)
${fn}() {
  local cur prev path="" w i
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  local -A words=(
${entries.join("\n")}
  )
  local -A values=(
${valued.join("\n")}
  )
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    if [[ -n "\${words["@\${path:+$path }$w"]+x}" ]]; then path="\${path:+$path }$w"; fi
  done
  if [[ -n "\${values["@$path $prev"]+x}" ]]; then
    COMPREPLY=($(compgen -W "\${values["@$path $prev"]}" -- "$cur"))
    return
  fi
  COMPREPLY=($(compgen -W "\${words["@$path"]}" -- "$cur"))
}
complete -o default -F ${fn} ${program}
`;
}

export function zshCompletion(program: string, nodes: readonly CompletionNode[]): string {
  return `#compdef ${program}
# ${program} completion for zsh
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program, nodes).replace(/^# .*\n/, "")}`;
}

export function fishCompletion(program: string, nodes: readonly CompletionNode[]): string {
  const groups = new Set(nodes.filter((n) => n.subcommands.length).map((n) => n.path));
  const fn = `__${program.replace(/\W/g, "_")}_path`;
  const lines = [
    `# ${program} completion for fish`,
    `function ${fn}`,
    "    set -l path",
    "    for w in (commandline -opc)[2..-1]",
    "        string match -q -- '-*' $w; and continue",
    `        set -l next (string join ' ' $path $w)`,
    `        contains -- $next ${[...new Set(nodes.map((n) => n.path).filter(Boolean))].map(q).join(" ")}; and set path $path $w`,
    "    end",
    "    string join ' ' $path",
    "end",
    `function ${fn}_is`,
    `    set -l p (${fn})`,
    '    test "$p" = "$argv[1]"',
    "end",
    `complete -c ${program} -f`,
  ];
  for (const n of nodes) {
    const cond = `-n ${q(`${fn}_is "${n.path}"`)}`;
    if (groups.has(n.path) && n.subcommands.length)
      lines.push(`complete -c ${program} ${cond} -a ${q(n.subcommands.join(" "))}`);
    for (const f of n.flags) {
      const parts = [`complete -c ${program} ${cond} -l ${f.long}`];
      if (f.short) parts.push(`-s ${f.short}`);
      if (f.takesValue) parts.push(f.values?.length ? `-x -a ${q(f.values.join(" "))}` : "-r");
      lines.push(parts.join(" "));
    }
  }
  return `${lines.join("\n")}\n`;
}
