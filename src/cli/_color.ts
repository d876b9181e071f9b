/**
 * Whether a stream gets colour and styling, decided as most CLIs do, in this order:
 * FORCE_COLOR "0"/"false" → off, any other value → on; NO_COLOR set and non-empty → off; TERM=dumb → off; else only on a TTY.
 * Styles are functions of a decision, so a pipe never sees an escape code. Pure given the env and the stream.
 */

export interface Stream {
  isTTY?: boolean;
}

export function colorEnabled(stream: Stream, env: Record<string, string | undefined> = process.env): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return force !== "0" && force !== "false";
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

export interface Styles {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
  green(s: string): string;
  cyan(s: string): string;
}

const sgr = (on: boolean, open: number, close: number) => (s: string) =>
  on ? `\u001B[${open}m${s}\u001B[${close}m` : s;

export function styles(on: boolean): Styles {
  return {
    bold: sgr(on, 1, 22),
    dim: sgr(on, 2, 22),
    red: sgr(on, 31, 39),
    yellow: sgr(on, 33, 39),
    green: sgr(on, 32, 39),
    cyan: sgr(on, 36, 39),
  };
}

/** Styles for stdout and for stderr, each decided on its own stream. */
export const stdoutStyles = (): Styles => styles(colorEnabled(process.stdout));
export const stderrStyles = (): Styles => styles(colorEnabled(process.stderr));
