import { describe, expect, test } from "bun:test";
import { JsonPathError, runJsonPath } from "./jsonpath.ts";

const wa = (name: string, available: string, replicas: number) => ({
  metadata: { name, labels: { "app.kubernetes.io/name": name } },
  spec: { replicas },
  status: {
    conditions: [
      { type: "Progressing", status: "True" },
      { type: "Available", status: available },
    ],
  },
});
const list = { kind: "WebAppList", items: [wa("a", "True", 1), wa("b", "False", 3)] };

describe("JSONPath as kubectl get -o jsonpath runs it", () => {
  test("fields, indexes, wildcards and slices; results of one action are joined by spaces", () => {
    expect(runJsonPath("{.items[*].metadata.name}", list)).toBe("a b");
    expect(runJsonPath("{.items[0].metadata.name}", list)).toBe("a");
    expect(runJsonPath("{.items[-1].spec.replicas}", list)).toBe("3");
    expect(runJsonPath("{.items[0:1].metadata.name}", list)).toBe("a");
    expect(runJsonPath("{.items[*].metadata.labels['app.kubernetes.io/name']}", list)).toBe("a b");
    expect(runJsonPath("{..name}", { x: { name: "n1" }, y: [{ name: "n2" }] })).toBe("n1 n2");
  });

  test("filters compare with == and <, or test that a field exists", () => {
    expect(runJsonPath('{.items[0].status.conditions[?(@.type=="Available")].status}', list)).toBe("True");
    expect(runJsonPath("{.items[?(@.spec.replicas>1)].metadata.name}", list)).toBe("b");
    expect(runJsonPath("{.items[?(@.spec.replicas)].metadata.name}", list)).toBe("a b");
  });

  test("range ... end repeats its body for each item, and string literals print as text", () => {
    expect(runJsonPath('{range .items[*]}{.metadata.name}{"\\t"}{.spec.replicas}{"\\n"}{end}', list)).toBe(
      "a\t1\nb\t3\n",
    );
    expect(runJsonPath("name: {.metadata.name}!", wa("x", "True", 1))).toBe("name: x!");
  });

  test("a missing key prints nothing; objects print as JSON", () => {
    expect(runJsonPath("{.nope.deeper}", list)).toBe("");
    expect(runJsonPath("{.items[0].spec}", list)).toBe('{"replicas":1}');
  });

  test("a malformed template is an error saying what is wrong", () => {
    expect(() => runJsonPath("{.items[0", list)).toThrow(JsonPathError);
    expect(() => runJsonPath("{range .items[*]}{.a}", list)).toThrow("{range} without {end}");
    expect(() => runJsonPath("{end}", list)).toThrow("{end} without {range}");
  });
});

import { asList, OutputFormatError, parseOutput, qualifiedName } from "./output.ts";

describe("the -o formats", () => {
  test("each format kubectl get knows is read, jsonpath with its template", () => {
    expect(["table", "wide", "name", "yaml", "json"].map((f) => parseOutput(f).kind)).toEqual([
      "table",
      "wide",
      "name",
      "yaml",
      "json",
    ]);
    expect(parseOutput("jsonpath={.metadata.name}")).toEqual({ kind: "jsonpath", template: "{.metadata.name}" });
  });

  test("an unknown format or a broken template is refused when the flag is read", () => {
    expect(() => parseOutput("xml")).toThrow(OutputFormatError);
    expect(() => parseOutput("jsonpath=")).toThrow("needs a template");
    expect(() => parseOutput("jsonpath={.items[")).toThrow("is not a valid JSONPath template");
  });

  test("names and lists have kubectl's shapes", () => {
    expect(qualifiedName("webapp", "apps.example.com", { metadata: { name: "web" } })).toBe(
      "webapp.apps.example.com/web",
    );
    expect(asList([])).toEqual({ apiVersion: "v1", items: [], kind: "List", metadata: { resourceVersion: "" } });
  });
});
