import { describe, expect, test } from "bun:test";
import type { ArgsDef } from "citty";
import { UsageError } from "./_errors.ts";
import { allValues, durationFlag, dryRunFlag, intFlag, repeatable, typed } from "./_flags.ts";
import { parseCommandArgs } from "./_parse.ts";

const defs = {
  name: { type: "positional", description: "name", required: true },
  image: { type: "string", description: "image" },
  namespace: { type: "string", alias: "n", description: "ns" },
  "all-namespaces": { type: "boolean", alias: "A", description: "all" },
  yes: { type: "boolean", alias: "y", description: "yes" },
  "leader-elect": { type: "boolean", default: true, description: "le" },
  replicas: intFlag({ default: "2", description: "replicas" }, 1, 10),
  timeout: durationFlag({ default: "2m", description: "timeout" }),
  mode: { type: "enum", options: ["a", "b"], description: "mode" },
  "dry-run": dryRunFlag("dry run"),
} satisfies ArgsDef;

const CMD = "devctl x";
const parse = (...tokens: string[]) => parseCommandArgs(defs, tokens, CMD);
const failure = (...tokens: string[]) => {
  try {
    parse(...tokens);
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return "no error";
};

describe("parseCommandArgs", () => {
  test("reads every spelling pflag reads", () => {
    expect(parse("web", "--image", "nginx", "-n", "team-a").values).toEqual({ image: "nginx", namespace: "team-a" });
    expect(parse("web", "--image=nginx", "-nteam-a").values).toEqual({ image: "nginx", namespace: "team-a" });
    expect(parse("web", "-n=team-a", "-Ay").values).toEqual({ namespace: "team-a", "all-namespaces": true, yes: true });
    expect(parse("web", "--leader-elect=false").values).toEqual({ "leader-elect": false });
    expect(parse("web", "--no-leader-elect").values).toEqual({ "leader-elect": false });
    expect(parse("web", "--yes=true").values).toEqual({ yes: true });
    expect(parse("--", "-web").positionals).toEqual(["-web"]);
  });

  test("hands citty a canonical spelling of exactly what was checked", () => {
    expect(parse("web", "-n", "a", "--no-leader-elect", "-A").rawArgs).toEqual([
      "--namespace=a",
      "--no-leader-elect",
      "--all-namespaces",
      "--",
      "web",
    ]);
  });

  test("an unknown flag is refused with the nearest known one", () => {
    expect(failure("web", "--imag", "x")).toBe(
      'UsageError: unknown flag --imag for "devctl x" (did you mean --image?)',
    );
    expect(failure("web", "--all-namespace")).toBe(
      'UsageError: unknown flag --all-namespace for "devctl x" (did you mean --all-namespaces?)',
    );
    expect(failure("web", "-a")).toBe('UsageError: unknown flag -a for "devctl x" (did you mean -A?)');
    expect(failure("web", "--bogus")).toBe('UsageError: unknown flag --bogus for "devctl x"');
    expect(failure("web", "--no-image")).toBe('UsageError: unknown flag --no-image for "devctl x"');
  });

  test("a missing or extra positional is refused", () => {
    expect(failure()).toBe('UsageError: missing argument NAME for "devctl x"');
    expect(failure("web", "extra")).toBe('UsageError: unexpected argument "extra" for "devctl x" (it takes NAME)');
    expect(parseCommandArgs({}, [], "devctl y").positionals).toEqual([]);
    expect(() => parseCommandArgs({}, ["z"], "devctl y")).toThrow(
      'unexpected argument "z" for "devctl y" (it takes no arguments)',
    );
  });

  test("a flag without its value, or a boolean with a non-boolean value, is refused", () => {
    expect(failure("web", "--image")).toBe('UsageError: flag --image of "devctl x" needs a value');
    expect(failure("web", "--image", "--yes")).toBe('UsageError: flag --image of "devctl x" needs a value');
    expect(failure("web", "-n")).toBe('UsageError: flag -n of "devctl x" needs a value');
    expect(failure("web", "--yes=maybe")).toBe('UsageError: --yes "maybe" must be true or false');
  });

  test("typed values are checked, naming the flag as typed", () => {
    expect(failure("web", "--replicas", "0")).toBe('UsageError: --replicas "0" must be a whole number from 1 to 10');
    expect(failure("web", "--replicas=-1")).toBe('UsageError: --replicas "-1" must be a whole number from 1 to 10');
    expect(failure("web", "--timeout", "soon")).toStartWith('UsageError: --timeout "soon" is not a duration');
    expect(failure("web", "--mode", "c")).toBe('UsageError: --mode "c" must be one of: a, b');
  });

  test("a bare --dry-run means client and its value only follows '='", () => {
    expect(parse("web", "--dry-run").values).toEqual({ "dry-run": "client" });
    expect(parse("web", "--dry-run=server").values).toEqual({ "dry-run": "server" });
    expect(failure("web", "--dry-run", "server")).toBe(
      'UsageError: --dry-run takes its value after "=": --dry-run=server',
    );
    expect(failure("web", "--dry-run=maybe")).toBe(
      'UsageError: --dry-run "maybe" must be one of: none, client, server',
    );
  });

  test("a required flag that is not set is refused", () => {
    const req = { port: { type: "string", required: true, description: "p" } } satisfies ArgsDef;
    expect(() => parseCommandArgs(req, [], "devctl z")).toThrow('required flag --port of "devctl z" is not set');
  });
});

describe("a repeatable flag", () => {
  const envDefs = {
    env: repeatable(
      typed({ type: "string", description: "env" }, (v, flag) => {
        if (!v.includes("=")) throw new UsageError(`${flag} "${v}" must be NAME=VALUE`);
      }),
    ),
    image: { type: "string", description: "image" },
  } satisfies ArgsDef;
  const parseEnv = (...tokens: string[]) => parseCommandArgs(envDefs, tokens, CMD);

  test("keeps every value, in order, and spells each once for citty; another flag still keeps its last", () => {
    const parsed = parseEnv("--env", "A=1", "--image=x", "--env=B=2", "--image", "y", "--env", "A=3");
    expect(parsed.values).toEqual({ env: ["A=1", "B=2", "A=3"], image: "y" });
    expect(parsed.rawArgs).toEqual(["--env=A=1", "--env=B=2", "--env=A=3", "--image=y", "--"]);
    expect(allValues(parsed.rawArgs, "env")).toEqual(["A=1", "B=2", "A=3"]);
    expect(allValues(parsed.rawArgs, "image")).toEqual(["y"]);
  });

  test("checks every value, naming the flag as typed", () => {
    expect(() => parseEnv("--env", "A=1", "--env", "B")).toThrow('--env "B" must be NAME=VALUE');
  });

  test("allValues stops at --, so a positional that looks like the flag is not one", () => {
    expect(allValues(["--env=A=1", "--", "--env=B=2"], "env")).toEqual(["A=1"]);
  });
});
