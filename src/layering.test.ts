/**
 * Keeps the dependency direction of docs/ARCHITECTURE.md true, and `devctl --version` light.
 *
 * Properties checked over every non-test .ts file under src/ (test doubles `_fake-*`, `_test-*` included):
 * - Direction: `cli → operator, install → runtime → kube`, skipping layers downwards allowed; `api` is
 *   imported by operator, install and cli (and the build scripts), never by runtime, kube or server, and
 *   imports only types from kube; readiness (pure rules) is imported by cli, operator and install and imports
 *   only types from kube; server imports nothing from operator, install, cli or api; kube imports
 *   only kube. MAY_IMPORT below is the whole rule. Type-only and dynamic imports count too: a layer
 *   that needs a type from above is as coupled as one that calls it.
 * - Only src/kube/ imports @kubernetes/client-node.
 * - Shipped code never imports a test double (`_fake-*.ts`, `_test-*.ts`).
 * - Cold start: the modules src/main.ts loads statically (import and `export ... from`, not `import type`,
 *   not dynamic import()) never reach @kubernetes/client-node, consola or valibot: those load inside the
 *   commands that use them.
 * Imports are read with Bun's own transpiler (value and dynamic imports, exactly what Bun loads) plus a
 * scan of statements at the start of a line for type-only ones, which the transpiler drops.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, normalize, posix } from "node:path";

type Part =
  | "main"
  | "cli"
  | "operator"
  | "install"
  | "server"
  | "runtime"
  | "api"
  | "readiness"
  | "kube"
  | "printers"
  | "version"
  | "scripts";

/** What each part of src/ may import besides itself. */
const MAY_IMPORT: Record<Part, readonly Part[]> = {
  main: ["cli"],
  cli: ["operator", "install", "runtime", "api", "readiness", "kube", "printers", "version"],
  /** src/build/*.ts except version.ts: build and dev scripts run by npm, never imported. */
  scripts: ["api", "kube", "version"],
  operator: ["server", "runtime", "api", "readiness", "kube", "version"],
  install: ["runtime", "api", "readiness", "kube", "printers", "version"],
  server: ["runtime", "kube", "version"],
  runtime: ["kube"],
  api: ["kube"],
  /** Readiness rules (Deployment rollout, pod failures, kstatus): pure, shared by operator, install and cli. */
  readiness: ["kube"],
  kube: [],
  /** kubectl's printers (tables, ages, -o formats, JSONPath): a pure leaf. */
  printers: [],
  /** src/build/version.ts: constants baked in at build time. */
  version: [],
};
/** Edges allowed only as `import type`: api and readiness are pure, they may name kube's types but not load kube. */
const TYPE_ONLY: readonly [Part, Part][] = [
  ["api", "kube"],
  ["readiness", "kube"],
];
const ONLY_KUBE_PACKAGE = "@kubernetes/client-node";
const NOT_AT_STARTUP = ["@kubernetes/client-node", "consola", "valibot"];

interface Ref {
  spec: string;
  kind: "value" | "type" | "dynamic";
}

const transpiler = new Bun.Transpiler({ loader: "ts" });
const STATIC =
  /^[ \t]*(?:import\s+(type\s+)?(?:([\w$\s{},*]*?)\s*from\s*)?|export\s+(type\s+)?[\w$\s{},*]*?\s*from\s*)["']([^"'\n]+)["']/gm;

/** Every import of a TypeScript source, with whether it loads the module (value), only names types, or is dynamic. */
function scanImports(code: string): Ref[] {
  const refs: Ref[] = transpiler.scanImports(code).flatMap((i): Ref[] => {
    if (i.kind === "import-statement") return [{ spec: i.path, kind: "value" }];
    if (i.kind === "dynamic-import") return [{ spec: i.path, kind: "dynamic" }];
    return [];
  });
  for (const m of code.matchAll(STATIC)) {
    const spec = m[4] as string;
    if (!refs.some((r) => r.spec === spec)) refs.push({ spec, kind: "type" }); // the transpiler dropped it: types only
  }
  return refs;
}

/** "runtime", "version", ...; undefined for a folder the layout does not know. */
function partOf(file: string): Part | undefined {
  if (file === "main.ts") return "main";
  if (file === "build/version.ts") return "version";
  const top = file.split("/")[0] ?? "";
  if (top === "build") return "scripts";
  return (Object.keys(MAY_IMPORT) as Part[]).includes(top as Part) && file.includes("/") ? (top as Part) : undefined;
}

const isTestFile = (file: string) => file.endsWith(".test.ts");
const isDouble = (file: string) => /(^|\/)_(fake|test)-[^/]*\.ts$/.test(file);
/** A relative specifier as a path under src/ ("../x" from "a/b.ts" is "x"); a package as its name. */
function target(from: string, spec: string): { file: string } | { pkg: string } {
  if (!spec.startsWith("."))
    return { pkg: spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] ?? spec) };
  return { file: posix.normalize(posix.join(posix.dirname(from), spec)) };
}

