/**
 * The auth headers of one kubeconfig user, as `authHeaders()` of a Connection returns them.
 *
 * - Static credentials (token, token-file read at load, basic auth): computed once, no I/O per request.
 * - Exec plugins (`user.exec`) and the in-cluster token file are handled here, as client-node's ExecAuth and
 *   FileAuth do them: an exec credential is cached per connection until its `expirationTimestamp`; the token
 *   file is re-read after 60 s (bound service-account tokens rotate).
 * - Every other `auth-provider` (oidc, azure, gcp, an exec nested in an auth-provider) goes to client-node's
 *   KubeConfig, imported on the first request that needs it: the library's ~900 modules are not evaluated
 *   for users who do not need them (about 24 MiB of idle RSS in the compiled executable).
 * - Every user sends `Impersonate-User` when the kubeconfig says `as`, whatever its credentials (kubectl's
 *   rule; client-node applies it on its own path only); a user's static `token` wins over what a plugin supplies.
 * - Any failure is a ConfigError "getting credentials for context ... failed: <cause>".
 */
import { readFileSync } from "node:fs";
import type { Cluster, Context, User } from "@kubernetes/client-node/dist/config_types.js";

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type Headers = Record<string, string>;

/** The entries of the selected context, as loaded. */
export interface Selected {
  ctx: Context;
  cluster: Cluster;
  user: User | null;
}

/** How the user's credentials are obtained. */
type Source =
  | { kind: "static"; headers: Headers }
  | { kind: "exec"; exec: ExecConfig }
  | { kind: "tokenFile"; path: string }
  | { kind: "library" };

interface ExecConfig {
  command?: string;
  args?: string[];
  env?: { name: string; value: string }[];
}

interface ExecCredential {
  status?: { token?: string; expirationTimestamp?: string };
}

/** client-node's FileAuth re-reads its token file after this long. */
export const TOKEN_FILE_REFRESH_MS = 60_000;

export function sourceOf(user: User | null): Source {
  const provider = user?.authProvider as { name?: string; config?: Record<string, unknown> } | undefined;
  if (provider) {
    const file = provider.config?.tokenFile;
    if (provider.name === "tokenFile" && typeof file === "string" && !provider.config?.exec)
      return { kind: "tokenFile", path: file };
    return { kind: "library" };
  }
  if (user?.exec) return { kind: "exec", exec: user.exec as ExecConfig };
  if (user?.token) return { kind: "static", headers: { Authorization: `Bearer ${user.token}` } };
  if (user?.username) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    return { kind: "static", headers: { Authorization: `Basic ${basic}` } };
  }
  return { kind: "static", headers: {} };
}

/** `authHeaders()` for the selected user; `now` is injectable for the token-file refresh. */
export function authHeadersOf(sel: Selected, now: () => number = Date.now): () => Promise<Headers> {
  const source = sourceOf(sel.user);
  if (source.kind === "static") {
    const as = sel.user?.impersonateUser;
    const headers = as != null ? { ...source.headers, "Impersonate-User": as } : source.headers;
    return async () => ({ ...headers });
  }
  const supply = supplier(source, sel, now);
  const user = sel.user;
  return async () => {
    const headers: Headers = {};
    if (user?.impersonateUser != null) headers["Impersonate-User"] = user.impersonateUser;
    try {
      const token = await supply(headers);
      if (token) headers.Authorization = `Bearer ${token}`;
    } catch (e) {
      throw new ConfigError(`getting credentials for context "${sel.ctx.name}" failed: ${(e as Error).message}`);
    }
    if (user?.token) headers.Authorization = `Bearer ${user.token}`;
    return headers;
  };
}

/** Yields the bearer token of a dynamic source (or fills `headers` itself, for the library). */
function supplier(
  source: Exclude<Source, { kind: "static" }>,
  sel: Selected,
  now: () => number,
): (headers: Headers) => Promise<string | undefined> {
  switch (source.kind) {
    case "tokenFile": {
      let token: string | undefined;
      let readAt = 0;
      return async () => {
        if (token === undefined || now() - readAt > TOKEN_FILE_REFRESH_MS) {
          token = readFileSync(source.path, "utf8");
          readAt = now();
        }
        return token || undefined;
      };
    }
    case "exec": {
      let cached: ExecCredential | undefined;
      return async () => {
        const expires = cached?.status?.expirationTimestamp;
        if (!cached || (expires && !(Date.parse(expires) > now()))) cached = await runExec(source.exec);
        return cached.status?.token || undefined;
      };
    }
    case "library":
      return libraryHeaders(sel);
  }
}

/** Runs an exec credential plugin (client.authentication.k8s.io ExecCredential on stdout). */
export async function runExec(exec: ExecConfig): Promise<ExecCredential> {
  if (!exec.command) throw new Error("No command was specified for exec authProvider!");
  const env = exec.env ? { ...process.env, ...Object.fromEntries(exec.env.map((e) => [e.name, e.value])) } : undefined;
  const { spawn } = await import("node:child_process"); // loaded only for exec users: ~2 MiB of RSS otherwise
  return new Promise((resolve, reject) => {
    const child = spawn(exec.command as string, exec.args ?? [], env ? { env } : {});
    let stdout = "";
    let stderr = "";
    let failed: Error | undefined;
    child.stdout.setEncoding("utf8").on("data", (d: string) => void (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => void (stderr += d));
    child.on("error", (e) => void (failed = e));
    child.on("close", (code) => {
      if (failed) return reject(failed);
      if (code !== 0) return reject(new Error(stderr));
      try {
        resolve(JSON.parse(stdout) as ExecCredential);
      } catch (e) {
        reject(e);
      }
    });
  });
}

interface LibraryKubeConfig {
  loadFromOptions(o: unknown): void;
  applyToHTTPSOptions(o: { headers?: Headers }): Promise<void>;
}

/** client-node's KubeConfig over the selected entries, loaded on first use; it caches and refreshes tokens itself. */
function libraryHeaders(sel: Selected): (headers: Headers) => Promise<undefined> {
  let kc: Promise<LibraryKubeConfig> | undefined;
  return async (headers) => {
    kc ??= import("@kubernetes/client-node").then(({ KubeConfig }) => {
      const one = new KubeConfig() as unknown as LibraryKubeConfig;
      one.loadFromOptions({
        clusters: [sel.cluster],
        users: sel.user ? [sel.user] : [],
        contexts: [sel.ctx],
        currentContext: sel.ctx.name,
      });
      return one;
    });
    const opts: { headers?: Headers } = {};
    await (await kc).applyToHTTPSOptions(opts);
    Object.assign(headers, opts.headers);
    return undefined;
  };
}
