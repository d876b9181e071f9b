/**
 * Keeps issue #14's code-health figures from growing back (counted by tests/code-health.ts over shipped src/):
 * - no function over 80 lines beyond ALLOWED_LONG_FUNCTIONS, each with its reason and a ceiling;
 * - no line over 150 characters beyond ALLOWED_LONG_LINES (a count per file, each with its reason);
 * - every doc a source file cites as `docs/NAME.md` exists in the repo.
 * Shrinking is always fine; an entry that no longer applies should be deleted.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { measure, shippedFiles } from "../tests/code-health.ts";

const root = join(import.meta.dir, "..");

/** "name file" → the most lines it may have, and why it may be long at all. */
const ALLOWED_LONG_FUNCTIONS: Record<string, { lines: number; why: string }> = {};

/** File → how many lines over 150 characters it may have, and why. */
const ALLOWED_LONG_LINES: Record<string, { count: number; why: string }> = {};

const health = measure(root);

describe("code health (issue #14)", () => {
  test("no shipped function grows past 80 lines without a reason written in this file", () => {
    const problems = health.longFunctions.flatMap((f) => {
      const allowed = ALLOWED_LONG_FUNCTIONS[`${f.name} ${f.file}`];
      if (allowed && f.lines <= allowed.lines) return [];
      return [`${f.file}:${f.line} ${f.name} has ${f.lines} lines (limit ${allowed?.lines ?? 80}): split it`];
    });
    expect(problems).toEqual([]);
  });

  test("no shipped line grows past 150 characters without a reason written in this file", () => {
    const perFile = new Map<string, number[]>();
    for (const l of health.longLines) perFile.set(l.file, [...(perFile.get(l.file) ?? []), l.line]);
    const problems = [...perFile].flatMap(([file, lines]) =>
      lines.length <= (ALLOWED_LONG_LINES[file]?.count ?? 0)
        ? []
        : [
            `${file}: lines ${lines.join(", ")} are over 150 characters (allowed ${ALLOWED_LONG_LINES[file]?.count ?? 0})`,
          ],
    );
    expect(problems).toEqual([]);
  });

  test("every doc cited by a source file as docs/NAME.md is in the repo", () => {
    const cited = new Set<string>();
    for (const file of shippedFiles(root))
      for (const m of readFileSync(join(root, file), "utf8").matchAll(/\bdocs\/[\w.-]+\.md\b/g)) cited.add(m[0]);
    expect(cited.size).toBeGreaterThan(0);
    expect([...cited].filter((doc) => !existsSync(join(root, doc)))).toEqual([]);
  });

  test("the counter finds a long function, a long line and a duplicated constant in a tree made for it", () => {
    const dir = mkdtempSync(join(tmpdir(), "devctl-code-health-"));
    const body = Array.from({ length: 81 }, (_, i) => `  const v${i} = ${i};`).join("\n");
    const files: Record<string, string> = {
      "src/a/long.ts": `export const LIMIT = 1;\nexport function big() {\n${body}\n}\nconst s = "${"x".repeat(160)}";\n`,
      "src/b/other.ts": `export const LIMIT = 2;\nexport const lease = "webapp-operator-lock";\n`,
      "src/b/other.test.ts": `export const LIMIT = 3;\n`,
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    try {
      const h = measure(dir);
      expect(h.longFunctions.map((f) => [f.name, f.lines])).toEqual([["big", 83]]);
      expect(h.longLines.map((l) => [l.file, l.line])).toEqual([["src/a/long.ts", 85]]);
      expect(h.duplicates).toEqual([{ what: "LIMIT", files: ["src/a/long.ts", "src/b/other.ts"] }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
