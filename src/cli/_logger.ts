/**
 * The operator's logger: consola with one of two reporters, both one line per entry on stderr.
 * - `json`, for log pipelines, with controller-runtime's keys and stable types:
 *   {"ts":"<RFC 3339>","level":"info","logger":"<tag>","msg":"...","controller":"webapp","namespace":"...",
 *    "name":"...","reconcileID":"<uuid>","error":"...", ...fields}; `ts`, `level`, `msg` always strings;
 *   the reconcile keys come from the log context (runtime/logger.ts), so every line of one reconcile has the same reconcileID.
 * - `text`, for people: `<RFC 3339> INFO  <msg>  key=value ...` (level coloured only on a terminal).
 * Structured fields are a trailing plain object: `log.info("created", { name })`; an Error argument becomes
 * `error` (and `cause`); newlines inside messages are escaped so one entry stays one line. No stack
 * unless the level is debug.
 */
import { createConsola, type ConsolaInstance, LogLevels, type LogObject } from "consola";
import { logContext } from "../runtime/logger.ts";
import { colorEnabled, styles } from "./_color.ts";

export type LogFormat = "json" | "text";
export type LogLevelName = "error" | "warn" | "info" | "debug";

/** The `logger` of every entry (controller-runtime names its loggers; devctl has one). */
export const LOGGER_NAME = "webapp-operator";

const LEVEL_NAMES: Record<number, string> = { 0: "error", 1: "warn", 2: "info", 3: "info", 4: "debug", 5: "debug" };

export interface Entry {
  ts: string;
  level: string;
  logger?: string;
  msg: string;
  [key: string]: unknown;
}

const oneLine = (s: string) => s.replace(/\r?\n/g, "\\n");

const fieldValue = (v: unknown): unknown => (v instanceof Error ? oneLine(v.message) : v);

/** The entry for one consola log call, with the log context's keys. Pure but for the context. */
export function entryOf(o: LogObject, debug: boolean): Entry {
  const args = [...o.args];
  const fields = args.length > 1 && isPlainObject(args.at(-1)) ? (args.pop() as Record<string, unknown>) : {};
  const errors = args.filter((a): a is Error => a instanceof Error);
  const msg = args
    .filter((a) => !(a instanceof Error))
    .map((a) => (typeof a === "string" ? a : JSON.stringify(a)))
    .join(" ");
  const out: Entry = { ts: o.date.toISOString(), level: LEVEL_NAMES[o.level] ?? "info", msg: oneLine(msg) };
  if (o.tag) out.logger = o.tag;
  Object.assign(out, logContext() ?? {});
  for (const [k, v] of Object.entries(fields)) out[k] = fieldValue(v);
  const err = errors[0];
  if (err) out.error = oneLine(err.message);
  if (err?.cause instanceof Error) out.cause = oneLine(err.cause.message);
  if (err && debug && err.stack) out.stacktrace = err.stack;
  // Keep the order of controller-runtime's lines: ts, level, logger, msg first.
  const { ts, level, logger, msg: m, ...rest } = out;
  return { ts, level, ...(logger ? { logger } : {}), msg: m, ...rest };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype;
}

const textValue = (v: unknown): string => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return /^[^\s"=]+$/.test(s) ? s : JSON.stringify(s);
};

/** `2024-05-01T12:00:00.000Z INFO  message  key=value key="two words"`; the level styled by `color`. */
export function textLine(e: Entry, color: boolean): string {
  const s = styles(color);
  const paint = e.level === "error" ? s.red : e.level === "warn" ? s.yellow : e.level === "debug" ? s.dim : s.cyan;
  const { ts, level, msg, logger: _, stacktrace, ...fields } = e;
  const kv = Object.entries(fields).map(([k, v]) => `${k}=${textValue(v)}`);
  const line = `${ts} ${paint(level.toUpperCase().padEnd(5))} ${msg}${kv.length ? `  ${kv.join(" ")}` : ""}`;
  return stacktrace ? `${line}\n${stacktrace}` : line;
}

export function createLogger(format: LogFormat, level: LogLevelName): ConsolaInstance {
  const debug = level === "debug";
  const color = colorEnabled(process.stderr);
  const write =
    format === "json"
      ? (o: LogObject) => process.stderr.write(`${JSON.stringify(entryOf(o, debug))}\n`)
      : (o: LogObject) => process.stderr.write(`${textLine(entryOf(o, debug), color)}\n`);
  return createConsola({ level: LogLevels[level], defaults: { tag: LOGGER_NAME }, reporters: [{ log: write }] });
}
