/**
 * The -o formats of `kubectl get`, as a value: table (the default), wide, name, yaml, json, jsonpath=TEMPLATE.
 * parseOutput checks a template when the flag is read, so a bad one fails before any request. kubectl's
 * shapes: a list in yaml/json is a `v1 List`; `name` is `<resource>.<group>/<name>`. Pure.
 */
import { compileJsonPath } from "./jsonpath.ts";

export type Output =
  | { kind: "table" }
  | { kind: "wide" }
  | { kind: "name" }
  | { kind: "yaml" }
  | { kind: "json" }
  | { kind: "jsonpath"; template: string };

export const OUTPUT_FORMATS = ["table", "wide", "name", "yaml", "json", "jsonpath=TEMPLATE"] as const;

export class OutputFormatError extends Error {
  override readonly name = "OutputFormatError";
}

export function parseOutput(value: string): Output {
  switch (value) {
    case "":
    case "table":
      return { kind: "table" };
    case "wide":
    case "name":
    case "yaml":
    case "json":
      return { kind: value };
  }
  const m = /^jsonpath=(.*)$/s.exec(value);
  if (m) {
    const template = m[1] as string;
    if (template === "") throw new OutputFormatError("jsonpath= needs a template, e.g. jsonpath={.metadata.name}");
    try {
      compileJsonPath(template);
    } catch (e) {
      throw new OutputFormatError(`is not a valid JSONPath template: ${(e as Error).message}`);
    }
    return { kind: "jsonpath", template };
  }
  throw new OutputFormatError(`is not an output format; use one of: ${OUTPUT_FORMATS.join(", ")}`);
}

export interface Named {
  metadata: { name?: string };
}

/** kubectl's -o name: `webapp.apps.example.com/my-service`. */
export const qualifiedName = (singular: string, group: string, obj: Named): string =>
  `${singular}${group ? `.${group}` : ""}/${obj.metadata.name ?? ""}`;

/** The object kubectl prints for a list in yaml or json. */
export const asList = (items: readonly unknown[]) => ({
  apiVersion: "v1",
  items,
  kind: "List",
  metadata: { resourceVersion: "" },
});
