/**
 * The CLI matrix (issue #12 item 6), on the compiled dist/devctl, asserting stdout, stderr and exit code exactly.
 *
 * For every command of the tree (walked from src/cli, so a new command or flag is covered without editing
 * this file): an unknown flag, a misspelt flag, a missing and an extra positional argument, a bad value for
 * every typed flag (durations, numbers, choices, booleans, -o), --help and `devctl help ...`; on a pipe,
 * on a pseudo-terminal (`script`), and with NO_COLOR. None of these needs a cluster: they fail before any
 * request (an unreachable kubeconfig proves it: a request would be exit 1, not 2). The full matrix runs the
 * entry in process (fast); two cases per command, the terminal cases and the plugin case run the
 * compiled executable, in parallel.
 * The -o formats against a cluster are in the last block.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ArgDef, ArgsDef } from "citty";
import { bareValueOf, parserOf } from "../src/cli/_flags.ts";
import { type AnyCommand, argsOf, run as runEntry, subCommandsOf } from "../src/cli/_run.ts";
import { suggest } from "../src/cli/_suggest.ts";
import { devctl as root } from "../src/cli/index.ts";
import { kubectlPath } from "./cluster/kubectl.ts";

const DEVCTL = resolve(import.meta.dir, "../dist/devctl");
const scratch = mkdtempSync(join(tmpdir(), "devctl-matrix-"));
/** A kubeconfig whose server refuses connections: any request would fail with exit 1. */
const NOWHERE = join(scratch, "nowhere.kubeconfig");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Leaf {
  path: string[];
  args: ArgsDef;
}

async function leaves(cmd: AnyCommand, path: string[]): Promise<Leaf[]> {
  const subs = await subCommandsOf(cmd);
  if (Object.keys(subs).length === 0) return [{ path, args: await argsOf(cmd) }];
  const below = await Promise.all(Object.entries(subs).map(([n, c]) => leaves(c, [...path, n])));
  return below.flat();
}

const all = await leaves(root, []);
const groups = [[], ["operator"], ["webapp"]];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

const ENV = { KUBECONFIG: NOWHERE, NO_COLOR: undefined, FORCE_COLOR: undefined, TERM: "xterm" };

