import { describe, expect, test } from "bun:test";
import type { LogObject } from "consola";
import { withLogContext } from "../runtime/logger.ts";
import { entryOf, textLine } from "./_logger.ts";

const at = new Date("2024-05-01T12:00:00.000Z");
const log = (level: number, ...args: unknown[]): LogObject =>
  ({ date: at, level, args, type: "info", tag: "" }) as unknown as LogObject;

describe("operator log entries", () => {
  test("have controller-runtime's keys in its order, the reconcile's context, and an error as a string", () => {
    const e = withLogContext({ controller: "webapp", namespace: "team-a", name: "web", reconcileID: "r-1" }, () =>
      entryOf(
        log(0, "reconcile of team-a/web failed", new Error("boom\nline two", { cause: new Error("why") })),
        false,
      ),
    );
    expect(JSON.stringify(e)).toBe(
      '{"ts":"2024-05-01T12:00:00.000Z","level":"error","msg":"reconcile of team-a/web failed","controller":"webapp","namespace":"team-a","name":"web","reconcileID":"r-1","error":"boom\\\\nline two","cause":"why"}',
    );
  });

  test("structured fields are a trailing object; levels are consola's names", () => {
    expect(entryOf(log(3, "leading", { identity: "pod-1" }), false)).toEqual({
      ts: "2024-05-01T12:00:00.000Z",
      level: "info",
      msg: "leading",
      identity: "pod-1",
    });
    expect(entryOf(log(1, "x"), false).level).toBe("warn");
    expect(entryOf(log(4, "x"), false).level).toBe("debug");
  });

  test("text lines start with the timestamp and level and end with key=value fields, colour only when asked", () => {
    const e = entryOf(
      log(3, "created Deployment team-a/web-deployment", { fields: ["spec.replicas"], who: "a b" }),
      false,
    );
    expect(textLine(e, false)).toBe(
      '2024-05-01T12:00:00.000Z INFO  created Deployment team-a/web-deployment  fields="[\\"spec.replicas\\"]" who="a b"',
    );
    expect(textLine(e, true)).toContain("\u001B[36mINFO \u001B[39m");
  });
});
