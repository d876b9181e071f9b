/**
 * Validates WebApps at the edge (operator input, CLI files), returning outcomes as values.
 *
 * Properties:
 * - Every issue carries the full field path ("spec.replicas", "metadata.name") and a message
 *   that says what is wrong and what was given, e.g. "must be at least 1 (got 0)".
 * - All issues are reported at once, in field order: name first, then spec.
 * - Success returns the parsed spec, never the input object (spec.replicas left out stays out: webapp.ts
 *   fixedReplicas says what it means).
 * - Parsed once per pass: for a frozen object whose metadata and spec are frozen too (a cached object, see
 *   runtime/store.ts), the outcome of the last MEMO_SIZE such objects is remembered (least recently used goes
 *   first) and handed out again, deep-frozen; every other input is parsed on every call. The outcome depends on
 *   metadata.name, metadata.generateName, metadata.namespace and the spec, which such an object cannot change:
 *   its spec's own fields are frozen, and what lies deeper (spec.env, spec.resources, ...) is read-only by the
 *   store's contract (it freezes the top levels only, for speed). The reconciler parses a WebApp on every pass
 *   and the status computation once more: valibot was ~2-3% of the operator's CPU. The memory is bounded: one
 *   outcome per cached WebApp (a WeakMap until 2026-12-05) was a second, deep-frozen copy of every spec, 5 MiB of
 *   live heap of 24 with 2,000 production-shaped WebApps (env, resources, healthCheck, expose) and 1 of 14 with
 *   seed-shaped ones, twice that in RSS.
 */
import * as v from "valibot";
import { WebAppName, WebAppSpec, type WebApp, type WebAppObject } from "./webapp.ts";

export interface Issue {
  /** Dotted path from the object root, e.g. "spec.port"; "" for the object itself. */
  path: string;
  message: string;
}

export type SpecOutcome = { ok: true; spec: WebAppSpec } | { ok: false; issues: Issue[] };
export type WebAppOutcome = { ok: true; webapp: WebApp } | { ok: false; issues: Issue[] };

/** Checks metadata.name and spec of a WebApp-shaped object. */
export function parseWebAppSpec(obj: unknown): SpecOutcome {
  return memoised(specOutcomes, obj, parseSpecNow);
}

function parseSpecNow(obj: unknown): SpecOutcome {
  if (!isRecord(obj)) return { ok: false, issues: [{ path: "", message: `must be an object (got ${describe(obj)})` }] };
  const issues: Issue[] = [];
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  // Objects rendered from generateName have no name yet; the API server checks it after generating one.
  if (meta.name !== undefined || meta.generateName === undefined)
    issues.push(...check(WebAppName, meta.name, "metadata.name"));
  if (obj.spec === undefined) {
    issues.push({ path: "spec", message: "is required: set spec.image and spec.port (spec.replicas defaults to 1)" });
    return { ok: false, issues };
  }
  const result = v.safeParse(WebAppSpec, obj.spec);
  if (!result.success) issues.push(...result.issues.map((i) => toIssue(i, "spec")));
  if (issues.length > 0 || !result.success) return { ok: false, issues };
  return { ok: true, spec: result.output };
}

/** parseWebAppSpec, plus the stored-object fields the operator relies on; returns the typed WebApp. */
export function parseWebApp(obj: WebAppObject): WebAppOutcome {
  return memoised(webAppOutcomes, obj, parseWebAppNow);
}

function parseWebAppNow(obj: WebAppObject): WebAppOutcome {
  const parsed = parseWebAppSpec(obj);
  const issues = parsed.ok ? [] : [...parsed.issues];
  const { name, namespace } = obj.metadata;
  if (typeof namespace !== "string" || namespace === "")
    issues.push({ path: "metadata.namespace", message: "is required" });
  if (!parsed.ok || issues.length > 0 || typeof name !== "string" || typeof namespace !== "string")
    return { ok: false, issues };
  // name and namespace are strings (checked above): the input's metadata is already WebApp["metadata"].
  return { ok: true, webapp: { ...obj, metadata: obj.metadata as WebApp["metadata"], spec: parsed.spec } };
}

