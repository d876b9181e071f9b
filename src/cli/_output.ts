/**
 * Where a command's words go. Results (what a pipe wants) go to stdout; information and progress go to
 * stderr as plain text, never through console.error (Bun colours that red on a terminal); warnings are
 * prefixed "warning:" (yellow only on a terminal). One writer per purpose, so no command picks a stream itself.
 */
import { stderrStyles } from "./_color.ts";

/** A result line on stdout. */
export const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

/** Information or progress on stderr, uncoloured. */
export const info = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** A warning on stderr: "warning: ..." (the prefix yellow on a terminal). */
export const warn = (line: string): void => {
  process.stderr.write(`${stderrStyles().yellow("warning:")} ${line}\n`);
};
