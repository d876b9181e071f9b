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
 *   ("should match '^\S*$'") would not tell a user what to fix. A check written in code (`v.check`,
 *   `v.partialCheck`) goes in only with its CEL twin: `cel(message, { rule })`, the same check as CEL.
 * - A validation followed by `valibotOnly(why)` is devctl's alone, the reason written beside it: the only place
 *   for rules a CRD cannot hold (a map's keys, which no schema keyword reaches and CEL could only reach at a cost
 *   above the API server's limit). A rule on a map's keys without it is refused.
 * - Sizes follow the type: min/max length on a string -> minLength/maxLength, on an array -> minItems/maxItems;
 *   max entries on a record -> maxProperties, and a record is an object with additionalProperties.
 * - `openapi({...})` (a valibot metadata action) adds keywords verbatim (`x-kubernetes-list-type`...).
 * - `transitionRule(message, { rule })` adds a CEL rule that reads the stored value (oldSelf): enforced by the API
 *   server on updates only, never by devctl's parse (which has no stored value).
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
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  items?: OpenApiSchema;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema;
  required?: string[];
  "x-kubernetes-validations"?: CelRule[];
  [extension: `x-kubernetes-${string}`]: unknown;
}

export interface CelRule {
  rule: string;
  message: string;
  /** Where the API server reports a failure, relative to the node that holds the rule (".readinessProbe"). */
  fieldPath?: string;
}

/** What a cel() marker says beside its message: the rule itself (for checks written in code), where to report. */
export interface CelOptions {
  rule?: string;
  fieldPath?: string;
}

type Marker = {
  cel?: string;
  celOptions?: CelOptions;
  valibotOnly?: string;
  openapi?: object;
  transition?: CelRule;
};
type AnyAction = { kind: string; type: string; requirement?: unknown; metadata?: Marker };
type AnySchema = v.GenericSchema & {
  pipe?: readonly AnyAction[];
  entries?: Record<string, AnySchema>;
  wrapped?: AnySchema;
  default?: unknown;
  item?: AnySchema;
  key?: AnySchema;
  value?: AnySchema;
  options?: readonly unknown[];
};

/**
 * Placed right after a validation in a pipe: the API server enforces it as a CEL rule with this message. For a
 * check written in code, `rule` is the same check in CEL (on `self`, the value the pipe validates).
 */
export function cel<TInput>(message: string, options: CelOptions = {}) {
  return v.metadata<TInput, Marker>({ cel: message, celOptions: options });
}

/** Placed right after a validation in a pipe: devctl enforces it, the CRD does not, for the reason given. */
export function valibotOnly<TInput>(why: string) {
  return v.metadata<TInput, Marker>({ valibotOnly: why });
}

/** One validation of a pipe with what the markers after it say: its CEL message and options, or why it is ours. */
export interface PipeAction {
  action: AnyAction;
  celMessage?: string;
  celOptions?: CelOptions;
  valibotOnly?: string;
}

/** A pipe's actions (cel() and valibotOnly() markers folded into the validation before them). */
export function pipeActions(pipe: readonly unknown[], path: string): PipeAction[] {
  const actions = pipe.slice(1) as AnyAction[];
  const out: PipeAction[] = [];
  actions.forEach((a, i) => {
    const { cel: celMessage, celOptions, valibotOnly: why } = a.metadata ?? {};
    if (celMessage === undefined && why === undefined) {
      out.push({ action: a });
      return;
    }
    const last = out[out.length - 1];
    if (actions[i - 1]?.kind !== "validation" || last === undefined)
      throw new Error(`${path}: ${celMessage !== undefined ? "cel()" : "valibotOnly()"} must follow a validation`);
    if (celMessage !== undefined) Object.assign(last, { celMessage, celOptions });
    else last.valibotOnly = why;
  });
  return out;
}

/**
 * A CEL transition rule (it reads `oldSelf`, the stored value): the API server's alone, as devctl's own checks see
 * one spec without the one before it. Anywhere in a pipe; it checks nothing in valibot.
 */
export function transitionRule<TInput>(message: string, options: Required<Pick<CelOptions, "rule">> & CelOptions) {
  if (!options.rule.includes("oldSelf")) throw new Error(`a transition rule reads oldSelf: ${options.rule}`);
  const { rule, fieldPath } = options;
  return v.metadata<TInput, Marker>({ transition: { rule, message, ...(fieldPath ? { fieldPath } : {}) } });
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
    case "record":
      out.type = "object";
      checkMapKeys(s.key as AnySchema, path);
      out.additionalProperties = toOpenApiSchema(s.value as v.GenericSchema, `${path}{}`);
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
  for (const a of pipeActions(s.pipe ?? [], path)) applyAction(out, a, path);
  return ordered(withIntegerFormat(out));
}

/** A map's keys are strings; a rule on them can only be devctl's (see the module doc). */
function checkMapKeys(key: AnySchema, path: string): void {
  if (key.type !== "string") throw new Error(`${path}: the keys of a map in a CRD are strings`);
  for (const a of pipeActions(key.pipe ?? [], `${path} keys`))
    if (a.action.kind === "validation" && a.valibotOnly === undefined)
      throw new Error(
        `${path}: a rule on a map's keys cannot go into a CRD; say why it is devctl's alone with valibotOnly()`,
      );
}

function withIntegerFormat(out: OpenApiSchema): OpenApiSchema {
  if (out.type !== "integer") return out;
  const fits = (out.minimum ?? -Infinity) >= INT32_MIN && (out.maximum ?? Infinity) <= INT32_MAX;
  return { ...out, format: fits ? "int32" : "int64" };
}

function applyAction(out: OpenApiSchema, p: PipeAction, path: string): void {
  const { action: a, celMessage, celOptions } = p;
  if (a.kind === "metadata") {
    if (a.type === "description") out.description = (a as unknown as { description: string }).description;
    else if (a.metadata?.transition) (out["x-kubernetes-validations"] ??= []).push(a.metadata.transition);
    else if (a.type === "metadata") Object.assign(out, a.metadata?.openapi);
    return;
  }
  if (a.kind !== "validation") throw new Error(`${path}: valibot ${a.kind} "${a.type}" cannot be expressed in a CRD`);
  if (p.valibotOnly !== undefined) return;
  if (celMessage !== undefined) {
    const rule = celOptions?.rule ?? celRule(a, "self", path);
    const fieldPath = celOptions?.fieldPath;
    (out["x-kubernetes-validations"] ??= []).push({ rule, message: celMessage, ...(fieldPath ? { fieldPath } : {}) });
    return;
  }
  const req = a.requirement;
  const array = out.type === "array";
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
      if (array) out.minItems = 1;
      else out.minLength = 1;
      break;
    case "min_length":
      if (array) out.minItems = req as number;
      else out.minLength = req as number;
      break;
    case "max_length":
      if (array) out.maxItems = req as number;
      else out.maxLength = req as number;
      break;
    case "max_entries":
      out.maxProperties = req as number;
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
  "minItems",
  "maxItems",
  "maxProperties",
  "items",
  "properties",
  "additionalProperties",
  "required",
];

function ordered(s: OpenApiSchema): OpenApiSchema {
  const rank = (k: string): number => (KEY_ORDER.includes(k) ? KEY_ORDER.indexOf(k) : KEY_ORDER.length);
  const keys = Object.keys(s).sort(
    (a, b) => rank(a) - rank(b) || (rank(a) === KEY_ORDER.length ? a.localeCompare(b) : 0),
  );
  return Object.fromEntries(keys.map((k) => [k, s[k as keyof OpenApiSchema]])) as OpenApiSchema;
}
