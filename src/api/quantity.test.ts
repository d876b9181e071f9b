import { describe, expect, test } from "bun:test";
import { canonicalQuantity, compareQuantities, isQuantity, quantityValue } from "./quantity.ts";

/** [text, what kube-apiserver v1.36 stores for it], recorded by tests/apicheck.ts from the Go code. */
const recorded = (await Bun.file(new URL("./testdata/quantities.json", import.meta.url)).json()) as [string, string][];

describe("canonicalQuantity", () => {
  test("gives what the API server stores for every recorded text (2304 of them, every suffix)", () => {
    expect(recorded.length).toBe(2304);
    const differ = recorded.filter(([q, stored]) => canonicalQuantity(q) !== stored);
    expect(differ).toEqual([]);
  });

  test("rewrites the spellings users write as the API server does", () => {
    expect(canonicalQuantity("0.5")).toBe("500m");
    expect(canonicalQuantity("1.5Gi")).toBe("1536Mi");
    expect(canonicalQuantity("1000m")).toBe("1");
    expect(canonicalQuantity("2000")).toBe("2k");
    expect(canonicalQuantity("3072Mi")).toBe("3Gi");
    expect(canonicalQuantity("0.5Ki")).toBe("512");
  });

  test("keeps what the API server keeps, its quirks included", () => {
    for (const q of ["250m", "256Mi", "1", "1Gi", "100Mi"]) expect(canonicalQuantity(q)).toBe(q);
    expect(canonicalQuantity("1.500")).toBe("1.500"); // ParseQuantity's fast path takes it for canonical
    expect(canonicalQuantity("1.1Mi")).toBe("1153433600m"); // a binary amount that is not whole is written in decimal
    expect(canonicalQuantity("0.0000000001")).toBe("1n"); // rounded up to 1n
  });

  test("refuses what QUANTITY does not accept: signs, exponents, leading zeros, unknown suffixes", () => {
    for (const q of ["-1", "+1", "1e3", "01", "1.", ".5", "512MB", "1 Gi", ""]) {
      expect(isQuantity(q)).toBe(false);
      expect(() => canonicalQuantity(q)).toThrow("not a quantity");
    }
  });
});

describe("compareQuantities", () => {
  test("compares amounts across suffixes exactly", () => {
    expect(compareQuantities("500m", "0.5")).toBe(0);
    expect(compareQuantities("1Gi", "1000Mi")).toBe(1);
    expect(compareQuantities("1G", "1Gi")).toBe(-1);
    expect(compareQuantities("1.5", "1501m")).toBe(-1);
    expect(compareQuantities("1Ei", "1E")).toBe(1);
  });
});

describe("quantityValue", () => {
  test("binary and decimal suffixes, plain numbers, blanks around; undefined for what is not a quantity", () => {
    expect(quantityValue("512Mi")).toBe(512 * 2 ** 20);
    expect(quantityValue(" 1.5Gi ")).toBe(1.5 * 2 ** 30);
    expect(quantityValue("500M")).toBe(5e8);
    expect(quantityValue("1048576")).toBe(2 ** 20);
    expect(quantityValue("250m")).toBe(0.25);
    expect(quantityValue("5 Mi")).toBeUndefined();
    expect(quantityValue("-1Mi")).toBeUndefined();
    expect(quantityValue("")).toBeUndefined();
  });
});
