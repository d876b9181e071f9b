/**
 * Every failure of a Kubernetes call becomes one `KubeError`, translated here and nowhere else.
 *
 * - `reason` is what callers branch on: NotFound, AlreadyExists, Conflict, Gone (410: resourceVersion
 *   too old, re-list), Forbidden, Unauthorized, Invalid, Unreachable (no HTTP answer), Timeout, Other.
 * - `message` is written for a person: Forbidden names the verb and resource, Unreachable names the
 *   server and context, Invalid lists the offending fields.
 */
import type { Status } from "./types.ts";

export type KubeErrorReason =
  | "NotFound"
  | "AlreadyExists"
  | "Conflict"
  | "Gone"
  | "Forbidden"
  | "Unauthorized"
  | "Invalid"
  | "Unreachable"
  | "Timeout"
  | "Other";

export class KubeError extends Error {
  override readonly name = "KubeError";
  constructor(
    readonly reason: KubeErrorReason,
    message: string,
    /** HTTP status; 0 when no response arrived. */
    readonly code: number,
    readonly status?: Status,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The words of anything thrown: an Error's message, or the value as a string (for a log line or a status message). */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export const isNotFound = (e: unknown): boolean => e instanceof KubeError && e.reason === "NotFound";
export const isConflict = (e: unknown): boolean => e instanceof KubeError && e.reason === "Conflict";
export const isAlreadyExists = (e: unknown): boolean => e instanceof KubeError && e.reason === "AlreadyExists";
export const isGone = (e: unknown): boolean => e instanceof KubeError && e.reason === "Gone";
export const isForbidden = (e: unknown): boolean => e instanceof KubeError && e.reason === "Forbidden";
export const isInvalid = (e: unknown): boolean => e instanceof KubeError && e.reason === "Invalid";

/** What the request was, so a message can name it. */
export interface RequestDescription {
  method: string;
  /** Path without the query, e.g. /apis/apps/v1/namespaces/x/deployments. */
  path: string;
  server: string;
  context: string;
}

const VERBS: Record<string, string> = { GET: "get", POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };

/** Describes the Kubernetes verb and resource of a request path, e.g. `list deployments.apps in namespace "x"`. */
export function describeRequest(method: string, path: string, query = ""): string {
  const parts = path.split("/").filter(Boolean);
  let group = "";
  let rest: string[];
  if (parts[0] === "api") rest = parts.slice(2);
  else if (parts[0] === "apis") {
    group = parts[1] ?? "";
    rest = parts.slice(3);
  } else return `${method} ${path}`;
  let namespace: string | undefined;
  if (rest[0] === "namespaces" && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [resource = "", name, sub] = rest;
  let verb = VERBS[method] ?? method.toLowerCase();
  if (method === "GET" && name === undefined) verb = /(^|&)watch=(1|true)/.test(query) ? "watch" : "list";
  if (method === "DELETE" && name === undefined) verb = "deletecollection";
  const res = `${resource}${sub ? `/${sub}` : ""}${group ? `.${group}` : ""}`;
  const scope = namespace ? ` in namespace "${namespace}"` : "";
  return `${verb} ${res}${name ? ` "${name}"` : ""}${scope}`;
}

const REASON_BY_CODE: Record<number, KubeErrorReason> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  410: "Gone",
  422: "Invalid",
  504: "Timeout",
};

/** Translates an HTTP error answer (with its Status body, if any) into a KubeError. */
export function fromResponse(code: number, body: unknown, req: RequestDescription, query = ""): KubeError {
  const status = isStatus(body) ? body : undefined;
  const what = describeRequest(req.method, req.path, query);
  let reason: KubeErrorReason = REASON_BY_CODE[code] ?? "Other";
  if (code === 409) reason = status?.reason === "AlreadyExists" ? "AlreadyExists" : "Conflict";
  if (status?.reason === "Expired" || status?.reason === "Gone") reason = "Gone";
  const serverMessage = status?.message ?? (typeof body === "string" && body ? body.slice(0, 300) : `HTTP ${code}`);
  let message: string;
  switch (reason) {
    case "Forbidden": {
      // The API server names the verb it checked (server-side apply of a new object checks "create",
      // not "patch"): prefer its verb over the one guessed from the HTTP method.
      const checked = /cannot (\w+) resource/.exec(serverMessage)?.[1];
      const described = checked ? what.replace(/^\S+/, checked) : what;
      message =
        `forbidden: cannot ${described} (${serverMessage}). ` +
        `Grant this permission to the identity in use (context "${req.context || "in-cluster"}").`;
      break;
    }
    case "Unauthorized":
      message =
        `unauthorized at ${req.server}: the credentials of context "${req.context || "in-cluster"}" were rejected ` +
        "(expired token or wrong certificate?). Refresh them and try again.";
      break;
    case "Invalid": {
      const causes = status?.details?.causes
        ?.map((c) => `${c.field ?? "?"}: ${c.message ?? c.reason ?? ""}`)
        .join("; ");
      message = `invalid: ${what}: ${causes || serverMessage}`;
      break;
    }
    default:
      message = `${what}: ${serverMessage}`;
  }
  return new KubeError(reason, message, code, status);
}

/** Translates a failure to get any answer (refused, DNS, TLS, reset) into an Unreachable KubeError. */
export function fromNetworkError(cause: unknown, req: RequestDescription): KubeError {
  // Bun's messages often start with their code already ("ECONNREFUSED: Unable to connect...").
  const code = (cause as { code?: unknown } | undefined)?.code;
  const text = messageOf(cause);
  const detail = typeof code === "string" && code && !text.startsWith(code) ? `${code}: ${text}` : text;
  const ctx = req.context ? ` (context "${req.context}")` : " (in-cluster)";
  return new KubeError(
    "Unreachable",
    `cannot reach the Kubernetes API server at ${req.server}${ctx}: ${detail}${/[.?!]$/.test(detail) ? "" : "."} ` +
      "Check that the cluster is running and that your kubeconfig points at it.",
    0,
    undefined,
    { cause },
  );
}

function isStatus(body: unknown): body is Status {
  return typeof body === "object" && body !== null && (body as Status).kind === "Status";
}