/** Outcomes remembered, per kind of parse: well above the passes that run at once (--concurrency). */
export const MEMO_SIZE = 256;
const specOutcomes = new Map<object, SpecOutcome>();
const webAppOutcomes = new Map<object, WebAppOutcome>();

/** `parse(obj)`, remembered in `memo` when obj cannot change what it reads (see the module doc). */
function memoised<I, O extends object>(memo: Map<object, O>, obj: I, parse: (obj: I) => O): O {
  if (!immutable(obj)) return parse(obj);
  const known = memo.get(obj);
  if (known) {
    memo.delete(obj); // most recently used last
    memo.set(obj, known);
    return known;
  }
  const outcome = deepFreezeOutcome(parse(obj));
  memo.set(obj, outcome);
  if (memo.size > MEMO_SIZE) memo.delete(memo.keys().next().value as object);
  return outcome;
}

function immutable(obj: unknown): obj is object {
  if (!isRecord(obj) || !Object.isFrozen(obj)) return false;
  const { metadata, spec } = obj;
  return (metadata === undefined || Object.isFrozen(metadata)) && (!isRecord(spec) || Object.isFrozen(spec));
}

/** The outcome and what it made (issues, the spec and all in it, the WebApp); the input's parts are left as they are. */
function deepFreezeOutcome<O extends object>(outcome: O): O {
  const o = outcome as Partial<{ issues: Issue[]; spec: object; webapp: WebApp }>;
  if (o.issues) for (const i of o.issues) Object.freeze(i);
  for (const spec of [o.spec, o.webapp?.spec]) if (spec) deepFreeze(spec);
  for (const part of [o.issues, o.webapp]) if (part) Object.freeze(part);
  return Object.freeze(outcome);
}

/** A spec valibot made (plain objects and arrays all the way down), frozen at every level. */
function deepFreeze(x: object): void {
  for (const value of Object.values(x)) if (typeof value === "object" && value !== null) deepFreeze(value);
  Object.freeze(x);
}

/** "spec.replicas: must be at least 1 (got 0)", one per line. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => (i.path ? `${i.path}: ${i.message}` : i.message)).join("\n");
}

function check(schema: v.GenericSchema, value: unknown, path: string): Issue[] {
  const result = v.safeParse(schema, value);
  return result.success ? [] : result.issues.map((i) => toIssue(i, path));
}

function toIssue(issue: v.BaseIssue<unknown>, prefix: string): Issue {
  let path = prefix;
  for (const item of issue.path ?? []) {
    // A map key joins with a dot too ("spec.podAnnotations.prometheus.io/port"), as the API server writes it.
    path += typeof item.key === "number" ? `[${item.key}]` : `${path ? "." : ""}${String(item.key)}`;
  }
  return { path, message: ownWords(issue) ? issue.message : schemaMessage(issue) };
}

/** A schema's own message (a quantity given as a number: "quote numbers in YAML") beats the generic wording. */
const ownWords = (issue: v.BaseIssue<unknown>): boolean =>
  issue.kind !== "schema" || (issue.input !== undefined && !issue.message.startsWith("Invalid "));

/** Type mismatches and missing keys, which valibot words in its own terms. */
function schemaMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.input === undefined) return "is required";
  switch (issue.type) {
    case "number":
      return `must be a number (got ${describe(issue.input)})`;
    case "string":
      return `must be a string (got ${describe(issue.input)})`;
    case "object":
    case "record":
      return `must be an object (got ${describe(issue.input)})`;
    case "array":
      return `must be a list (got ${describe(issue.input)})`;
    case "boolean":
      return `must be true or false (got ${describe(issue.input)})`;
    default:
      return issue.message;
  }
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "string") return `the string ${JSON.stringify(v)}`;
  if (typeof v === "object") return "an object";
  return String(v);
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
