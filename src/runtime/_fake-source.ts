/**
 * Test doubles for runtime tests only: an event source driven by hand and a logger that records lines.
 * Never imported by shipped code.
 */
import type { Logger } from "./logger.ts";
import type { EventSource, SourceEvent } from "./source.ts";

export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const at = (level: string) => (message: string) => void lines.push(`${level}: ${message}`);
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

export function fakeSource<T>(items: T[] = [], synced = true) {
  const handlers = new Set<(e: SourceEvent<T>) => void>();
  let isSynced = synced;
  const source: EventSource<T> & { emit(e: SourceEvent<T>): void; setSynced(v: boolean): void; subscribers(): number } =
    {
      onEvent(h) {
        handlers.add(h);
        return () => void handlers.delete(h);
      },
      hasSynced: () => isSynced,
      list: () => items,
      emit: (e) => {
        for (const h of handlers) h(e);
      },
      setSynced: (v) => void (isSynced = v),
      subscribers: () => handlers.size,
    };
  return source;
}
