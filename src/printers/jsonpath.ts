/**
 * kubectl's JSONPath templates (k8s.io/client-go/util/jsonpath), the part people use with `-o jsonpath=`:
 * text with `{...}` actions; paths `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[1:3]`, `[*]`, `..name` (recursive),
 * filters `[?(@.type=="Available")]` (==, !=, <, <=, >, >= and existence), `{range .items[*]}...{end}`,
 * and string literals `{"\n"}`. As `kubectl get` runs it: a missing key prints nothing; the results of one
 * action are joined by spaces; objects and arrays print as JSON. Pure; a malformed template is a JsonPathError.
 */

export class JsonPathError extends Error {
  override readonly name = "JsonPathError";
}

type Step =
  | { kind: "field"; name: string }
  | { kind: "all" }
  | { kind: "index"; start: number; end?: number; slice: boolean }
  | { kind: "recursive"; name: string }
  | { kind: "filter"; path: Step[]; op?: string; value?: unknown };

type Node =
  | { kind: "text"; text: string }
  | { kind: "path"; steps: Step[] }
  | { kind: "range"; steps: Step[]; body: Node[] };

/** The template's actions and text, or a JsonPathError saying what is wrong. */
export function compileJsonPath(template: string): Node[] {
  const tokens: { text?: string; action?: string }[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    if (open < 0) {
      tokens.push({ text: template.slice(i) });
      break;
    }
    if (open > i) tokens.push({ text: template.slice(i, open) });
    const close = closingBrace(template, open);
    if (close < 0) throw new JsonPathError(`unclosed action in "${template}"`);
    tokens.push({ action: template.slice(open + 1, close).trim() });
    i = close + 1;
  }
  const [nodes, rest] = build(tokens, 0, template);
  if (rest < tokens.length) throw new JsonPathError(`{end} without {range} in "${template}"`);
  return nodes;
}

function closingBrace(s: string, open: number): number {
  let quote = "";
  for (let i = open + 1; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "}") return i;
  }
  return -1;
}

function build(tokens: { text?: string; action?: string }[], from: number, template: string): [Node[], number] {
  const nodes: Node[] = [];
  for (let i = from; i < tokens.length; i++) {
    const t = tokens[i] as { text?: string; action?: string };
    if (t.text !== undefined) {
      nodes.push({ kind: "text", text: t.text });
      continue;
    }
    const a = t.action as string;
    if (a === "end") return [nodes, i];
    if (a.startsWith("range ")) {
      const [body, end] = build(tokens, i + 1, template);
      if (end >= tokens.length) throw new JsonPathError(`{range} without {end} in "${template}"`);
      nodes.push({ kind: "range", steps: parsePath(a.slice(6).trim()), body });
      i = end;
      continue;
    }
    if (/^"(?:[^"\\]|\\.)*"$/.test(a)) nodes.push({ kind: "text", text: JSON.parse(a) as string });
    else nodes.push({ kind: "path", steps: parsePath(a) });
  }
  return [nodes, tokens.length];
}

function parsePath(p: string): Step[] {
  const steps: Step[] = [];
  let i = p.startsWith("$") || p.startsWith("@") ? 1 : 0;
  while (i < p.length) {
    if (p.startsWith("..", i)) {
      const m = /^[\w-]+/.exec(p.slice(i + 2));
      if (!m) throw new JsonPathError(`a name must follow ".." in "${p}"`);
      steps.push({ kind: "recursive", name: m[0] });
      i += 2 + m[0].length;
    } else if (p[i] === ".") {
      const m = /^(?:[\w-]+|\*)?/.exec(p.slice(i + 1)) as RegExpExecArray;
      if (m[0] === "*") steps.push({ kind: "all" });
      else if (m[0]) steps.push({ kind: "field", name: m[0] });
      i += 1 + m[0].length;
    } else if (p[i] === "[") {
      const close = bracketEnd(p, i);
      steps.push(parseBracket(p.slice(i + 1, close).trim(), p));
      i = close + 1;
    } else throw new JsonPathError(`unexpected "${p.slice(i)}" in "${p}"`);
  }
  return steps;
}

