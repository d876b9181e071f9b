/**
 * The logging interface runtime parts accept. consola's instances fit it as they are; so does
 * `console`. The runtime never configures a logger: the caller passes one (tagged as it likes).
 * Convention: the first argument is a complete human sentence; an Error, if any, comes after it;
 * structured fields, if any, are a trailing plain object.
 *
 * Log context: fields that belong to every line written while some work runs (controller-runtime's
 * `controller`, `namespace`, `name`, `reconcileID` of one reconcile), carried by AsyncLocalStorage so that
 * every line of that work, in any module, has them without passing a logger around. A reporter reads them
 * with `logContext()`.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface Logger {
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
}

export interface LogContext {
  controller?: string;
  namespace?: string;
  name?: string;
  reconcileID?: string;
}

const context = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `fields` added to the log context of every line it writes (also after awaits). */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

/** The log context of the running work, if any. */
export const logContext = (): LogContext | undefined => context.getStore();

/** The context of one reconcile of `key` ("namespace/name" or "name") by `controller`, with a fresh reconcileID. */
export function reconcileContext(controller: string, key: string): LogContext {
  const slash = key.indexOf("/");
  return {
    controller,
    ...(slash >= 0 ? { namespace: key.slice(0, slash), name: key.slice(slash + 1) } : { name: key }),
    reconcileID: crypto.randomUUID(),
  };
}
