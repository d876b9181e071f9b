import { describe, expect, test } from "bun:test";
import { distance, suggest } from "./_suggest.ts";

describe("suggest", () => {
  test("edit distance counts insertions, deletions and substitutions", () => {
    expect(distance("lsit", "list")).toBe(2);
    expect(distance("imag", "image")).toBe(1);
    expect(distance("", "abc")).toBe(3);
  });

  test("offers the closest name within two edits, or one the typed word starts", () => {
    expect(suggest("lsit", ["list", "get", "create"])).toBe("list");
    expect(suggest("all-namespace", ["all-namespaces", "namespace"])).toBe("all-namespaces");
    expect(suggest("deploy", ["delete", "describe"])).toBeUndefined();
    expect(suggest("ver", ["version", "webapp"])).toBe("version");
  });
});