function bracketEnd(p: string, open: number): number {
  let depth = 0;
  let quote = "";
  for (let i = open; i < p.length; i++) {
    const c = p[i];
    if (quote) {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === "[") depth++;
    else if (c === "]" && --depth === 0) return i;
  }
  throw new JsonPathError(`unclosed "[" in "${p}"`);
}

function parseBracket(inner: string, p: string): Step {
  if (inner === "*") return { kind: "all" };
  const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(inner);
  if (quoted) return { kind: "field", name: (quoted[1] ?? quoted[2]) as string };
  const slice = /^(-?\d*):(-?\d*)$/.exec(inner);
  if (slice)
    return { kind: "index", start: Number(slice[1] || 0), ...(slice[2] ? { end: Number(slice[2]) } : {}), slice: true };
  if (/^-?\d+$/.test(inner)) return { kind: "index", start: Number(inner), slice: false };
  const filter = /^\?\((.*)\)$/.exec(inner);
  if (filter) {
    const m = /^(@[^<>=!\s]*)\s*(==|!=|<=|>=|<|>)\s*(.+)$/.exec((filter[1] as string).trim());
    if (!m) return { kind: "filter", path: parsePath((filter[1] as string).trim()) };
    return { kind: "filter", path: parsePath(m[1] as string), op: m[2] as string, value: literal(m[3] as string, p) };
  }
  throw new JsonPathError(`cannot read "[${inner}]" in "${p}"`);
}

function literal(s: string, p: string): unknown {
  const t = s.trim();
  const q = /^'([^']*)'$|^"([^"]*)"$/.exec(t);
  if (q) return q[1] ?? q[2];
  if (t === "true" || t === "false") return t === "true";
  if (/^-?\d+(\.\d+)?$/.test(t)) return Number(t);
  throw new JsonPathError(`cannot read the value ${t} in "${p}"`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

function step(values: unknown[], s: Step): unknown[] {
  switch (s.kind) {
    case "field":
      return values.flatMap((v) => (isObject(v) && !Array.isArray(v) && s.name in v ? [v[s.name]] : []));
    case "all":
      return values.flatMap((v) => (Array.isArray(v) ? v : isObject(v) ? Object.values(v) : []));
    case "index":
      return values.flatMap((v) => {
        if (!Array.isArray(v)) return [];
        const at = (n: number) => (n < 0 ? v.length + n : n);
        if (!s.slice) return at(s.start) in v ? [v[at(s.start)]] : [];
        return v.slice(at(s.start), s.end === undefined ? undefined : at(s.end));
      });
    case "recursive":
      return values.flatMap((v) => recursive(v, s.name));
    case "filter":
      return values.flatMap((v) => (Array.isArray(v) ? v : [v])).filter((item) => matches(item, s));
  }
}

function recursive(v: unknown, name: string): unknown[] {
  if (!isObject(v)) return [];
  const here = !Array.isArray(v) && name in v ? [v[name]] : [];
  return [...here, ...Object.values(v).flatMap((c) => recursive(c, name))];
}

function matches(item: unknown, f: Extract<Step, { kind: "filter" }>): boolean {
  const found = f.path.reduce(step, [item]);
  if (f.op === undefined) return found.length > 0;
  return found.some((x) => compare(x, f.op as string, f.value));
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case "==":
      return a === b;
    case "!=":
      return a !== b;
    default: {
      if (typeof a !== typeof b || (typeof a !== "number" && typeof a !== "string")) return false;
      const [x, y] = [a as number, b as number];
      return op === "<" ? x < y : op === "<=" ? x <= y : op === ">" ? x > y : x >= y;
    }
  }
}

const show = (v: unknown): string =>
  typeof v === "string" ? v : v === null || v === undefined ? "" : isObject(v) ? JSON.stringify(v) : String(v);

function render(nodes: readonly Node[], current: unknown): string {
  let outText = "";
  for (const n of nodes) {
    if (n.kind === "text") outText += n.text;
    else if (n.kind === "path") outText += n.steps.reduce(step, [current]).map(show).join(" ");
    else for (const item of n.steps.reduce(step, [current])) outText += render(n.body, item);
  }
  return outText;
}

/** The template applied to `data`. */
export function runJsonPath(template: string, data: unknown): string {
  return render(compileJsonPath(template), data);
}
