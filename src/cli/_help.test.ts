import { describe, expect, test } from "bun:test";
import { styles } from "./_color.ts";
import { columns, renderHelp, splitDescription, wrap } from "./_help.ts";

const plain = styles(false);

describe("help", () => {
  test("a description splits into its summary, its body and its examples", () => {
    expect(splitDescription("Show one\n\nMore words.\n\nExamples:\n  devctl a\n  devctl b")).toEqual({
      summary: "Show one",
      body: "More words.",
      examples: ["  devctl a", "  devctl b"],
    });
  });

  test("wrapping keeps words whole and lines within the width", () => {
    expect(wrap("aa bb cc dd", 5)).toEqual(["aa bb", "cc dd"]);
    expect(columns([["  -x", "one two three"]], 15)).toEqual(["  -x   one two three"]);
  });

  test("a leaf lists examples, aligned options with types and defaults, and the full usage line", () => {
    const text = renderHelp(
      {
        name: "get",
        path: ["devctl", "webapp", "get"],
        meta: { description: "Show one WebApp\n\nExamples:\n  devctl webapp get web" },
        args: {
          name: { type: "positional", description: "Name", required: true },
          output: { type: "string", alias: "o", default: "table", description: "Output format" },
          watch: { type: "boolean", alias: "w", description: "Watch" },
        },
        commands: [],
      },
      plain,
    );
    expect(text).toBe(
      [
        "Show one WebApp",
        "",
        "Examples:",
        "  devctl webapp get web",
        "",
        "Options:",
        '  -o, --output string   Output format (default "table")',
        "  -w, --watch           Watch",
        "  -h, --help            Help for get",
        "",
        "Usage:",
        "  devctl webapp get NAME [options]",
        "",
      ].join("\n"),
    );
  });

  test("a group lists its commands by summary only, aligned, and says how to read more", () => {
    const text = renderHelp(
      {
        name: "webapp",
        path: ["devctl", "webapp"],
        meta: { description: "WebApps\n\nExamples:\n  devctl webapp list" },
        args: {},
        commands: [
          { name: "list", meta: { description: "List them\n\nExamples:\n  devctl webapp list -A" } },
          { name: "describe", meta: { description: "Describe one" } },
        ],
      },
      plain,
    );
    expect(text).toContain("Commands:\n  list       List them\n  describe   Describe one\n");
    expect(text).not.toContain("-A");
    expect(text).toContain('Usage:\n  devctl webapp <command> [options]\n\nUse "devctl webapp <command> --help"');
    expect(text.split("\n").filter((l) => l !== l.trimEnd())).toEqual([]);
  });
});
