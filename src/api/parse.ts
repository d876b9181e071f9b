/**
 * Validates WebApps at the edge (operator input, CLI files), returning outcomes as values.
 *
 * Properties:
 * - Every issue carries the full field path ("spec.replicas", "metadata.name") and a message
 *   that says what is wrong and what was given, e.g. "must be at least 1 (got 0)".
 * - All issues are reported at once, in field order: name first, then spec.
 * - Success returns the spec with defaults applied (replicas 1), never the input object.
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
  const parsed = parseWebAppSpec(obj);
  const issues = parsed.ok ? [] : [...parsed.issues];
  const { name, namespace } = obj.metadata;
  if (typeof namespace !== "string" || namespace === "")
    issues.push({ path: "metadata.namespace", message: "is required" });
  if (!parsed.ok || issues.length > 0 || typeof name !== "string" || typeof namespace !== "string")
    return { ok: false, issues };
  return { ok: true, webapp: { ...obj, metadata: { ...obj.metadata, name, namespace }, spec: parsed.spec } };
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
    path += typeof item.key === "number" ? `[${item.key}]` : `${path ? "." : ""}${String(item.key)}`;
  }
  return { path, message: issue.kind === "schema" ? schemaMessage(issue) : issue.message };
}

/** Type mismatches and missing keys, which valibot words in its own terms. */
function schemaMessage(issue: v.BaseIssue<unknown>): string {
  if (issue.input === undefined) return "is required";
  switch (issue.type) {
    case "number":
      return `must be a number (got ${describe(issue.input)})`;
    case "string":
      return `must be a string (got ${describe(issue.input)})`;
    case "object":
      return `must be an object (got ${describe(issue.input)})`;
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
