import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { cel, celRule, openapi, toOpenApiSchema, valibotOnly } from "./openapi.ts";

describe("toOpenApiSchema", () => {
  test("an integer within int32 gets format int32, an unbounded one int64", () => {
    expect(toOpenApiSchema(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(10)))).toEqual({
      type: "integer",
      format: "int32",
      minimum: 0,
      maximum: 10,
    });
    expect(toOpenApiSchema(v.pipe(v.number(), v.integer(), v.minValue(0)))).toEqual({
      type: "integer",
      format: "int64",
      minimum: 0,
    });
    expect(toOpenApiSchema(v.number())).toEqual({ type: "number" });
  });

  test("optional entries are not required and carry their default", () => {
    const s = toOpenApiSchema(v.object({ a: v.string(), b: v.optional(v.string(), "x"), c: v.optional(v.boolean()) }));
    expect(s).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "string", default: "x" }, c: { type: "boolean" } },
      required: ["a"],
    });
  });

  test("a computed default is refused, since a CRD can only hold a value", () => {
    expect(() => toOpenApiSchema(v.object({ a: v.optional(v.string(), () => "x") }))).toThrow(
      "(root).a: a computed default",
    );
  });

  test("string limits, patterns, descriptions, enums and extra keywords are translated", () => {
    const s = toOpenApiSchema(
      v.pipe(
        v.array(v.pipe(v.string(), v.nonEmpty(), v.maxLength(5), v.regex(/^[a-z]+$/), v.description("d"))),
        openapi({ "x-kubernetes-list-type": "set" }),
      ),
    );
    expect(s).toEqual({
      type: "array",
      items: { description: "d", type: "string", minLength: 1, maxLength: 5, pattern: "^[a-z]+$" },
      "x-kubernetes-list-type": "set",
    });
    expect(toOpenApiSchema(v.picklist(["A", "B"]))).toEqual({ type: "string", enum: ["A", "B"] });
  });

  test("a validation followed by cel() becomes a CEL rule with that message instead of a keyword", () => {
    const s = toOpenApiSchema(v.pipe(v.string(), v.regex(/^a'b\s$/), cel("say it plainly")));
    expect(s).toEqual({
      type: "string",
      "x-kubernetes-validations": [{ rule: "self.matches('^a\\'b\\\\s$')", message: "say it plainly" }],
    });
  });

  test("cel() without a validation before it is refused", () => {
    expect(() => toOpenApiSchema(v.pipe(v.string(), cel("m")))).toThrow("cel() must follow a validation");
  });

  test("checks the API server could not enforce are refused with their path", () => {
    expect(() =>
      toOpenApiSchema(
        v.object({
          a: v.pipe(
            v.string(),
            v.check((x) => x !== "b"),
          ),
        }),
      ),
    ).toThrow('(root).a: valibot validation "check"');
    expect(() => toOpenApiSchema(v.object({ a: v.pipe(v.string(), v.trim()) }))).toThrow(
      '(root).a: valibot transformation "trim"',
    );
    expect(() => toOpenApiSchema(v.object({ a: v.union([v.string(), v.number()]) }))).toThrow(
      '(root).a: valibot schema "union"',
    );
    expect(() => toOpenApiSchema(v.pipe(v.string(), v.regex(/a/i)))).toThrow("flag-less");
  });
});

describe("toOpenApiSchema of the shapes issue #31 added", () => {
  test("sizes follow the type: items for an array, length for a string, properties for a record", () => {
    expect(toOpenApiSchema(v.pipe(v.array(v.string()), v.minLength(1), v.maxLength(9)))).toEqual({
      type: "array",
      minItems: 1,
      maxItems: 9,
      items: { type: "string" },
    });
    expect(toOpenApiSchema(v.pipe(v.array(v.string()), v.nonEmpty()))).toMatchObject({ minItems: 1 });
    expect(toOpenApiSchema(v.pipe(v.record(v.string(), v.pipe(v.string(), v.maxLength(63))), v.maxEntries(4)))).toEqual(
      {
        type: "object",
        maxProperties: 4,
        additionalProperties: { type: "string", maxLength: 63 },
      },
    );
  });

  test("a check written in code goes in as the CEL rule beside it, with its message and field path", () => {
    const s = toOpenApiSchema(
      v.pipe(
        v.object({ a: v.optional(v.string()), b: v.optional(v.string()) }),
        v.check((o) => !(o.a && o.b)),
        cel("not both", { rule: "!has(self.a) || !has(self.b)", fieldPath: ".b" }),
      ),
    );
    expect(s["x-kubernetes-validations"]).toEqual([
      { rule: "!has(self.a) || !has(self.b)", message: "not both", fieldPath: ".b" },
    ]);
  });

  test("a check without its CEL twin is refused, and so is one marked neither way", () => {
    expect(() =>
      toOpenApiSchema(
        v.pipe(
          v.string(),
          v.check((x) => x !== "b"),
          cel("m"),
        ),
      ),
    ).toThrow('valibot validation "check" has no CEL translation');
  });

  test("a rule marked valibotOnly stays out of the CRD; a rule on a map's keys must be marked so", () => {
    const key = v.pipe(
      v.string(),
      v.check((k) => !k.includes(" ")),
      valibotOnly("keys are out of a CRD's reach"),
    );
    expect(toOpenApiSchema(v.record(key, v.string()))).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
    });
    const unmarked = v.pipe(v.string(), v.maxLength(3));
    expect(() => toOpenApiSchema(v.object({ m: v.record(unmarked, v.string()) }))).toThrow(
      "(root).m: a rule on a map's keys cannot go into a CRD",
    );
    expect(() => toOpenApiSchema(v.pipe(v.string(), valibotOnly("why")))).toThrow(
      "valibotOnly() must follow a validation",
    );
  });
});

describe("celRule", () => {
  test("translates size and value limits onto the given expression", () => {
    expect(celRule(v.maxLength(59), "self.metadata.name")).toBe("self.metadata.name.size() <= 59");
    expect(celRule(v.minLength(2), "self")).toBe("self.size() >= 2");
    expect(celRule(v.nonEmpty(), "self")).toBe("self.size() > 0");
    expect(celRule(v.minValue(1), "self")).toBe("self >= 1");
    expect(celRule(v.maxValue(9), "self")).toBe("self <= 9");
  });
});
