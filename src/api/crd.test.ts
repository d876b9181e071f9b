import { describe, expect, test } from "bun:test";
import { buildWebAppCrd, renderCrdYaml } from "./crd.ts";
import { CRD_FILE } from "./crd-gen.ts";
import type { CelRule, OpenApiSchema } from "./openapi.ts";
import { parseWebAppSpec } from "./parse.ts";

const crd = buildWebAppCrd();
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;
const spec = root.properties!.spec!;
const status = root.properties!.status!;

describe("the checked-in CRD", () => {
  test("is exactly what the builder renders (run `bun run src/api/crd-gen.ts` after changing the schema)", async () => {
    expect(await Bun.file(CRD_FILE).text()).toBe(renderCrdYaml());
  });

  test("reads back as the builder's object", async () => {
    expect(Bun.YAML.parse(await Bun.file(CRD_FILE).text())).toEqual(JSON.parse(JSON.stringify(crd)));
  });

  test("the examples in crd/examples are valid WebApps", async () => {
    const dir = new URL("../../crd/examples/", import.meta.url).pathname;
    const expected = {
      "my-service.yaml": { image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 },
      "test-app.yaml": { image: "nginx:1.25", replicas: 3, port: 80 },
    };
    for (const [file, want] of Object.entries(expected)) {
      const obj = Bun.YAML.parse(await Bun.file(dir + file).text()) as { apiVersion: string; kind: string };
      expect([obj.apiVersion, obj.kind]).toEqual(["apps.example.com/v1", "WebApp"]);
      expect(parseWebAppSpec(obj)).toEqual({ ok: true, spec: want });
    }
  });
});

describe("buildWebAppCrd", () => {
  test("names, scope and the devctl label and schema-version annotation", () => {
    expect(crd.metadata).toEqual({
      name: "webapps.apps.example.com",
      labels: { "app.kubernetes.io/managed-by": "devctl" },
      annotations: { "devctl.dev/crd-schema-version": "3" },
    });
    expect(crd.spec.names).toEqual({
      plural: "webapps",
      singular: "webapp",
      kind: "WebApp",
      listKind: "WebAppList",
      shortNames: ["wa"],
    });
    expect(crd.spec.scope).toBe("Namespaced");
    expect([version.name, version.served, version.storage]).toEqual(["v1", true, true]);
  });

  test("the spec schema comes from the valibot schema: limits, default and required fields", () => {
    expect(spec.required).toEqual(["image", "port"]);
    expect(spec.properties!.replicas).toMatchObject({
      type: "integer",
      format: "int32",
      default: 1,
      minimum: 1,
      maximum: 1000,
    });
    expect(spec.properties!.port).toMatchObject({ type: "integer", format: "int32", minimum: 1, maximum: 65535 });
    expect(spec.properties!.image).toMatchObject({ type: "string", maxLength: 1024 });
    expect(spec.properties!.imagePullPolicy).toMatchObject({
      type: "string",
      enum: ["Always", "IfNotPresent", "Never"],
    });
    expect(spec.properties!.imagePullPolicy).not.toHaveProperty("default"); // left out, Kubernetes' own rule applies
    expect(spec.properties!.image!["x-kubernetes-validations"]).toEqual([
      { rule: "self.size() > 0", message: "must not be empty: set it to a container image such as nginx:1.25" },
      {
        rule: "self.matches('^\\\\S*$')",
        message: "must not contain whitespace: an image reference looks like registry/name:tag",
      },
    ]);
    expect(root.required).toEqual(["spec"]);
  });

  test("the name rules sit at the root as CEL and say why the limit is 59", () => {
    const rules = root["x-kubernetes-validations"]!;
    expect(rules.map((r) => r.rule)).toEqual([
      "self.metadata.name.size() <= 59",
      "self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",
    ]);
    expect(rules[0]!.message).toContain("<name>-svc");
    expect(rules[0]!.message).toContain("63 characters");
  });

  test("status defaults to observedGeneration 0, so a WebApp the operator has not written reads as not observed", () => {
    expect(status.default).toEqual({ observedGeneration: 0 });
    expect(root.required).not.toContain("status");
  });

  test("status has a selector for the scale subresource and conditions as a map keyed by type", () => {
    expect(Object.keys(status.properties!)).toEqual([
      "replicas",
      "readyReplicas",
      "availableReplicas",
      "observedGeneration",
      "selector",
      "conditions",
      "admitted",
    ]);
    const conditions = status.properties!.conditions!;
    expect(conditions["x-kubernetes-list-type"]).toBe("map");
    expect(conditions["x-kubernetes-list-map-keys"]).toEqual(["type"]);
    expect(conditions.items!.required).toEqual(["type", "status", "reason", "message", "lastTransitionTime"]);
    expect(conditions.items!.properties!.status!.enum).toEqual(["True", "False", "Unknown"]);
    expect(conditions.items!.properties!.lastTransitionTime!.format).toBe("date-time");
  });

  test("status and scale subresources and the printer columns", () => {
    expect(version.subresources).toEqual({
      status: {},
      scale: {
        specReplicasPath: ".spec.replicas",
        statusReplicasPath: ".status.replicas",
        labelSelectorPath: ".status.selector",
      },
    });
    expect(version.additionalPrinterColumns.map((c) => [c.name, c.type, c.jsonPath])).toEqual([
      ["Image", "string", ".spec.image"],
      ["Desired", "integer", ".spec.replicas"],
      ["Available", "integer", ".status.availableReplicas"],
      ["Ready", "string", '.status.conditions[?(@.type=="Ready")].status'],
      ["Reason", "string", '.status.conditions[?(@.type=="Ready")].reason'],
      ["Age", "date", ".metadata.creationTimestamp"],
    ]);
  });

  test("every schema node has a type, as a structural schema must", () => {
    const visit = (s: OpenApiSchema, path: string): void => {
      expect(s.type === undefined ? path : "typed").toBe("typed");
      for (const [k, child] of Object.entries(s.properties ?? {})) visit(child, `${path}.${k}`);
      if (s.items) visit(s.items, `${path}[]`);
    };
    visit(root, "(root)");
  });
});

