import { describe, expect, test } from "bun:test";
import { colorEnabled, styles } from "./_color.ts";

describe("colorEnabled", () => {
  const tty = { isTTY: true };
  const pipe = { isTTY: false };
  test("is on for a terminal and off for a pipe", () => {
    expect(colorEnabled(tty, {})).toBe(true);
    expect(colorEnabled(pipe, {})).toBe(false);
  });
  test("NO_COLOR and TERM=dumb turn it off on a terminal; FORCE_COLOR turns it on anywhere", () => {
    expect(colorEnabled(tty, { NO_COLOR: "1" })).toBe(false);
    expect(colorEnabled(tty, { NO_COLOR: "" })).toBe(true);
    expect(colorEnabled(tty, { TERM: "dumb" })).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: "1" })).toBe(true);
    expect(colorEnabled(tty, { FORCE_COLOR: "0" })).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: "0" })).toBe(false);
    expect(colorEnabled(pipe, { FORCE_COLOR: "1", NO_COLOR: "1" })).toBe(true);
  });
  test("styles without colour are the identity", () => {
    expect(styles(false).bold("x")).toBe("x");
    expect(styles(true).bold("x")).toBe("\u001B[1mx\u001B[22m");
  });
});
