import { describe, expect, test } from "bun:test";
import { buildWebAppCrd, renderCrdYaml } from "./crd.ts";
import { CRD_FILE } from "./crd-gen.ts";
import type { OpenApiSchema } from "./openapi.ts";
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
      annotations: { "devctl.dev/crd-schema-version": "7" },
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

  test("the spec schema comes from the valibot schema: limits and required fields; replicas has no default", () => {
    expect(spec.required).toEqual(["image", "port"]);
    expect(spec.properties!.replicas).toMatchObject({ type: "integer", format: "int32", minimum: 1, maximum: 1000 });
    // A stored default would sit beside spec.autoscaling, which the CRD refuses (webapp.ts WEBAPP_DEFAULT_REPLICAS).
    expect(spec.properties!.replicas!.default).toBeUndefined();
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
      "autoscaling",
      "url",
      "conditions",
      "rollouts",
      "lastReadyRevision",
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
    expect(version.additionalPrinterColumns.map((c) => [c.name, c.type, c.jsonPath, c.priority ?? 0])).toEqual([
      ["Image", "string", ".spec.image", 0],
      ["Desired", "integer", ".spec.replicas", 0],
      ["Available", "integer", ".status.availableReplicas", 0],
      ["Ready", "string", '.status.conditions[?(@.type=="Ready")].status', 0],
      ["Reason", "string", '.status.conditions[?(@.type=="Ready")].reason', 0],
      ["Age", "date", ".metadata.creationTimestamp", 0],
      ["MinPods", "integer", ".spec.autoscaling.minReplicas", 1], // -o wide only
      ["MaxPods", "integer", ".spec.autoscaling.maxReplicas", 1],
      ["URL", "string", ".status.url", 1],
    ]);
  });

  test("every field of the spec has a description, which `kubectl explain webapp.spec.<field>` shows", () => {
    const missing: string[] = [];
    const visit = (s: OpenApiSchema, path: string): void => {
      if (!s.description) missing.push(path);
      for (const [k, child] of Object.entries(s.properties ?? {})) visit(child, `${path}.${k}`);
      if (s.items?.properties) for (const [k, c] of Object.entries(s.items.properties)) visit(c, `${path}[].${k}`);
    };
    visit(spec, "spec");
    expect(missing).toEqual([]);
    expect(Object.keys(spec.properties!)).toEqual([
      "image",
      "replicas",
      "port",
      "imagePullPolicy",
      "env",
      "envFrom",
      "command",
      "args",
      "resources",
      "healthCheck",
      "readinessProbe",
      "livenessProbe",
      "startupProbe",
      "podSecurity",
      "imagePullSecrets",
      "podLabels",
      "podAnnotations",
      "autoscaling",
      "disruptionBudget",
      "expose",
      "rollout",
    ]);
  });

  test("rules between fields are CEL that names the field to fix (fieldPath) and what to do", () => {
    expect(spec["x-kubernetes-validations"]?.map((r) => [r.rule, r.fieldPath])).toEqual([
      ["!has(self.healthCheck) || !has(self.readinessProbe)", ".readinessProbe"],
      ["!has(self.healthCheck) || !has(self.livenessProbe)", ".livenessProbe"],
      ["!has(self.replicas) || !has(self.autoscaling)", ".replicas"],
      [
        "!has(self.autoscaling) || (has(self.resources) && has(self.resources.requests) && has(self.resources.requests.cpu))",
        ".autoscaling",
      ],
      [
        "!has(self.autoscaling) || !has(self.autoscaling.targetMemoryUtilizationPercentage) || " +
          "(has(self.resources) && has(self.resources.requests) && has(self.resources.requests.memory))",
        ".autoscaling",
      ],
      // A transition rule: on an update that removes autoscaling, the replicas to keep must be given.
      ["has(self.replicas) || has(self.autoscaling) || !has(oldSelf.autoscaling)", ".replicas"],
    ]);
    const resources = spec.properties!.resources!["x-kubernetes-validations"]!;
    expect(resources.map((r) => r.fieldPath)).toEqual([".limits.cpu", ".limits.memory"]);
    expect(resources[0]!.rule).toContain("quantity(self.limits.cpu).compareTo(quantity(self.requests.cpu)) >= 0");
    expect(spec.properties!.podLabels!["x-kubernetes-validations"]![0]!.rule).toBe(
      "!('app' in self) && !('managed-by' in self)",
    );
  });

  test("every schema node has a type, as a structural schema must", () => {
    const visit = (s: OpenApiSchema, path: string): void => {
      expect(s.type === undefined ? path : "typed").toBe("typed");
      for (const [k, child] of Object.entries(s.properties ?? {})) visit(child, `${path}.${k}`);
      if (s.items) visit(s.items, `${path}[]`);
      if (s.additionalProperties) visit(s.additionalProperties, `${path}{}`);
    };
    visit(root, "(root)");
  });
});