/** Enough of the API server's checks to evaluate the generated spec schema (the CEL forms we emit). */
function serverAccepts(s: OpenApiSchema, value: unknown): boolean {
  if (s.type === "object") {
    if (typeof value !== "object" || value === null) return false;
    const obj = value as Record<string, unknown>;
    if ((s.required ?? []).some((k) => obj[k] === undefined)) return false;
    return Object.entries(s.properties ?? {}).every(([k, p]) => obj[k] === undefined || serverAccepts(p, obj[k]));
  }
  if (s.type === "integer" && !Number.isInteger(value)) return false;
  if (s.type === "string" && typeof value !== "string") return false;
  if (
    typeof value === "number" &&
    ((s.minimum !== undefined && value < s.minimum) || (s.maximum !== undefined && value > s.maximum))
  )
    return false;
  if (typeof value === "string" && s.maxLength !== undefined && value.length > s.maxLength) return false;
  return (s["x-kubernetes-validations"] ?? []).every((r) => celHolds(r, value as string));
}

function celHolds(rule: CelRule, self: string): boolean {
  if (rule.rule === "self.size() > 0") return self.length > 0;
  const m = /^self\.matches\('(.*)'\)$/.exec(rule.rule);
  if (m) return new RegExp(m[1]!.replaceAll("\\\\", "\\")).test(self);
  throw new Error(`unexpected rule ${rule.rule}`);
}

test("the API server (by the generated schema) and parseWebAppSpec agree on which specs are valid", () => {
  const specs = [
    { image: "nginx:1.25", replicas: 3, port: 80 },
    { image: "nginx", port: 1 },
    { image: "nginx", port: 65535, replicas: 1000 },
    { image: "nginx", port: 0 },
    { image: "nginx", port: 65536 },
    { image: "nginx", port: 80, replicas: 0 },
    { image: "nginx", port: 80, replicas: 1001 },
    { image: "nginx", port: 80.5 },
    { image: "", port: 80 },
    { image: "a b", port: 80 },
    { image: "a\tb", port: 80 },
    { image: "x".repeat(1025), port: 80 },
    { port: 80 },
    { image: "nginx" },
  ];
  for (const s of specs) {
    const ours = parseWebAppSpec({ metadata: { name: "a" }, spec: s }).ok;
    expect({ spec: s, server: serverAccepts(spec, s) }).toEqual({ spec: s, server: ours });
  }
});
