import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { cel, celRule, openapi, toOpenApiSchema } from "./openapi.ts";

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

describe("celRule", () => {
  test("translates size and value limits onto the given expression", () => {
    expect(celRule(v.maxLength(59), "self.metadata.name")).toBe("self.metadata.name.size() <= 59");
    expect(celRule(v.minLength(2), "self")).toBe("self.size() >= 2");
    expect(celRule(v.nonEmpty(), "self")).toBe("self.size() > 0");
    expect(celRule(v.minValue(1), "self")).toBe("self >= 1");
    expect(celRule(v.maxValue(9), "self")).toBe("self <= 9");
  });
});
