/**
 * `createKubeClient` implements the KubeClient contract (types.ts) over the Bun-native transport.
 *
 * - URLs are built from a ResourceType (group/version/plural, namespaced or not).
 * - `listAll` follows `continue` tokens with `limit` 500 and keeps the first page's resourceVersion.
 * - `watch` parses the newline-delimited JSON stream as it arrives; an HTTP error when opening
 *   rejects with a translated KubeError (a 410 has reason "Gone"); a broken stream throws from the iterator.
 * - `apply` is server-side apply; JSON is valid YAML, so the body is the object as JSON.
 * - `patch` with `discardResponse` resolves to undefined and leaves the answer unparsed (for writes whose result
 *   the caller never reads, like a status patch).
 */
import { loadConnection, type LoadOptions } from "./config.ts";
import { fromResponse, fromNetworkError } from "./errors.ts";
import { createTransport, type Transport, type TransportOptions } from "./transport.ts";
import type {
  ApplyOptions,
  KubeClient,
  KubeList,
  KubeObject,
  ListOptions,
  PatchOptions,
  PatchType,
  ResourceType,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from "./types.ts";

export const PAGE_SIZE = 500;

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

/** Path of a collection or of one object (and optional subresource). */
export function resourcePath(rt: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = rt.group ? `/apis/${rt.group}/${rt.version}` : `/api/${rt.version}`;
  const ns = rt.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const obj = name ? `/${encodeURIComponent(name)}` : "";
  return `${base}${ns}/${rt.plural}${obj}${subresource && name ? `/${subresource}` : ""}`;
}

function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "") q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

export interface ClientOptions extends LoadOptions, TransportOptions {}

export function createKubeClient(opts: ClientOptions = {}): KubeClient {
  const conn = loadConnection(opts);
  return clientFromTransport(createTransport(conn, opts), conn.namespace);
}

export function clientFromTransport(t: Transport, namespace: string): KubeClient {
  const nsOf = (rt: ResourceType, obj: KubeObject) =>
    rt.namespaced ? (obj.metadata.namespace ?? namespace) : undefined;
  const writeQuery = (o?: WriteOptions, extra: Record<string, string | boolean | undefined> = {}) =>
    query({ dryRun: o?.dryRun ? "All" : undefined, fieldManager: o?.fieldManager, ...extra });

  const list: List = (rt, o) => listPage(t, rt, o);

  return {
    server: t.server,
    context: t.context,
    namespace,

    get: (rt, name, ns, signal) => t.json({ method: "GET", path: resourcePath(rt, ns ?? namespace, name), signal }),

    list,

    listAll: (rt, o) => listAllPages(list, rt, o),

    watch: (rt, o) => openWatch(t, rt, o),

    create: (rt, obj, o) =>
      t.json({ method: "POST", path: resourcePath(rt, nsOf(rt, obj)) + writeQuery(o), body: obj, signal: o?.signal }),

    replace: (rt, obj, o) =>
      t.json({
        method: "PUT",
        path: resourcePath(rt, nsOf(rt, obj), obj.metadata.name) + writeQuery(o),
        body: obj,
        signal: o?.signal,
      }),

    replaceStatus: (rt, obj, o) =>
      t.json({
        method: "PUT",
        path: resourcePath(rt, nsOf(rt, obj), obj.metadata.name, "status") + writeQuery(o),
        body: obj,
        signal: o?.signal,
      }),

    patch: <T>(
      rt: ResourceType,
      name: string,
      ns: string | undefined,
      body: unknown,
      type: PatchType,
      o?: PatchOptions,
    ) => patchObject<T>(t, rt, name, ns ?? namespace, body, type, o),

    apply: (rt, obj, o: ApplyOptions & { subresource?: string }) =>
      t.json({
        method: "PATCH",
        path:
          resourcePath(rt, nsOf(rt, obj), obj.metadata.name, o.subresource) +
          writeQuery(o, { force: o.force ? true : undefined }),
        body: obj,
        contentType: "application/apply-patch+yaml",
        signal: o.signal,
      }),

    async delete(rt, name, ns, o = {}) {
      const path = resourcePath(rt, ns ?? namespace, name) + query({ dryRun: o.dryRun ? "All" : undefined });
      const { propagationPolicy, preconditions } = o;
      // With a DeleteOptions body the API server reads dryRun from the body, not the query: say it in both.
      const body =
        propagationPolicy || preconditions
          ? {
              kind: "DeleteOptions",
              apiVersion: "v1",
              ...(propagationPolicy ? { propagationPolicy } : {}),
              ...(preconditions ? { preconditions } : {}),
              ...(o.dryRun ? { dryRun: ["All"] } : {}),
            }
          : undefined;
      await t.json({ method: "DELETE", path, body, signal: o.signal });
    },

    raw: (method, path, body, contentType, signal) => t.json({ method, path, body, contentType, signal }),
  };
}

