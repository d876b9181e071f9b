/**
 * Turns valibot schemas into the structural OpenAPI v3 schemas a CRD carries, so the valibot
 * schema stays the single source of truth for both devctl's own checks and the API server's.
 *
 * Properties:
 * - Total or loud: every schema type and pipe action is either translated or refused with the
 *   path where it sits; a check the API server would silently not enforce cannot be added.
 * - integer + min/max within int32 -> `type: integer, format: int32`; other integers -> int64.
 * - `optional(x, default)` -> not required, `default: <value>` (static defaults only).
 * - A validation followed by `cel(message)` in the pipe becomes an `x-kubernetes-validations` rule
 *   with that message instead of the bare keyword, for cases where the API server's own wording
 *   ("should match '^\S*$'") would not tell a user what to fix.
 * - `openapi({...})` (a valibot metadata action) adds keywords verbatim (`x-kubernetes-list-type`...).
 * - Output key order is fixed, so generated YAML is stable.
 */
import * as v from "valibot";

/** A structural schema node (apiextensions.k8s.io/v1 JSONSchemaProps, the subset we emit). */
export interface OpenApiSchema {
  description?: string;
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  enum?: readonly unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  items?: OpenApiSchema;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  "x-kubernetes-validations"?: CelRule[];
  [extension: `x-kubernetes-${string}`]: unknown;
}

export interface CelRule {
  rule: string;
  message: string;
}

type AnyAction = { kind: string; type: string; requirement?: unknown; metadata?: { cel?: string; openapi?: object } };
type AnySchema = v.GenericSchema & {
  pipe?: readonly AnyAction[];
  entries?: Record<string, AnySchema>;
  wrapped?: AnySchema;
  default?: unknown;
  item?: AnySchema;
  options?: readonly unknown[];
};

/** Placed right after a validation in a pipe: the API server enforces it as a CEL rule with this message. */
export function cel<TInput>(message: string) {
  return v.metadata<TInput, { cel: string }>({ cel: message });
}

/** A pipe's actions (cel() markers folded into the validation before them, as its celMessage). */
export function pipeActions(pipe: readonly unknown[], path: string): { action: AnyAction; celMessage?: string }[] {
  const actions = pipe.slice(1) as AnyAction[];
  const out: { action: AnyAction; celMessage?: string }[] = [];
  actions.forEach((a, i) => {
    const celMessage = a.metadata?.cel;
    if (celMessage !== undefined) {
      const last = out[out.length - 1];
      if (actions[i - 1]?.kind !== "validation" || last === undefined)
        throw new Error(`${path}: cel() must follow a validation`);
      last.celMessage = celMessage;
    } else out.push({ action: a });
  });
  return out;
}

