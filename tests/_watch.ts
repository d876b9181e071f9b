/**
 * A LIST + WATCH of one resource in one namespace that hands every event to a callback, in the API server's
 * order, with the local time it arrived: for suites that judge what happened between events (a child's
 * deletion and re-creation, a status saying Ready in between) or how soon something became visible.
 *
 * Properties:
 * - `watchEvents()` resolves once the initial list was handed over (each item as an ADDED event) and the watch is
 *   open, so nothing that happens afterwards is missed.
 * - A watch the server ends is re-opened from the last resourceVersion; a 410 re-lists (its items again as ADDED,
 *   objects gone since as DELETED with the last version seen). `stop()` ends it.
 * - `at` is performance.now() when the event was read: compare it with performance.now() taken before a request.
 */
import { isGone } from "../src/kube/errors.ts";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { kube } from "./_support.ts";

export interface Seen<T extends KubeObject> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: T;
  at: number;
}

export interface EventWatch {
  stop(): void;
}

export async function watchEvents<T extends KubeObject>(
  rt: ResourceType,
  namespace: string,
  onEvent: (e: Seen<T>) => void,
): Promise<EventWatch> {
  const stop = new AbortController();
  const known = new Map<string, T>();
  let rv = "";
  const hand = (type: Seen<T>["type"], object: T) => {
    const name = object.metadata.name as string;
    if (type === "DELETED") known.delete(name);
    else known.set(name, object);
    onEvent({ type, object, at: performance.now() });
  };
  const relist = async () => {
    const list = await kube.listAll<T>(rt, { namespace });
    const listed = new Set(list.items.map((o) => o.metadata.name as string));
    for (const [name, last] of [...known]) if (!listed.has(name)) hand("DELETED", last);
    for (const o of list.items) hand(known.has(o.metadata.name as string) ? "MODIFIED" : "ADDED", o);
    rv = list.metadata.resourceVersion ?? "";
  };
  const loop = async (opened: () => void) => {
    while (!stop.signal.aborted) {
      try {
        const stream = await kube.watch<T>(rt, {
          namespace,
          resourceVersion: rv,
          allowWatchBookmarks: true,
          timeoutSeconds: 600,
          signal: stop.signal,
        });
        opened();
        for await (const ev of stream) {
          if (ev.type === "ERROR") {
            if (ev.object.code === 410) throw Object.assign(new Error("gone"), { gone: true });
            continue;
          }
          rv = ev.object.metadata.resourceVersion ?? rv;
          if (ev.type !== "BOOKMARK") hand(ev.type, ev.object);
        }
      } catch (e) {
        if (stop.signal.aborted) return;
        if (isGone(e) || (e as { gone?: boolean }).gone) await relist().catch(() => {});
        else await Bun.sleep(200);
      }
    }
  };
  await relist();
  await new Promise<void>((opened, failed) => {
    loop(opened).catch(failed);
  });
  return { stop: () => stop.abort() };
}

/** Requests the operator sent, per HTTP method, from its rest_client_requests_total. */
export function requestsByMethod(metricsText: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metricsText.split("\n")) {
    if (!line.startsWith("rest_client_requests_total{")) continue;
    const method = /method="([^"]+)"/.exec(line)?.[1] ?? "?";
    out[method] = (out[method] ?? 0) + Number(line.split(" ").at(-1));
  }
  return out;
}

/** The writes (every method but GET) between two requestsByMethod() readings, only methods that sent any. */
export function writesBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [method, n] of Object.entries(after)) {
    const d = n - (before[method] ?? 0);
    if (method !== "GET" && d > 0) out[method] = d;
  }
  return out;
}
