/**
 * TEST DOUBLE — imported by *.test.ts files only, never by shipped code.
 *
 * An API server in memory behind the real REST client (kube/client.ts `clientFromTransport`), so a test
 * sees the HTTP actions a KubeClient call becomes, sample-controller style:
 * - Recorded: every request is an `Action` (method, path without query, query, content type, body).
 * - Stored by path: GET answers the object or a 404 Status; a GET with a labelSelector on a collection path
 *   lists the objects stored under it whose labels match its `k=v` terms (and fields, a fieldSelector's).
 * - Every create (POST, or an apply of a missing object) sets uid, resourceVersion, generation 1 and
 *   creationTimestamp (from `now`, whole seconds as the API server writes it).
 * - Server-side apply (PATCH application/apply-patch+yaml) creates a missing object or merges the intent into the
 *   stored one; a metadata.uid in the intent must be the object's, answered as the API server does: 409 Conflict
 *   ("uid mismatch") when the object is missing, 422 Invalid (metadata.uid "field is immutable") when it has another
 *   uid; a metadata.resourceVersion is one on an existing object (409 when it differs) and ignored on a create,
 *   as the API server does.
 *   Field ownership is not modelled: tests assert the `force` query themselves.
 * - JSON merge patch (RFC 7386) on an object or on its /status subresource (which touches status only); a
 *   metadata.resourceVersion in it is a precondition (409 Conflict when it differs), as on the API server;
 *   JSON patch (RFC 6902) `test`, `replace` and `remove` (a failed test is a 422);
 *   POST records an Update managedFields entry of its fieldManager (what ownership.ts hands over);
 *   POST creates (409 AlreadyExists when present); PUT replaces; DELETE removes (409 Conflict when its
 *   preconditions' uid or resourceVersion differ from the object's).
 * - Every kind has a status subresource, as every kind the operator writes does: a create stores no status, a write
 *   of the object keeps the stored one (what either says of the status is ignored).
 * - Every write to an existing object (apply, patch, PUT) is stored as the API server stores it: the generation one
 *   more when the spec changed (never on a status write); a write that changes nothing stores nothing and keeps the
 *   resourceVersion. A PUT must name the object's resourceVersion (422 without, as for a custom resource; built-in
 *   kinds also take an unconditional one, which nothing here sends; 409 when it differs).
 * - Checked against kube-apiserver: tests/fake-apiserver-conformance.test.ts sends the same requests to both and
 *   compares the answers (code, reason, causes, the words of the message that matter, generation, resourceVersion).
 * - Scripted failures: `answer` may return `{ code, message }` for an action, which then fails with that
 *   Status. Failures reach the caller translated by kube/errors.ts, as real answers are.
 * - Mutating admission: `admit`, when set, rewrites every object a create, apply, patch or replace stores (not a
 *   status write), as a mutating webhook or MutatingAdmissionPolicy does; the answer is the rewritten object.
 */
import { clientFromTransport, resourcePath } from "../kube/client.ts";
import { fromResponse } from "../kube/errors.ts";
import type { Transport, TransportRequest } from "../kube/transport.ts";
import type { KubeClient, KubeObject, ObjectMeta, ResourceType, Status } from "../kube/types.ts";

export interface Action {
  method: string;
  /** Without the query, e.g. /apis/apps/v1/namespaces/default/deployments/web-deployment */
  path: string;
  query: Record<string, string>;
  /** Set when the request has a body. */
  contentType: string | undefined;
  body: unknown;
}

export interface Failure {
  code: number;
  message: string;
}

export interface FakeApiServer {
  /** The real REST client, talking to this server. */
  readonly client: KubeClient;
  /** Every request, in order. */
  readonly actions: Action[];
  /** Stores an object as if created earlier (uid and resourceVersion filled in when absent); returns it. */
  put<T extends { metadata: ObjectMeta }>(rt: ResourceType, obj: T): T;
  /** The stored object, if any. */
  object(rt: ResourceType, namespace: string, name: string): KubeObject | undefined;
  /** Return a Failure to make that request fail. */
  answer: ((a: Action) => Failure | undefined) | undefined;
  /** Rewrites what a write of an object (not of its status) stores, as mutating admission does. */
  admit: ((obj: KubeObject) => KubeObject) | undefined;
}

