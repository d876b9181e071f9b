/**
 * Code-health counts of issue #14 over the shipped sources of a tree: every .ts under src/ except `*.test.ts` and
 * the test doubles `_fake-*.ts`/`_test-*.ts` (the build scripts of src/build/ count: someone maintains them).
 * - Long functions: every function, arrow, method, accessor or constructor spanning more than `maxLines` lines,
 *   from its first token to its closing brace, nested ones counted on their own as well.
 * - Long lines: lines longer than `maxChars` characters.
 * - Duplicated constants: a top-level UPPER_CASE `const` name declared in more than one file; each identity in
 *   IDENTITIES (lease name, API groups and paths) written as a literal in more than one file; and each resource
 *   type (by plural) defined in more than one file, whether as `{ ..., plural: "leases" }` or as
 *   `resource(group, version, "leases", ...)` (kube/resources.ts's builder), under whatever constant name.
 * Read with the TypeScript compiler's parser, so strings, comments and template literals are told apart.
 * CLI: `bun run ./tests/code-health.ts [dir]` prints the counts for `dir` (default: this checkout) — point it at a
 * `git worktree` of an older commit to get its "before" figures.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "typescript";

export interface LongFunction {
  file: string;
  name: string;
  line: number;
  lines: number;
}
export interface LongLine {
  file: string;
  line: number;
  chars: number;
}
export interface Duplicate {
  what: string;
  files: string[];
}
export interface Health {
  files: number;
  longFunctions: LongFunction[];
  longLines: LongLine[];
  duplicates: Duplicate[];
}

/** Identities that should each be written once (issue #14, "One home per identity and constant"). */
export const IDENTITIES: readonly string[] = [
  "webapp-operator-lock",
  "coordination.k8s.io",
  "apiextensions.k8s.io",
  "events.k8s.io",
  "/apis/apps/v1",
  "/api/v1",
];

const isShipped = (rel: string) =>
  rel.endsWith(".ts") &&
  !rel.endsWith(".d.ts") &&
  !rel.endsWith(".test.ts") &&
  !/(^|\/)_(fake|test)-[^/]*\.ts$/.test(rel);

/** Every shipped .ts under `root`/src, as paths relative to `root`. */
export function shippedFiles(root: string): string[] {
  const src = join(root, "src");
  return readdirSync(src, { recursive: true, encoding: "utf8" })
    .map((f) => join("src", f).split("\\").join("/"))
    .filter(isShipped)
    .sort();
}

function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const named = (n: ts.Node): string | undefined => {
    const name = (n as { name?: ts.Node }).name;
    return name ? name.getText(sf) : undefined;
  };
  const own = named(node);
  if (own) {
    const cls = ts.isClassElement(node) && node.parent && ts.isClassLike(node.parent) ? named(node.parent) : undefined;
    return cls ? `${cls}.${own}` : own;
  }
  if (ts.isConstructorDeclaration(node)) return `${named(node.parent) ?? "class"}.constructor`;
  let p: ts.Node | undefined = node.parent;
  while (p && (ts.isParenthesizedExpression(p) || ts.isAsExpression(p) || ts.isCallExpression(p))) p = p.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)))
    return p.name.getText(sf);
  return `<anonymous>`;
}

function functionsIn(sf: ts.SourceFile, file: string, maxLines: number): LongFunction[] {
  const out: LongFunction[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > maxLines) out.push({ file, name: nameOf(node, sf), line: first + 1, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function topLevelConstants(sf: ts.SourceFile): string[] {
  const names: string[] = [];
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st) || !(st.declarationList.flags & ts.NodeFlags.Const)) continue;
    for (const d of st.declarationList.declarations)
      if (ts.isIdentifier(d.name) && /^[A-Z][A-Z0-9_]+$/.test(d.name.text)) names.push(d.name.text);
  }
  return names;
}

/** The plurals of the resource types `sf` defines. */
function resourceTypesIn(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isObjectLiteralExpression(node)) {
      for (const p of node.properties)
        if (ts.isPropertyAssignment(p) && p.name.getText(sf) === "plural" && ts.isStringLiteral(p.initializer))
          out.push(p.initializer.text);
    } else if (ts.isCallExpression(node) && node.expression.getText(sf) === "resource") {
      const plural = node.arguments[2];
      if (plural && ts.isStringLiteral(plural)) out.push(plural.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function literalsIn(sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteralLike(node)) out.push(node.text);
    else if (ts.isTemplateExpression(node)) {
      out.push(node.head.text);
      for (const s of node.templateSpans) out.push(s.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

export function measure(root: string, maxLines = 80, maxChars = 150): Health {
  const files = shippedFiles(root);
  const longFunctions: LongFunction[] = [];
  const longLines: LongLine[] = [];
  const constants = new Map<string, Set<string>>();
  const identities = new Map<string, Set<string>>(IDENTITIES.map((i) => [i, new Set()]));
  const resourceTypes = new Map<string, Set<string>>();
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    longFunctions.push(...functionsIn(sf, file, maxLines));
    text.split("\n").forEach((l, i) => {
      if (l.length > maxChars) longLines.push({ file, line: i + 1, chars: l.length });
    });
    for (const c of topLevelConstants(sf)) constants.set(c, (constants.get(c) ?? new Set()).add(file));
    for (const plural of resourceTypesIn(sf)) {
      const what = `resource type ${plural}`;
      resourceTypes.set(what, (resourceTypes.get(what) ?? new Set()).add(file));
    }
    const literals = literalsIn(sf);
    for (const id of IDENTITIES) if (literals.some((l) => l.includes(id))) identities.get(id)?.add(file);
  }
  const duplicates = [...constants, ...identities, ...resourceTypes]
    .filter(([, where]) => where.size > 1)
    .map(([what, where]) => ({ what, files: [...where].sort() }));
  return { files: files.length, longFunctions, longLines, duplicates };
}

if (import.meta.main) {
  const root = resolve(process.argv[2] ?? join(import.meta.dir, ".."));
  const h = measure(root);
  const top = [...h.longLines].sort((a, b) => b.chars - a.chars)[0];
  console.log(`${relative(process.cwd(), root) || "."}: ${h.files} shipped files`);
  console.log(`functions over 80 lines: ${h.longFunctions.length}`);
  for (const f of [...h.longFunctions].sort((a, b) => b.lines - a.lines))
    console.log(`  ${f.lines}\t${f.name}\t${f.file}:${f.line}`);
  console.log(
    `lines over 150 chars: ${h.longLines.length} (over 200: ${h.longLines.filter((l) => l.chars > 200).length}` +
      `${top ? `, longest ${top.chars} in ${top.file}:${top.line}` : ""})`,
  );
  console.log(`duplicated constants/identities: ${h.duplicates.length}`);
  for (const d of h.duplicates) console.log(`  ${d.what}\t${d.files.join(" ")}`);
}