/** A valibot metadata action carrying extra OpenAPI keywords for the CRD. */
export function openapi<TInput>(keywords: Partial<OpenApiSchema>) {
  return v.metadata<TInput, { openapi: Partial<OpenApiSchema> }>({ openapi: keywords });
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/** Translates a valibot schema; `path` names the node in errors. */
export function toOpenApiSchema(schema: v.GenericSchema, path = "(root)"): OpenApiSchema {
  const s = schema as AnySchema;
  if (s.type === "optional") {
    const inner = toOpenApiSchema(s.wrapped as v.GenericSchema, path);
    if (s.default === undefined) return inner;
    if (typeof s.default === "function") throw new Error(`${path}: a computed default cannot go into a CRD`);
    return ordered({ ...inner, default: s.default });
  }
  const out: OpenApiSchema = {};
  switch (s.type) {
    case "object": {
      out.type = "object";
      const entries = Object.entries(s.entries ?? {});
      out.properties = Object.fromEntries(entries.map(([k, e]) => [k, toOpenApiSchema(e, `${path}.${k}`)]));
      const required = entries.filter(([, e]) => e.type !== "optional").map(([k]) => k);
      if (required.length > 0) out.required = required;
      break;
    }
    case "array":
      out.type = "array";
      out.items = toOpenApiSchema(s.item as v.GenericSchema, `${path}[]`);
      break;
    case "string":
    case "boolean":
      out.type = s.type;
      break;
    case "number":
      out.type = "number";
      break;
    case "picklist":
      out.type = "string";
      out.enum = [...(s.options ?? [])];
      break;
    default:
      throw new Error(`${path}: valibot schema "${s.type}" has no CRD translation`);
  }
  for (const { action, celMessage } of pipeActions(s.pipe ?? [], path)) applyAction(out, action, celMessage, path);
  return ordered(withIntegerFormat(out));
}

function withIntegerFormat(out: OpenApiSchema): OpenApiSchema {
  if (out.type !== "integer") return out;
  const fits = (out.minimum ?? -Infinity) >= INT32_MIN && (out.maximum ?? Infinity) <= INT32_MAX;
  return { ...out, format: fits ? "int32" : "int64" };
}

function applyAction(out: OpenApiSchema, a: AnyAction, celMessage: string | undefined, path: string): void {
  if (a.kind === "metadata") {
    if (a.type === "description") out.description = (a as unknown as { description: string }).description;
    else if (a.type === "metadata") Object.assign(out, a.metadata?.openapi);
    return;
  }
  if (a.kind !== "validation") throw new Error(`${path}: valibot ${a.kind} "${a.type}" cannot be expressed in a CRD`);
  if (celMessage !== undefined) {
    (out["x-kubernetes-validations"] ??= []).push({ rule: celRule(a, "self", path), message: celMessage });
    return;
  }
  const req = a.requirement;
  switch (a.type) {
    case "integer":
      out.type = "integer";
      break;
    case "min_value":
      out.minimum = req as number;
      break;
    case "max_value":
      out.maximum = req as number;
      break;
    case "non_empty":
      out.minLength = 1;
      break;
    case "min_length":
      out.minLength = req as number;
      break;
    case "max_length":
      out.maxLength = req as number;
      break;
    case "regex":
      out.pattern = regexSource(req, path);
      break;
    case "iso_timestamp":
      out.format = "date-time";
      break;
    default:
      throw new Error(`${path}: valibot validation "${a.type}" has no CRD translation`);
  }
}

/** The CEL expression (on `self`, e.g. "self.metadata.name") equivalent to a validation action. */
export function celRule(action: { type: string; requirement?: unknown }, self: string, path = self): string {
  const req = action.requirement;
  switch (action.type) {
    case "non_empty":
      return `${self}.size() > 0`;
    case "min_length":
      return `${self}.size() >= ${req}`;
    case "max_length":
      return `${self}.size() <= ${req}`;
    case "min_value":
      return `${self} >= ${req}`;
    case "max_value":
      return `${self} <= ${req}`;
    case "regex":
      return `${self}.matches('${regexSource(req, path).replaceAll("\\", "\\\\").replaceAll("'", "\\'")}')`;
    default:
      throw new Error(`${path}: valibot validation "${action.type}" has no CEL translation`);
  }
}

function regexSource(req: unknown, path: string): string {
  if (!(req instanceof RegExp) || req.flags !== "")
    throw new Error(`${path}: only flag-less regular expressions can go into a CRD`);
  return req.source;
}

const KEY_ORDER = [
  "description",
  "type",
  "format",
  "enum",
  "default",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "items",
  "properties",
  "required",
];

function ordered(s: OpenApiSchema): OpenApiSchema {
  const rank = (k: string): number => (KEY_ORDER.includes(k) ? KEY_ORDER.indexOf(k) : KEY_ORDER.length);
  const keys = Object.keys(s).sort(
    (a, b) => rank(a) - rank(b) || (rank(a) === KEY_ORDER.length ? a.localeCompare(b) : 0),
  );
  return Object.fromEntries(keys.map((k) => [k, s[k as keyof OpenApiSchema]])) as OpenApiSchema;
}