async function run(args: string[], env: Record<string, string | undefined> = {}): Promise<Result> {
  const p = Bun.spawn([DEVCTL, ...args], {
    env: { ...process.env, ...ENV, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout, stderr };
}

/** The command under a pseudo-terminal; `script` merges stdout and stderr and writes CRLF. */
async function runPty(args: string[], env: Record<string, string | undefined> = {}): Promise<Result> {
  const line = [DEVCTL, ...args].map((a) => `'${a}'`).join(" ");
  const p = Bun.spawn(["script", "-qec", line, "/dev/null"], {
    env: { ...process.env, ...ENV, ...env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(p.stdout).text(),
    new Response(p.stderr).text(),
    p.exited,
  ]);
  return { code, stdout: stdout.replace(/\r\n/g, "\n"), stderr };
}

const usage = (path: string[], message: string): Result => ({
  code: 2,
  stdout: "",
  stderr: `error: ${message}\nsee '${["devctl", ...path].join(" ")} --help'\n`,
});

/** Valid values for flags some cases must set so that the flag under test is the only mistake. */
const VALID: Record<string, string> = { image: "nginx:1.25", port: "80", replicas: "2" };
/** Arguments that make a leaf's positionals and required flags valid. */
function validArgs(leaf: Leaf): string[] {
  const out: string[] = [];
  for (const [name, def] of Object.entries(leaf.args)) {
    if (def.type === "positional" && def.required !== false) out.push(name === "shell" ? "bash" : "x");
    else if (def.type !== "positional" && def.required) out.push(`--${name}`, VALID[name] ?? "x");
  }
  return out;
}
const positionalsOf = (leaf: Leaf) => Object.entries(leaf.args).filter(([, d]) => d.type === "positional");
const flagsOf = (leaf: Leaf) => Object.entries(leaf.args).filter(([, d]) => d.type !== "positional");
const typedFlags = (leaf: Leaf) =>
  flagsOf(leaf).filter(([, d]) => parserOf(d as ArgDef) !== undefined || d.type === "enum" || d.type === "boolean");

interface Case {
  label: string;
  args: string[];
  want: Result | ((r: Result) => void);
  env?: Record<string, string | undefined>;
}

function casesFor(leaf: Leaf): Case[] {
  const name = leaf.path.join(" ");
  const cmd = `"devctl ${name}"`;
  const valid = validArgs(leaf);
  const cases: Case[] = [
    {
      label: `${name} --bogus-flag`,
      args: [...leaf.path, ...valid, "--bogus-flag"],
      want: usage(leaf.path, `unknown flag --bogus-flag for ${cmd}`),
    },
  ];
  // A misspelling: the longest flag without its last letter, suggested back.
  const longest = flagsOf(leaf)
    .map(([n]) => n)
    .sort((a, b) => b.length - a.length)[0];
  if (longest) {
    const typo = longest.slice(0, -1);
    const near = suggest(
      typo,
      flagsOf(leaf).map(([n]) => n),
    );
    expect(near).toBe(longest);
    cases.push({
      label: `${name} --${typo}`,
      args: [...leaf.path, ...valid, `--${typo}`],
      want: usage(leaf.path, `unknown flag --${typo} for ${cmd} (did you mean --${longest}?)`),
    });
  }
  const positionals = positionalsOf(leaf);
  const first = positionals[0];
  if (first && first[1].required !== false)
    cases.push({
      label: `${name} without ${first[0].toUpperCase()}`,
      args: [...leaf.path],
      want: usage(leaf.path, `missing argument ${first[0].toUpperCase()} for ${cmd}`),
    });
  const takes = positionals.length
    ? `takes ${positionals.map(([n]) => n.toUpperCase()).join(" ")}`
    : "takes no arguments";
  cases.push({
    label: `${name} with an extra argument`,
    args: [
      ...leaf.path,
      ...valid.filter((_, i) => i < positionals.length),
      "extra-arg",
      ...valid.slice(positionals.length),
    ],
    want: usage(leaf.path, `unexpected argument "extra-arg" for ${cmd} (it ${takes})`),
  });
  for (const [flag, def] of typedFlags(leaf)) {
    // A value no check accepts; `=` for booleans and for flags with a bare value (--dry-run).
    const bad = def.type === "boolean" || bareValueOf(def as ArgDef) ? [`--${flag}=Bogus!`] : [`--${flag}`, "Bogus!"];
    const spelled = `--${flag}`;
    cases.push({
      label: `${name} ${bad.join(" ")}`,
      args: [...leaf.path, ...valid.filter((a, i) => !(a === `--${flag}` || valid[i - 1] === `--${flag}`)), ...bad],
      want: (r) => {
        expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" });
        const lines = r.stderr.split("\n");
        expect(lines[0]).toStartWith(`error: ${spelled} "Bogus!" `);
        expect(lines.slice(1)).toEqual([`see 'devctl ${name} --help'`, ""]);
      },
    });
  }
  cases.push({
    label: `${name} --help`,
    args: [...leaf.path, "--help"],
    want: (r) => {
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(r.stdout).toContain(`\nUsage:\n  devctl ${name}`);
      expect(r.stdout).toContain("\nExamples:\n");
      expect(r.stdout.split("\n").filter((l) => l !== l.trimEnd())).toEqual([]);
      expect(r.stdout).not.toContain("\u001B");
    },
  });
  return cases;
}

async function inParallel<T>(items: readonly T[], n: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

/**
 * The entry run in this process (src/main.ts's `run`), stdout and stderr captured: the same code as the
 * compiled executable without a process start (~150 ms each on this machine), so the whole matrix takes
 * well under a second. One case at a time, as both streams are this process's; KUBECONFIG points nowhere
 * meanwhile, so a case that parsed by mistake would fail with exit 1, not pass.
 */
async function runInProcess(args: string[], env: Record<string, string | undefined> = {}): Promise<Result> {
  const saved = { out: process.stdout.write, err: process.stderr.write, env: { ...process.env } };
  let stdout = "";
  let stderr = "";
  const capture = (append: (s: string) => void) =>
    ((chunk: string | Uint8Array) => {
      append(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      return true;
    }) as typeof process.stdout.write;
  for (const [k, v] of Object.entries({ ...ENV, ...env })) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  process.stdout.write = capture((s) => (stdout += s));
  process.stderr.write = capture((s) => (stderr += s));
  process.exitCode = 0;
  try {
    const code = await runEntry(root, args);
    return { code, stdout, stderr };
  } finally {
    process.stdout.write = saved.out;
    process.stderr.write = saved.err;
    process.exitCode = 0;
    for (const k of Object.keys(process.env)) if (!(k in saved.env)) delete process.env[k];
    Object.assign(process.env, saved.env);
  }
}

async function check(cases: readonly Case[], via: "in-process" | "executable" = "in-process"): Promise<number> {
  const failures: string[] = [];
  await inParallel(cases, via === "in-process" ? 1 : 6, async (c) => {
    const r = via === "in-process" ? await runInProcess(c.args, c.env) : await run(c.args, c.env);
    try {
      if (typeof c.want === "function") c.want(r);
      else expect(r).toEqual(c.want);
    } catch (e) {
      failures.push(`${c.label}: ${(e as Error).message}`);
    }
  });
  expect(failures).toEqual([]);
  return cases.length;
}

beforeAll(() => {
  if (!existsSync(DEVCTL)) throw new Error(`${DEVCTL} is missing: run \`npm run build\` first`);
  writeFileSync(
    NOWHERE,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user: { token: "x" } }],
      contexts: [{ name: "nowhere", context: { cluster: "c", user: "u" } }],
      "current-context": "nowhere",
    }),
  );
});

describe("every command refuses what it does not know, before doing anything", () => {
  test("unknown and misspelt flags, missing and extra arguments, bad values, --help: exact output and exit code", async () => {
    const started = performance.now();
    const n = await check(all.flatMap(casesFor));
    console.error(
      `${n} CLI cases on ${all.length} commands in ${Math.round(performance.now() - started)} ms (in process)`,
    );
  }, 60_000);

  test("the compiled executable answers exactly as the entry does in process (two cases per command)", async () => {
    const started = performance.now();
    const sample = all.flatMap((leaf) => {
      const cases = casesFor(leaf);
      return [cases[0], cases.at(-2)].filter((c): c is Case => c !== undefined);
    });
    const n = await check(sample, "executable");
    console.error(`${n} CLI cases through dist/devctl in ${Math.round(performance.now() - started)} ms`);
  }, 60_000);

  test("unknown commands get a suggestion; groups and `help` print help on stdout", async () => {
    await check([
      {
        label: "webapp lsit",
        args: ["webapp", "lsit"],
        want: usage(["webapp"], 'unknown command "lsit" for "devctl webapp" (did you mean list?)'),
      },
      { label: "bogus", args: ["bogus"], want: usage([], 'unknown command "bogus" for "devctl"') },
      { label: "help bogus", args: ["help", "bogus"], want: usage([], 'unknown command "bogus" for "devctl"') },
      {
        label: "-n before the command",
        args: ["-n", "x", "webapp", "list"],
        want: usage([], 'unknown flag -n for "devctl": name a command first'),
      },
      ...groups.map((g) => ({
        label: `${g.join(" ") || "devctl"} alone`,
        args: g,
        want: (r: Result) => {
          expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
          expect(r.stdout).toContain("\nCommands:\n");
        },
      })),
    ]);
    for (const args of [[], ["webapp"], ["webapp", "get"], ["operator", "run"]]) {
      const [viaHelp, viaFlag] = await Promise.all([run(["help", ...args]), run([...args, "--help"])]);
      expect(viaHelp).toEqual(viaFlag);
    }
  });

  test("typed values name the flag as typed and say what would be right", async () => {
    await check([
      {
        label: "install --replicas 0",
        args: ["operator", "install", "--replicas", "0"],
        want: usage(["operator", "install"], '--replicas "0" must be a whole number from 1 to 10'),
      },
      {
        label: "list -o xml",
        args: ["webapp", "list", "-o", "xml"],
        want: usage(
          ["webapp", "list"],
          '-o "xml" is not an output format; use one of: table, wide, name, yaml, json, jsonpath=TEMPLATE',
        ),
      },
      {
        label: "get -o jsonpath={.a[",
        args: ["webapp", "get", "x", "-o", "jsonpath={.a["],
        want: usage(
          ["webapp", "get"],
          '-o "jsonpath={.a[" is not a valid JSONPath template: unclosed action in "{.a["',
        ),
      },
      {
        label: "run lease timings",
        args: ["operator", "run", "--lease-duration", "2s", "--renew-deadline", "5s"],
        want: usage(
          ["operator", "run"],
          "--lease-duration (2s) must be greater than --renew-deadline (5s): a leader must give up before others may take over",
        ),
      },
      {
        label: "run -n Team_A",
        args: ["operator", "run", "-n", "Team_A"],
        want: usage(["operator", "run"], `-n "Team_A" is not a namespace name (lower-case letters, digits and '-')`),
      },
      {
        label: "create --port 70000",
        args: ["webapp", "create", "web", "--image", "nginx", "--port", "70000"],
        want: usage(
          ["webapp", "create"],
          'invalid WebApp "web": spec.port (--port): must be at most 65535 (got 70000)',
        ),
      },
      {
        label: "create --dry-run server",
        args: ["webapp", "create", "web", "--image", "nginx", "--port", "80", "--dry-run", "server"],
        want: usage(["webapp", "create"], '--dry-run takes its value after "=": --dry-run=server'),
      },
      {
        label: "completion tcsh",
        args: ["completion", "tcsh"],
        want: usage(["completion"], 'SHELL "tcsh" must be one of: bash, zsh, fish'),
      },
    ]);
  });
});

describe("colour only on a terminal", () => {
  const ESC = "\u001B[";
  test("a pipe never sees an escape code, in help or in errors", async () => {
    const [help, error] = await Promise.all([run(["webapp", "--help"]), run(["webapp", "lsit"])]);
    expect(help.stdout + help.stderr + error.stdout + error.stderr).not.toContain(ESC);
  });

  test("a pseudo-terminal gets bold headings and a red `error:`; NO_COLOR and TERM=dumb get none", async () => {
    const tty = await runPty(["webapp", "lsit"]);
    expect(tty.stdout).toBe(
      `${ESC}31merror:${ESC}39m unknown command "lsit" for "devctl webapp" (did you mean list?)\nsee 'devctl webapp --help'\n`,
    );
    expect((await runPty(["webapp", "--help"])).stdout).toContain(`${ESC}1mCommands:${ESC}22m`);
    for (const env of [{ NO_COLOR: "1" }, { TERM: "dumb" }]) {
      const [h, e] = await Promise.all([runPty(["webapp", "--help"], env), runPty(["webapp", "lsit"], env)]);
      expect({ env, escapes: (h.stdout + e.stdout).includes(ESC) }).toEqual({ env, escapes: false });
      expect(e.stdout).toStartWith("error: unknown command");
    }
    expect((await run(["webapp", "--help"], { FORCE_COLOR: "1" })).stdout).toContain(`${ESC}1m`);
    // Information and progress are never red, even on a terminal.
    const dry = await runPty(["operator", "install", "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("# dry run: 10 objects printed, nothing applied\n");
    expect(dry.stdout).not.toContain(ESC);
  });
});

describe("as a kubectl plugin", () => {
  test("a kubectl-devctl link on the PATH runs as `kubectl devctl`, with the same output and exit codes", async () => {
    const bin = join(scratch, "bin");
    Bun.spawnSync(["mkdir", "-p", bin]);
    Bun.spawnSync(["ln", "-sf", DEVCTL, join(bin, "kubectl-devctl")]);
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const viaKubectl = (args: string[]) => {
      const r = Bun.spawnSync([kubectlPath(), "devctl", ...args], { env: { ...process.env, ...ENV, ...env } });
      return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
    };
    expect(viaKubectl(["version", "--client"])).toEqual(await run(["version", "--client"]));
    expect(viaKubectl(["webapp", "lsit"])).toEqual(await run(["webapp", "lsit"]));
  });
});
