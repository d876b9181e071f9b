/**
 * The operator's logger: consola with one of two reporters.
 * - `json`: one JSON object per line on stderr ({"ts","level","logger","msg", ...fields}) for log pipelines.
 * - `text`: consola's readable output for people.
 * Structured fields are passed as a trailing plain object: `log.info("created", { name })`.
 * Errors are logged by message (and cause); no stack unless the level is debug.
 */
import { createConsola, LogLevels, type ConsolaInstance, type LogObject } from "consola";

export type LogFormat = "json" | "text";
export type LogLevelName = "error" | "warn" | "info" | "debug";

const LEVEL_NAMES: Record<number, string> = { 0: "error", 1: "warn", 2: "info", 3: "info", 4: "debug", 5: "trace" };

function jsonLine(o: LogObject): string {
  const args = [...o.args];
  const fields = args.length > 1 && isPlainObject(args.at(-1)) ? (args.pop() as Record<string, unknown>) : {};
  const errors = args.filter((a): a is Error => a instanceof Error);
  const msg = args
    .filter((a) => !(a instanceof Error))
    .map((a) => (typeof a === "string" ? a : JSON.stringify(a)))
    .join(" ");
  const out: Record<string, unknown> = { ts: o.date.toISOString(), level: LEVEL_NAMES[o.level] ?? String(o.level) };
  if (o.tag) out.logger = o.tag;
  out.msg = msg;
  for (const [k, v] of Object.entries(fields)) out[k] = v instanceof Error ? v.message : v;
  const err = errors[0];
  if (err) out.error = err.message;
  if (err?.cause instanceof Error) out.cause = err.cause.message;
  return JSON.stringify(out);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

export function createLogger(format: LogFormat, level: LogLevelName): ConsolaInstance {
  const lvl = LogLevels[level];
  if (format === "json") {
    return createConsola({
      level: lvl,
      reporters: [{ log: (o) => process.stderr.write(`${jsonLine(o)}\n`) }],
    });
  }
  return createConsola({
    level: lvl,
    stderr: process.stderr,
    stdout: process.stderr,
    formatOptions: { date: true, colors: process.stderr.isTTY },
  });
}
