/**
 * YAML for Kubernetes manifests, written by js-yaml (already inside the executable through @kubernetes/client-node,
 * so it costs no bytes) in kubectl's layout.
 *
 * Properties:
 * - Deterministic: maps keep insertion order, the same value always gives the same text.
 * - Faithful: for every JSON-like value `x`, a YAML 1.2 parser reads `toYaml(x)` back as `x`
 *   (undefined map values are skipped and undefined list items become null, as JSON.stringify does).
 * - Safe under YAML 1.1 too (go-yaml, PyYAML): js-yaml quotes `yes`, `on`, `1.0`, `0x1F`, `2024-01-01`, `null`, `~`.
 * - kubectl layout: two-space indent, lists under a key are not indented ("key:\n- a"), no line folding,
 *   multi-line strings as literal blocks, quoted strings in double quotes.
 * - Unsupported values (functions, symbols, bigint, class instances other than plain objects) throw with the
 *   path where they were found.
 */
import { dump } from "js-yaml";

const OPTIONS = { seqNoIndent: true, lineWidth: -1, noRefs: true, quoteStyle: "double" } as const;

/** Renders one document; the text ends with a newline. */
export function toYaml(value: unknown): string {
  return dump(jsonLike(value, ""), OPTIONS);
}

/** Renders several documents separated by `---` lines, as `kubectl apply -f` reads them. */
export function toYamlDocuments(values: readonly unknown[]): string {
  return values.map(toYaml).join("---\n");
}

/** `value` as JSON.stringify sees it (undefined map values dropped, undefined list items null); throws at `path`. */
function jsonLike(value: unknown, path: string): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Object.is(value, -0) ? 0 : value;
  if (Array.isArray(value)) return value.map((v, i) => (v === undefined ? null : jsonLike(v, `${path}[${i}]`)));
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = jsonLike(v, path ? `${path}.${k}` : k);
    return out;
  }
  throw new TypeError(`cannot write ${describe(value)} as YAML at ${path || "the document root"}`);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function describe(v: unknown): string {
  if (typeof v === "object" && v !== null) return `an instance of ${v.constructor?.name ?? "an unknown class"}`;
  return `a ${typeof v}`;
}