/** Every broken rule, one sentence each. `files` maps paths under src/ to their source. */
function layeringProblems(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, code] of files) {
    if (isTestFile(file)) continue;
    const from = partOf(file);
    if (!from) {
      problems.push(
        `src/${file} is in no part of the layout: move it, or add its folder to MAY_IMPORT in src/layering.test.ts`,
      );
      continue;
    }
    for (const ref of scanImports(code)) {
      const t = target(file, ref.spec);
      if ("pkg" in t) {
        if (t.pkg === ONLY_KUBE_PACKAGE && from !== "kube")
          problems.push(`src/${file} imports ${t.pkg}: only src/kube/ may; use the KubeClient of src/kube/types.ts`);
        continue;
      }
      if (t.file.startsWith("..")) {
        problems.push(`src/${file} imports ${ref.spec}, outside src/`);
        continue;
      }
      if (isDouble(t.file) && !isDouble(file))
        problems.push(`src/${file} imports the test double src/${t.file}: test doubles are for *.test.ts files only`);
      const to = partOf(t.file);
      if (!to || to === from) continue;
      if (!MAY_IMPORT[from].includes(to)) {
        problems.push(
          `src/${file} (${from}) imports src/${t.file} (${to}), against the direction ${from} -> ${MAY_IMPORT[from].join(", ") || "nothing"}`,
        );
      } else if (ref.kind !== "type" && TYPE_ONLY.some(([a, b]) => a === from && b === to)) {
        problems.push(
          `src/${file} (${from}) loads src/${t.file} (${to}); ${from} may only name its types: use \`import type\``,
        );
      }
    }
  }
  return problems;
}

/** The packages in NOT_AT_STARTUP that `entry` loads statically, each with the import chain that loads it. */
function startupProblems(files: ReadonlyMap<string, string>, entry: string): string[] {
  const via = new Map<string, string | undefined>([[entry, undefined]]);
  const chain = (file: string): string[] => {
    const up = via.get(file);
    return up === undefined ? [file] : [...chain(up), file];
  };
  const problems: string[] = [];
  const todo = [entry];
  for (let file = todo.shift(); file !== undefined; file = todo.shift()) {
    for (const ref of scanImports(files.get(file) ?? "")) {
      if (ref.kind !== "value") continue;
      const t = target(file, ref.spec);
      if ("pkg" in t) {
        if (NOT_AT_STARTUP.includes(t.pkg)) {
          problems.push(
            `${chain(file).join(" -> ")} imports ${t.pkg} statically: every command (and --version) pays for loading it; use \`await import()\` in the command that needs it`,
          );
        }
      } else if (!via.has(t.file)) {
        via.set(t.file, file);
        todo.push(t.file);
      }
    }
  }
  return problems;
}

function sourcesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    const rel = normalize(entry).split("\\").join("/");
    if (rel.endsWith(".ts") && !rel.endsWith(".d.ts")) files.set(rel, readFileSync(join(dir, entry), "utf8"));
  }
  return files;
}

const src = sourcesUnder(import.meta.dir);

describe("the source tree", () => {
  test("follows the dependency direction of ARCHITECTURE.md", () => {
    expect(src.size).toBeGreaterThan(20);
    expect(layeringProblems(src)).toEqual([]);
  });

  test("loads neither client-node, consola nor valibot on the way to devctl --version", () => {
    expect(src.has("main.ts")).toBe(true);
    expect(startupProblems(src, "main.ts")).toEqual([]);
  });
});