const SERVER = "https://fake-apiserver";
const REASONS: Record<number, string> = {
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  422: "Invalid",
  500: "InternalError",
};

class Answer {
  constructor(
    readonly code: number,
    readonly message: string,
    readonly reason = REASONS[code] ?? "Unknown",
    readonly causes?: { field: string; reason: string; message: string }[],
  ) {}
  status(): Status {
    return {
      kind: "Status",
      apiVersion: "v1",
      status: "Failure",
      message: this.message,
      reason: this.reason,
      code: this.code,
      ...(this.causes ? { details: { causes: this.causes } } : {}),
    };
  }
}

export function createFakeApiServer(namespace = "default", now: () => number = Date.now): FakeApiServer {
  const objects = new Map<string, KubeObject>();
  const created = () => `${new Date(now()).toISOString().slice(0, 19)}Z`;
  const actions: Action[] = [];
  let counter = 100;
  const clone = <T>(x: T): T => structuredClone(x);
  const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1);

  const terms = (selector = "") => (selector ? selector.split(",").map((t) => t.split("=") as [string, string]) : []);
  /** A field selector's dotted path ("involvedObject.name") in an object. */
  const field = (o: unknown, path: string): unknown =>
    path.split(".").reduce<unknown>((x, k) => (x as Record<string, unknown> | undefined)?.[k], o);

  /**
   * The objects stored directly under a collection path whose labels have every `k=v` of the label selector and
   * whose fields have every `path=v` of the field selector.
   */
  function list(path: string, labelSelector?: string, fieldSelector?: string): unknown {
    const items = [...objects]
      .filter(([p]) => p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes("/"))
      .map(([, o]) => o)
      .filter((o) => terms(labelSelector).every(([k, v]) => o.metadata.labels?.[k] === v))
      .filter((o) => terms(fieldSelector).every(([k, v]) => field(o, k) === v));
    return { kind: "List", apiVersion: "v1", metadata: { resourceVersion: String(counter) }, items: clone(items) };
  }

  /** The API server's answer to a write whose resourceVersion precondition is not the object's. */
  const modified = (key: string) =>
    new Answer(
      409,
      `Operation cannot be fulfilled on "${nameOf(key)}": the object has been modified; please apply your changes to the latest version and try again`,
    );

  function serve(a: Action): unknown {
    const sub = a.path.endsWith("/status") ? "status" : undefined;
    const key = sub ? a.path.slice(0, -"/status".length) : a.path;
    const cur = objects.get(key);
    const missing = () => new Answer(404, `"${nameOf(key)}" not found`);
    const body = (a.body ?? {}) as KubeObject;
    switch (`${a.method} ${a.contentType ?? ""}`) {
      case "GET ":
        if (!cur && (a.query.labelSelector ?? a.query.fieldSelector) !== undefined)
          return list(a.path, a.query.labelSelector, a.query.fieldSelector);
        if (!cur) throw missing();
        return cur;
      case "PATCH application/apply-patch+yaml": {
        const { uid, ...meta } = body.metadata ?? {};
        if (uid !== undefined && !cur)
          throw new Answer(
            409,
            `Operation cannot be fulfilled on "${nameOf(key)}": uid mismatch: the provided object specified uid ${uid}, and no existing object was found`,
          );
        if (uid !== undefined && cur && uid !== cur.metadata.uid) {
          const why = `Invalid value: "${uid}": field is immutable`;
          throw new Answer(422, `"${nameOf(key)}" is invalid: metadata.uid: ${why}`, "Invalid", [
            { field: "metadata.uid", reason: "FieldValueInvalid", message: why },
          ]);
        }
        if (cur && meta.resourceVersion !== undefined && meta.resourceVersion !== cur.metadata.resourceVersion)
          throw modified(key);
        const { status: _ignored, ...intent } = body;
        if (!cur)
          return store(key, {
            ...intent,
            metadata: {
              ...meta,
              uid: `uid-${++counter}`,
              resourceVersion: String(counter),
              generation: 1,
              creationTimestamp: created(),
            },
          });
        return update(key, cur, mergePatch(cur, { ...intent, metadata: meta }) as KubeObject);
      }
      case "PATCH application/merge-patch+json": {
        if (!cur) throw missing();
        const rv = body.metadata?.resourceVersion;
        if (rv !== undefined && rv !== cur.metadata.resourceVersion) throw modified(key);
        const patch = sub ? { status: (body as { status?: unknown }).status } : body;
        return update(key, cur, mergePatch(cur, patch) as KubeObject, sub);
      }
      case "PATCH application/json-patch+json": {
        if (!cur) throw missing();
        return update(key, cur, jsonPatch(cur, body as unknown as JsonPatchOp[], nameOf(key)));
      }
      case "POST application/json": {
        const path = `${a.path}/${body.metadata.name}`;
        if (objects.has(path)) throw new Answer(409, `"${body.metadata.name}" already exists`, "AlreadyExists");
        const manager = a.query.fieldManager;
        const { status: _dropped, ...object } = body;
        return store(path, {
          ...object,
          metadata: {
            ...body.metadata,
            uid: `uid-${++counter}`,
            resourceVersion: String(counter),
            generation: 1,
            creationTimestamp: created(),
            ...(manager ? { managedFields: [{ manager, operation: "Update" }] } : {}),
          },
        });
      }
      case "PUT application/json": {
        if (!cur) throw missing();
        const rv = body.metadata?.resourceVersion;
        if (rv === undefined) {
          const why = "Invalid value: 0: must be specified for an update";
          throw new Answer(422, `"${nameOf(key)}" is invalid: metadata.resourceVersion: ${why}`, "Invalid", [
            { field: "metadata.resourceVersion", reason: "FieldValueInvalid", message: why },
          ]);
        }
        if (rv !== cur.metadata.resourceVersion) throw modified(key);
        return update(key, cur, body);
      }
      case "DELETE ":
      case "DELETE application/json": {
        if (!cur) throw missing();
        const pre = (body as { preconditions?: { uid?: string; resourceVersion?: string } }).preconditions ?? {};
        for (const field of ["uid", "resourceVersion"] as const) {
          const want = pre[field];
          if (want !== undefined && want !== cur.metadata[field])
            throw new Answer(
              409,
              `Operation cannot be fulfilled on "${nameOf(key)}": the ${field === "uid" ? "UID" : "ResourceVersion"} in the precondition (${want}) does not match the ${field === "uid" ? "UID" : "ResourceVersion"} in record (${cur.metadata[field] ?? ""}). ${field === "uid" ? "The object might have been deleted and then recreated" : "The object might have been modified"}`,
            );
        }
        objects.delete(key);
        return { kind: "Status", status: "Success" };
      }
      default:
        throw new Error(`fake API server: no answer for ${a.method} ${a.path} (${a.contentType})`);
    }
  }

  /**
   * A write to the existing object `cur` (`sub`: its status subresource) that makes it `next`, as the API server
   * stores it: a write of the object keeps the stored status (what it says of the status is ignored) and is admitted;
   * the generation one more when the spec changed (a status write never changes it); when nothing changed, nothing is
   * written and the resourceVersion stays.
   */
  function update(key: string, cur: KubeObject, next: KubeObject, sub?: "status"): KubeObject {
    const written: KubeObject = sub ? next : { ...next, status: cur.status };
    if (written.status === undefined) delete written.status;
    const admitted = !sub && api.admit ? api.admit(clone(written)) : written;
    const bumped = !sub && !same(admitted.spec, cur.spec);
    const meta: ObjectMeta = { ...admitted.metadata, resourceVersion: cur.metadata.resourceVersion };
    if (bumped || cur.metadata.generation !== undefined)
      meta.generation = (cur.metadata.generation ?? 1) + (bumped ? 1 : 0);
    const candidate = { ...admitted, metadata: meta };
    if (same(candidate, cur)) return cur;
    return store(key, { ...candidate, metadata: { ...meta, resourceVersion: String(++counter) } }, false);
  }

  function store(key: string, obj: KubeObject, admitted = true): KubeObject {
    const final = admitted && api.admit ? api.admit(clone(obj)) : obj;
    objects.set(key, clone(final));
    return final;
  }

  const transport: Transport = {
    server: SERVER,
    context: "fake",
    send() {
      return Promise.reject(new Error("fake API server: streaming requests (watch) are not served"));
    },
    async json<T>(req: TransportRequest): Promise<T> {
      const [path = "", query = ""] = req.path.split("?");
      const hasBody = req.body !== undefined;
      const action: Action = {
        method: req.method,
        path,
        query: Object.fromEntries(new URLSearchParams(query)),
        contentType: hasBody ? (req.contentType ?? "application/json") : undefined,
        body: hasBody ? clone(req.body) : undefined,
      };
      actions.push(action);
      try {
        const scripted = api.answer?.(clone(action));
        if (scripted) throw new Answer(scripted.code, scripted.message);
        return clone(serve(action)) as T;
      } catch (e) {
        if (!(e instanceof Answer)) throw e;
        throw fromResponse(e.code, e.status(), { method: req.method, path, server: SERVER, context: "fake" }, query);
      }
    },
  };

  const api: FakeApiServer = {
    client: clientFromTransport(transport, namespace),
    actions,
    answer: undefined,
    admit: undefined,
    put(rt, obj) {
      const stored = {
        ...clone(obj),
        metadata: { uid: `uid-${++counter}`, resourceVersion: String(counter), ...clone(obj.metadata) },
      };
      objects.set(
        resourcePath(rt, obj.metadata.namespace ?? namespace, obj.metadata.name),
        stored as unknown as KubeObject,
      );
      return clone(stored);
    },
    object(rt, ns, name) {
      const o = objects.get(resourcePath(rt, ns, name));
      return o && clone(o);
    },
  };
  return api;
}

