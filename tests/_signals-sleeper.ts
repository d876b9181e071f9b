/**
 * A test file that runs until it is stopped, beside a child process of its own: tests/signals.test.ts runs
 * `npm test` on this file alone and signals it while it runs. Not a *.test.ts file, so no suite runs it.
 */
import { test } from "bun:test";

test("runs until stopped, beside a child of its own", async () => {
  await Bun.spawn(["sleep", "86400"]).exited;
}, 86_400_000);