describe("the checks themselves", () => {
  const tree = (entries: Record<string, string>) => new Map(Object.entries(entries));

  test("imports are found across lines, type-only ones told apart, comments and strings ignored", () => {
    const code = [
      `/**\n * import { nope } from "./doc.ts";\n */`,
      `import {\n  a,\n  b,\n} from "./multi.ts";`,
      `import type { T } from "./types.ts";`,
      `import { type U } from "./inline-type.ts";`,
      `import "./side-effect.ts";`,
      `export { c } from "./reexport.ts";`,
      `export type { V } from "./reexport-type.ts";`,
      `const s = "import x from './string.ts'"; // import { y } from "./comment.ts";`,
      `export async function f() { return (await import("./lazy.ts")).default; }`,
      `console.log(a, b);`,
    ].join("\n");
    expect(scanImports(code).sort((x, y) => x.spec.localeCompare(y.spec))).toEqual([
      { spec: "./inline-type.ts", kind: "type" },
      { spec: "./lazy.ts", kind: "dynamic" },
      { spec: "./multi.ts", kind: "value" },
      { spec: "./reexport-type.ts", kind: "type" },
      { spec: "./reexport.ts", kind: "value" },
      { spec: "./side-effect.ts", kind: "value" },
      { spec: "./types.ts", kind: "type" },
    ]);
  });

  test("an upward import is reported, even type-only or dynamic, and a test file is not checked", () => {
    const problems = layeringProblems(
      tree({
        "runtime/a.ts": `import type { WebApp } from "../api/webapp.ts";`,
        "kube/b.ts": `export const f = () => import("../runtime/queue.ts");`,
        "server/c.ts": `import { runOperator } from "../operator/manager.ts";`,
        "runtime/a.test.ts": `import { KIND } from "../api/webapp.ts";`,
        "operator/d.ts": `import { x } from "../runtime/x.ts";\nimport type { K } from "../kube/types.ts";\nimport { WEBAPP } from "../api/webapp.ts";`,
      }),
    );
    expect(problems).toEqual([
      "src/runtime/a.ts (runtime) imports src/api/webapp.ts (api), against the direction runtime -> kube",
      "src/kube/b.ts (kube) imports src/runtime/queue.ts (runtime), against the direction kube -> nothing",
      "src/server/c.ts (server) imports src/operator/manager.ts (operator), against the direction server -> runtime, kube, version",
    ]);
  });

  test("client-node outside kube, a value import of kube from api, a shipped import of a test double and an unknown folder are reported", () => {
    const problems = layeringProblems(
      tree({
        "kube/config.ts": `import { KubeConfig } from "@kubernetes/client-node";`,
        "operator/m.ts": `import { CoreV1Api } from "@kubernetes/client-node/dist/api.js";`,
        "api/crd.ts": `import { isNotFound } from "../kube/errors.ts";`,
        "install/x.ts": `import { createFakeKube } from "../runtime/_fake-kube.ts";`,
        "install/_fake-cluster.ts": `import { createFakeKube } from "../runtime/_fake-kube.ts";`,
        "misc/y.ts": ``,
      }),
    );
    expect(problems).toEqual([
      "src/operator/m.ts imports @kubernetes/client-node: only src/kube/ may; use the KubeClient of src/kube/types.ts",
      "src/api/crd.ts (api) loads src/kube/errors.ts (kube); api may only name its types: use `import type`",
      "src/install/x.ts imports the test double src/runtime/_fake-kube.ts: test doubles are for *.test.ts files only",
      "src/misc/y.ts is in no part of the layout: move it, or add its folder to MAY_IMPORT in src/layering.test.ts",
    ]);
  });

  test("readiness is a pure leaf: it may name kube's types, and nothing else; operator and install may import it", () => {
    const problems = layeringProblems(
      tree({
        "readiness/a.ts": `import type { KubeObject } from "../kube/types.ts";`,
        "readiness/b.ts": `import { isNotFound } from "../kube/errors.ts";`,
        "readiness/c.ts": `import type { WebApp } from "../api/webapp.ts";\nimport { Clock } from "../runtime/clock.ts";`,
        "operator/d.ts": `import { rolloutState } from "../readiness/deployment.ts";`,
        "install/e.ts": `import { rolloutState } from "../readiness/deployment.ts";`,
        "runtime/f.ts": `import { rolloutState } from "../readiness/deployment.ts";`,
      }),
    );
    expect(problems).toEqual([
      "src/readiness/b.ts (readiness) loads src/kube/errors.ts (kube); readiness may only name its types: use `import type`",
      "src/readiness/c.ts (readiness) imports src/runtime/clock.ts (runtime), against the direction readiness -> kube",
      "src/readiness/c.ts (readiness) imports src/api/webapp.ts (api), against the direction readiness -> kube",
      "src/runtime/f.ts (runtime) imports src/readiness/deployment.ts (readiness), against the direction runtime -> kube",
    ]);
  });

  test("a heavy package loaded statically from main.ts is reported with its import chain; type-only and dynamic imports are not", () => {
    const problems = startupProblems(
      tree({
        "main.ts": `import { devctl } from "./cli/index.ts";`,
        "cli/index.ts": `export { log } from "./_log.ts";\nimport type { Issue } from "../api/parse.ts";\nconst run = () => import("../operator/manager.ts");`,
        "cli/_log.ts": `import { consola } from "consola";\nexport const log = consola;`,
        "api/parse.ts": `import * as v from "valibot";`,
        "operator/manager.ts": `import { KubeConfig } from "@kubernetes/client-node";`,
      }),
      "main.ts",
    );
    expect(problems).toEqual([
      "main.ts -> cli/index.ts -> cli/_log.ts imports consola statically: every command (and --version) pays for loading it; use `await import()` in the command that needs it",
    ]);
  });
});
