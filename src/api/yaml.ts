/**
 * A small deterministic YAML emitter for Kubernetes manifests (Bun has no block-style YAML writer).
 *
 * Properties:
 * - Deterministic: maps keep insertion order, the same value always gives the same text.
 * - Faithful: for every JSON-like value `x`, a YAML 1.2 parser reads `toYaml(x)` back as `x`
 *   (undefined map values are skipped, as JSON.stringify does).
 * - Safe under YAML 1.1 too (go-yaml, PyYAML): a string is written plain only when no parser could
 *   read it as anything else; `yes`, `on`, `1.0`, `0x1F`, `2024-01-01`, `null`, `~` are quoted.
 * - kubectl layout: two-space indent, lists under a key are not indented ("key:\n- a"),
 *   multi-line strings as literal blocks (`|` / `|-`), everything else quoted as JSON strings,
 *   which are valid YAML double-quoted scalars.
 * - Unsupported values (functions, symbols, bigint, class instances other than plain objects)
 *   throw with the path where they were found.
 */

/** Renders one document; the text ends with a newline. */
export function toYaml(value: unknown): string {
  if (isNonEmptyMap(value)) return renderMap(value, 0, "");
  if (isNonEmptyList(value)) return renderList(value, 0, "");
  return `${scalar(value, "")}\n`;
}

/** Renders several documents separated by `---` lines, as `kubectl apply -f` reads them. */
export function toYamlDocuments(values: readonly unknown[]): string {
  return values.map(toYaml).join("---\n");
}

type Plain = Record<string, unknown>;

function isPlainObject(v: unknown): v is Plain {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
const isNonEmptyMap = (v: unknown): v is Plain => isPlainObject(v) && Object.values(v).some((x) => x !== undefined);
const isNonEmptyList = (v: unknown): v is unknown[] => Array.isArray(v) && v.length > 0;

function renderMap(map: Plain, indent: number, path: string): string {
  const pad = " ".repeat(indent);
  let out = "";
  for (const [key, value] of Object.entries(map)) {
    if (value === undefined) continue;
    const here = path ? `${path}.${key}` : key;
    out += `${pad}${scalar(key, here)}:${afterKey(value, indent, here)}`;
  }
  return out;
}

/** The text after "key:": an inline scalar, or a newline and a nested block. */
function afterKey(value: unknown, indent: number, path: string): string {
  if (isNonEmptyMap(value)) return `\n${renderMap(value, indent + 2, path)}`;
  if (isNonEmptyList(value)) return `\n${renderList(value, indent, path)}`;
  if (typeof value === "string" && isLiteralBlockString(value)) return ` ${literalBlock(value, indent + 2)}`;
  return ` ${scalar(value, path)}\n`;
}

function renderList(list: readonly unknown[], indent: number, path: string): string {
  const pad = " ".repeat(indent);
  let out = "";
  list.forEach((item, i) => {
    const here = `${path}[${i}]`;
    // A nested block is rendered at indent + 2 and its first line's padding replaced by "- ".
    if (isNonEmptyMap(item)) out += `${pad}- ${renderMap(item, indent + 2, here).slice(indent + 2)}`;
    else if (isNonEmptyList(item)) out += `${pad}- ${renderList(item, indent + 2, here).slice(indent + 2)}`;
    else if (typeof item === "string" && isLiteralBlockString(item)) out += `${pad}- ${literalBlock(item, indent + 2)}`;
    else out += `${pad}- ${scalar(item === undefined ? null : item, here)}\n`;
  });
  return out;
}

/**
 * A literal block keeps multi-line text readable. Used only when it round-trips exactly:
 * printable characters, no line that is blank-but-not-empty, no leading space on the first
 * line (it would set the indentation), at most one trailing newline.
 */
function isLiteralBlockString(s: string): boolean {
  if (!s.includes("\n") || /[^\n\t\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd]/.test(s)) return false;
  if (/^[ \t\n]/.test(s) || s.endsWith("\n\n")) return false;
  const body = s.endsWith("\n") ? s.slice(0, -1) : s;
  return body.split("\n").every((line) => line === "" || /\S/.test(line));
}

function literalBlock(s: string, indent: number): string {
  const keep = s.endsWith("\n");
  const body = keep ? s.slice(0, -1) : s;
  const pad = " ".repeat(indent);
  const lines = body.split("\n").map((line) => (line === "" ? "" : pad + line));
  return `${keep ? "|" : "|-"}\n${lines.join("\n")}\n`;
}

/** Words YAML 1.1 or 1.2 read as booleans or null, in any case. */
const RESERVED = new Set(["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "=", "<<"]);

function scalar(value: unknown, path: string): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return String(value);
    case "number":
      if (Number.isNaN(value)) return ".nan";
      if (!Number.isFinite(value)) return value > 0 ? ".inf" : "-.inf";
      return Object.is(value, -0) ? "0" : String(value);
    case "string":
      return isPlainSafe(value) ? value : JSON.stringify(value);
    case "object":
      if (Array.isArray(value)) return "[]";
      if (isPlainObject(value)) return "{}";
  }
  throw new TypeError(`cannot write ${describe(value)} as YAML at ${path || "the document root"}`);
}

/**
 * Plain (unquoted) only when unambiguous: starts with a letter, "/" or "_"; contains only
 * characters that carry no YAML meaning; no ": " or " #"; no trailing colon or space;
 * not a reserved word. Anything number-like starts with a digit, sign or dot and is quoted.
 */
function isPlainSafe(s: string): boolean {
  if (!/^[A-Za-z_/][A-Za-z0-9 _./:@=+\-()<>^$?!;]*$/.test(s)) return false;
  if (s.includes(": ") || s.endsWith(":") || s.endsWith(" ") || s.includes(" #")) return false;
  return !RESERVED.has(s.toLowerCase());
}

function describe(v: unknown): string {
  if (typeof v === "object" && v !== null) return `an instance of ${v.constructor?.name ?? "an unknown class"}`;
  return `a ${typeof v}`;
}
