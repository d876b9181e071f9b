/** The WebApp API: re-exports only. */
export * from "./webapp.ts";
export * from "./parse.ts";
export * from "./conditions.ts";
export * from "./crd.ts";
export { toYaml, toYamlDocuments } from "./yaml.ts";
