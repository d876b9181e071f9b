import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { authHeadersOf, ConfigError, type Selected, TOKEN_FILE_REFRESH_MS } from "./auth.ts";
import { loadConnection } from "./config.ts";

const dir = mkdtempSync(join(tmpdir(), "devctl-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ctx = { name: "test", cluster: "c", user: "u" };
const cluster = { name: "c", server: "https://127.0.0.1:1", skipTLSVerify: false };
const select = (user: Record<string, unknown>): Selected => ({ ctx, cluster, user: { name: "u", ...user } });

/** A kubeconfig with one context "test" whose user is `user` (the kubeconfig's own field names). */
function kubeconfig(name: string, user: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:1", "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user }],
      contexts: [{ name: "test", context: { cluster: "c", user: "u" } }],
      "current-context": "test",
    }),
  );
  return path;
}

/** A plugin that prints an ExecCredential and counts its runs in `<script>.runs`. */
function plugin(name: string, status: Record<string, unknown>): string {
  const script = join(dir, name);
  const credential = JSON.stringify({ apiVersion: "client.authentication.k8s.io/v1", kind: "ExecCredential", status });
  writeFileSync(script, `#!/bin/sh\necho run >> "$0.runs"\necho '${credential}'\n`);
  chmodSync(script, 0o755);
  return script;
}
const runs = async (script: string) => (await Bun.file(`${script}.runs`).text()).trim().split("\n").length;

/** A JWT client-node's OIDC provider accepts as unexpired (it does not check signatures). */
const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
const idToken = `${b64url({ alg: "none" })}.${b64url({ exp: 4_102_444_800 })}.sig`;

describe("credentials from the kubeconfig's user", () => {
  test("a static token, basic auth and no credentials need no library and no I/O", async () => {
    expect(await authHeadersOf(select({ token: "t" }))()).toEqual({ Authorization: "Bearer t" });
    expect(await authHeadersOf(select({ username: "a", password: "b" }))()).toEqual({
      Authorization: `Basic ${btoa("a:b")}`,
    });
    expect(await authHeadersOf(select({}))()).toEqual({});
  });

  test("a token-file is read when the kubeconfig is loaded", async () => {
    writeFileSync(join(dir, "token"), "from-file");
    const conn = loadConnection({ kubeconfig: kubeconfig("tf.kc", { "token-file": join(dir, "token") }) });
    writeFileSync(join(dir, "token"), "changed");
    expect(await conn.authHeaders()).toEqual({ Authorization: "Bearer from-file" });
  });

  test("an exec credential is cached until its expirationTimestamp, then the plugin runs again", async () => {
    let now = Date.parse("2026-12-01T10:00:00Z");
    const script = plugin("expiring.sh", { token: "exec-token", expirationTimestamp: "2026-12-01T10:05:00Z" });
    const headers = authHeadersOf(select({ exec: { command: script, args: [] } }), () => now);
    expect(await headers()).toEqual({ Authorization: "Bearer exec-token" });
    await headers();
    expect(await runs(script)).toBe(1);
    now = Date.parse("2026-12-01T10:05:00Z");
    await headers();
    expect(await runs(script)).toBe(2);
  });

  test("an exec credential without expiry is fetched once; impersonation and a static token apply on top", async () => {
    const script = plugin("forever.sh", { token: "exec-token" });
    const user = { exec: { command: script, args: [] }, impersonateUser: "alice" };
    const headers = authHeadersOf(select(user));
    expect(await headers()).toEqual({ Authorization: "Bearer exec-token", "Impersonate-User": "alice" });
    await headers();
    expect(await runs(script)).toBe(1);
    expect(await authHeadersOf(select({ ...user, token: "static" }))()).toEqual({
      Authorization: "Bearer static",
      "Impersonate-User": "alice",
    });
  });

  test("the kubeconfig's `as` is sent with a static token, basic auth and a client certificate alike", async () => {
    expect(await authHeadersOf(select({ token: "t", impersonateUser: "alice" }))()).toEqual({
      Authorization: "Bearer t",
      "Impersonate-User": "alice",
    });
    expect(await authHeadersOf(select({ username: "u", password: "p", impersonateUser: "alice" }))()).toEqual({
      Authorization: `Basic ${Buffer.from("u:p").toString("base64")}`,
      "Impersonate-User": "alice",
    });
    expect(await authHeadersOf(select({ certData: "c", keyData: "k", impersonateUser: "alice" }))()).toEqual({
      "Impersonate-User": "alice",
    });
    expect(await authHeadersOf(select({ token: "t" }))()).toEqual({ Authorization: "Bearer t" });
  });

  test("a failing exec plugin is a ConfigError naming the context and carrying the plugin's stderr", async () => {
    const script = join(dir, "fails.sh");
    writeFileSync(script, "#!/bin/sh\necho 'login required' >&2\nexit 1\n");
    chmodSync(script, 0o755);
    const err = await authHeadersOf(select({ exec: { command: script } }))().catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('getting credentials for context "test" failed: login required\n');
    const none = await authHeadersOf(select({ exec: { args: [] } }))().catch((e) => e);
    expect(none.message).toContain("No command was specified for exec authProvider!");
  });

  test("the in-cluster token file is re-read after 60 s, as client-node's FileAuth does", async () => {
    const file = join(dir, "sa-token");
    writeFileSync(file, "first");
    let now = 1_000_000;
    const headers = authHeadersOf(
      select({ authProvider: { name: "tokenFile", config: { tokenFile: file } } }),
      () => now,
    );
    expect(await headers()).toEqual({ Authorization: "Bearer first" });
    writeFileSync(file, "rotated");
    now += TOKEN_FILE_REFRESH_MS;
    expect(await headers()).toEqual({ Authorization: "Bearer first" });
    now += 1;
    expect(await headers()).toEqual({ Authorization: "Bearer rotated" });
  });
});