type JsonPatchOp = { op: string; path: string; value?: unknown };

/** RFC 6902, the `test` and `replace` operations (what the reconciler sends); a failed test is a 422. */
function jsonPatch(target: KubeObject, ops: JsonPatchOp[], name: string): KubeObject {
  const out = structuredClone(target) as unknown as Record<string, unknown>;
  for (const { op, path, value } of ops) {
    const keys = path.slice(1).split("/");
    const last = keys.pop() ?? "";
    const parent = keys.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], out) as
      | Record<string, unknown>
      | undefined;
    if (!parent || !(last in parent))
      throw new Answer(422, `"${name}": the server rejected our request: ${path} does not exist`);
    if (op === "test" && JSON.stringify(parent[last]) !== JSON.stringify(value))
      throw new Answer(422, `"${name}": the server rejected our request: test failed at ${path}`);
    else if (op === "replace") parent[last] = structuredClone(value);
    else if (op === "remove" && Array.isArray(parent)) parent.splice(Number(last), 1);
    else if (op === "remove") delete parent[last];
    else if (op !== "test") throw new Error(`fake API server: JSON patch op ${op} is not modelled`);
  }
  return out as unknown as KubeObject;
}

/** RFC 7386: objects merge key by key, null deletes, anything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isRecord(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isRecord(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v !== undefined) out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Equal as the API server compares what it would store: the same JSON, keys in any order. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (!isRecord(a) || !isRecord(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => same(a[k], b[k]));
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
