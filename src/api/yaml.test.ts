import { describe, expect, test } from "bun:test";
import { toYaml, toYamlDocuments } from "./yaml.ts";

const parse = (text: string): unknown => Bun.YAML.parse(text);

describe("toYaml", () => {
  test("a manifest is written in kubectl's layout", () => {
    const text = toYaml({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "my-service-svc", labels: { app: "my-service" } },
      spec: { ports: [{ name: "http", port: 80, targetPort: 8080 }], selector: { app: "my-service" } },
    });
    expect(text).toBe(
      [
        "apiVersion: v1",
        "kind: Service",
        "metadata:",
        "  name: my-service-svc",
        "  labels:",
        "    app: my-service",
        "spec:",
        "  ports:",
        "  - name: http",
        "    port: 80",
        "    targetPort: 8080",
        "  selector:",
        "    app: my-service",
        "",
      ].join("\n"),
    );
  });

  test("strings another YAML version could read as booleans, numbers, dates or null are quoted", () => {
    for (const s of [
      "yes",
      "No",
      "on",
      "OFF",
      "y",
      "true",
      "null",
      "~",
      "1",
      "1.0",
      "0x1F",
      "1e3",
      "2024-01-01",
      ".inf",
      "-1",
      "+1",
      "1:20",
      "",
      "=",
      "<<",
    ]) {
      const text = toYaml({ k: s });
      expect(text).toBe(`k: ${JSON.stringify(s)}\n`);
      expect(parse(text)).toEqual({ k: s });
    }
  });

  test("ordinary words, image references and paths stay plain", () => {
    for (const s of ["nginx", "myregistry/myapp:v2.1.0", "app.kubernetes.io/managed-by", "a b c", "http://x/y", "_x"]) {
      expect(toYaml({ k: s })).toBe(`k: ${s}\n`);
    }
  });

  test("every tricky string reads back as itself", () => {
    const strings = [
      "a: b",
      "x #y",
      "- a",
      "|x",
      ">x",
      "abc ",
      " abc",
      "café",
      "o'k",
      'say "hi"',
      "a,b",
      "[x]",
      "{x}",
      "$x",
      "x:",
      "@x",
      "`x`",
      "%x",
      "!x",
      "&x",
      "*x",
      "?x",
      "back\\slash",
      "tab\there",
      "a\nb",
      "a\nb\n",
      "a\n\nb",
      "a\n\n",
      "\nlead",
      "  indented\nx",
      "trailing \nspace",
      "blank\n  \nline",
      "cr\r\nlf",
      "\u0001ctl",
      "\u{1F600}",
      '.status.conditions[?(@.type=="Available")].status',
      "self.metadata.name.size() <= 59",
    ];
    for (const s of strings) {
      expect(parse(toYaml({ k: s }))).toEqual({ k: s });
      expect(parse(toYaml([s]))).toEqual([s]);
      expect(parse(toYaml({ [s]: 1 }))).toEqual({ [s]: 1 });
    }
  });

  test("multi-line strings become literal blocks with the right chomping", () => {
    expect(toYaml({ k: "a\nb" })).toBe("k: |-\n  a\n  b\n");
    expect(toYaml({ k: "a\n\nb\n" })).toBe("k: |\n  a\n\n  b\n");
    expect(toYaml({ m: { k: "a\nb" } })).toBe("m:\n  k: |-\n    a\n    b\n");
    expect(toYaml(["a\nb"])).toBe("- |-\n  a\n  b\n");
  });

  test("numbers, booleans, null, empty maps and empty lists round-trip", () => {
    const value = { i: 0, neg: -5, f: 0.5, big: 1e21, t: true, f2: false, n: null, em: {}, el: [], nested: [[], {}] };
    expect(parse(toYaml(value))).toEqual(value);
    expect(toYaml({ em: {}, el: [] })).toBe("em: {}\nel: []\n");
  });

  test("nested lists and lists of maps read back as written", () => {
    const value = { a: [[1, 2], [{ x: 1, y: [3] }], { z: { w: "q" } }], b: [{ c: [{ d: 1 }] }] };
    expect(parse(toYaml(value))).toEqual(value);
    expect(toYaml([[1, 2]])).toBe("- - 1\n  - 2\n");
  });

  test("undefined map values are skipped and undefined list items become null", () => {
    expect(toYaml({ a: undefined, b: 1 })).toBe("b: 1\n");
    expect(toYaml({ a: undefined })).toBe("{}\n");
    expect(parse(toYaml([undefined, 1]))).toEqual([null, 1]);
  });

  test("the same value always gives the same text, in insertion order", () => {
    const a = toYaml({ z: 1, a: { x: 2, b: 3 } });
    expect(a).toBe(toYaml({ z: 1, a: { x: 2, b: 3 } }));
    expect(a).toBe("z: 1\na:\n  x: 2\n  b: 3\n");
  });

  test("a value YAML cannot hold is refused with the path where it was found", () => {
    expect(() => toYaml({ spec: { when: new Date(0) } })).toThrow("at spec.when");
    expect(() => toYaml({ a: [1, () => 1] })).toThrow("a function as YAML at a[1]");
    expect(() => toYaml({ n: 1n })).toThrow("a bigint");
  });

  test("several documents are separated by --- lines", () => {
    const text = toYamlDocuments([{ a: 1 }, { b: 2 }]);
    expect(text).toBe("a: 1\n---\nb: 2\n");
    expect(text.split("---\n").map((d) => parse(d))).toEqual([{ a: 1 }, { b: 2 }]);
  });
});