describe("auth providers client-node handles, loaded when first needed", () => {
  test("an oidc user's id-token is sent", async () => {
    const conn = loadConnection({
      kubeconfig: kubeconfig("oidc.kc", { "auth-provider": { name: "oidc", config: { "id-token": idToken } } }),
    });
    expect(await conn.authHeaders()).toEqual({ Authorization: `Bearer ${idToken}` });
  });

  test("an azure user whose token expired fails with client-node's own message", async () => {
    const file = kubeconfig("azure.kc", { "auth-provider": { name: "azure", config: {} } });
    const kc = new KubeConfig();
    kc.loadFromFile(file);
    const library = await kc.applyToHTTPSOptions({}).then(
      () => "no error",
      (e: Error) => e.message,
    );
    expect(library).toBe("Token is expired!");
    const err = await loadConnection({ kubeconfig: file })
      .authHeaders()
      .catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`getting credentials for context "test" failed: ${library}`);
  });
});

describe("what loading evaluates", () => {
  /** Loads a kubeconfig in a fresh process, asks for headers, and counts client-node modules before and after. */
  async function modulesLoaded(file: string): Promise<[number, number]> {
    const script = `
      const { loadConnection } = await import(${JSON.stringify(join(import.meta.dir, "config.ts"))});
      const count = () => Object.keys(require.cache).filter((k) => k.includes("@kubernetes/client-node/dist/")).length;
      const conn = loadConnection({ kubeconfig: ${JSON.stringify(file)} });
      const before = count();
      await conn.authHeaders();
      console.log(JSON.stringify([before, count()]));`;
    const p = Bun.spawnSync([process.execPath, "-e", script], { cwd: import.meta.dir, stderr: "pipe" });
    expect(p.stderr.toString()).toBe("");
    return JSON.parse(p.stdout.toString());
  }

  test("a token user loads only client-node's config_types.js", async () => {
    expect(await modulesLoaded(kubeconfig("light.kc", { token: "t" }))).toEqual([1, 1]);
  });

  test("an oidc user loads the library on its first request, not before", async () => {
    const file = kubeconfig("heavy.kc", { "auth-provider": { name: "oidc", config: { "id-token": idToken } } });
    const [before, after] = await modulesLoaded(file);
    expect(before).toBe(1);
    expect(after).toBeGreaterThan(100);
  });
});