/** PATCH of an object or subresource; with `discardResponse` resolves to undefined, leaving the answer unparsed. */
function patchObject<T>(
  t: Transport,
  rt: ResourceType,
  name: string,
  namespace: string,
  patch: unknown,
  type: PatchType,
  o?: PatchOptions,
): Promise<T> {
  const sent = t.json<T>({
    method: "PATCH",
    path:
      resourcePath(rt, namespace, name, o?.subresource) +
      query({ dryRun: o?.dryRun ? "All" : undefined, fieldManager: o?.fieldManager }),
    body: patch,
    contentType: PATCH_CONTENT_TYPES[type],
    signal: o?.signal,
    discardBody: o?.discardResponse,
  });
  return o?.discardResponse ? sent.then(() => undefined as T) : sent;
}

type List = <T extends KubeObject>(rt: ResourceType, o?: ListOptions) => Promise<KubeList<T>>;

/** One page of a LIST. */
function listPage<T extends KubeObject>(t: Transport, rt: ResourceType, o: ListOptions = {}): Promise<KubeList<T>> {
  const { labelSelector, fieldSelector, limit, continue: cont, resourceVersion } = o;
  const path =
    resourcePath(rt, o.namespace) + query({ labelSelector, fieldSelector, limit, continue: cont, resourceVersion });
  return t.json<KubeList<T>>({ method: "GET", path, signal: o.signal });
}

/** Every page of a LIST (`limit` PAGE_SIZE unless given), with the first page's resourceVersion. */
async function listAllPages<T extends KubeObject>(list: List, rt: ResourceType, o: ListOptions = {}) {
  const first = await list<T>(rt, { ...o, limit: o.limit ?? PAGE_SIZE });
  const items = [...first.items];
  for (let cont = first.metadata.continue; cont; ) {
    const page = await list<T>(rt, { ...o, limit: o.limit ?? PAGE_SIZE, continue: cont, resourceVersion: undefined });
    items.push(...page.items);
    cont = page.metadata.continue;
  }
  return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
}

/** Opens a WATCH; an HTTP error rejects with the translated KubeError (410: reason "Gone"). */
async function openWatch<T extends KubeObject>(t: Transport, rt: ResourceType, o: WatchOptions) {
  const path =
    resourcePath(rt, o.namespace) +
    query({
      watch: 1,
      resourceVersion: o.resourceVersion,
      allowWatchBookmarks: o.allowWatchBookmarks,
      timeoutSeconds: o.timeoutSeconds,
      labelSelector: o.labelSelector,
      fieldSelector: o.fieldSelector,
    });
  const res = await t.send({ method: "GET", path, signal: o.signal, timeoutMs: 0 });
  const req = { method: "GET", path: path.split("?")[0] ?? path, server: t.server, context: t.context };
  if (!res.ok || !res.body) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw fromResponse(res.status, body, req, "watch=1");
  }
  return readWatchStream<T>(res.body, o.signal, req);
}

/** Yields one WatchEvent per JSON line; ends quietly when the server closes or the signal aborts. */
async function* readWatchStream<T extends KubeObject>(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
  req: { method: string; path: string; server: string; context: string },
): AsyncGenerator<WatchEvent<T>> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    while (true) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (e) {
        if (signal?.aborted) return;
        throw fromNetworkError(e, req);
      }
      if (chunk.done) break;
      buf += decoder.decode(chunk.value, { stream: true });
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) yield JSON.parse(line) as WatchEvent<T>;
      }
    }
    const rest = buf.trim();
    if (rest) yield JSON.parse(rest) as WatchEvent<T>;
  } finally {
    reader.releaseLock();
    if (!signal?.aborted) await body.cancel().catch(() => {});
  }
}
