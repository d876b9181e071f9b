/**
 * The logging interface runtime parts accept. consola's instances fit it as they are; so does
 * `console`. The runtime never configures a logger: the caller passes one (tagged as it likes).
 * Convention: the first argument is a complete human sentence; an Error, if any, comes after it.
 */
export interface Logger {
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
}
