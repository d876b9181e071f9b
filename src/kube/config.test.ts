import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makePki } from "./_test-pki.ts";
import { loadConnection, SERVICE_ACCOUNT_DIR } from "./config.ts";

const dir = mkdtempSync(join(tmpdir(), "devctl-kubeconfig-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A kubeconfig with one cluster, user and context each; `current` sets current-context. */
function file(name: string, o: { cluster: string; server: string; context: string; ns: string; current?: string }) {
  const path = join(dir, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: o.cluster, cluster: { server: o.server, "insecure-skip-tls-verify": true } }],
      users: [{ name: `${o.cluster}-user`, user: { token: `token-of-${name}` } }],
      contexts: [{ name: o.context, context: { cluster: o.cluster, user: `${o.cluster}-user`, namespace: o.ns } }],
      ...(o.current ? { "current-context": o.current } : {}),
    }),
  );
  return path;
}

const a = file("a.kc", {
  cluster: "shared",
  server: "https://a.example:6443",
  context: "ctx-a",
  ns: "ns-a",
  current: "ctx-a",
});
const b = file("b.kc", {
  cluster: "shared",
  server: "https://b.example:6443",
  context: "team-a",
  ns: "team-a",
  current: "team-a",
});
const c = file("c.kc", { cluster: "only-c", server: "https://c.example:6443", context: "ctx-c", ns: "ns-c" });
const env = (KUBECONFIG: string) => ({ KUBECONFIG, HOME: dir });

describe("KUBECONFIG as kubectl reads it", () => {
  test("a list is merged: the first file defining a cluster wins, and current-context comes from the first that sets one", async () => {
    const conn = loadConnection({ env: env(`${a}:${b}`) });
    expect(conn.context).toBe("ctx-a");
    expect(conn.server).toBe("https://a.example:6443");
    // team-a (from b) names the cluster "shared", which a.kc defined first.
    const teamA = loadConnection({ env: env(`${a}:${b}`), context: "team-a" });
    expect(teamA.server).toBe("https://a.example:6443");
    expect(teamA.namespace).toBe("team-a");
    expect(await teamA.authHeaders()).toEqual({ Authorization: "Bearer token-of-a.kc" });
  });

  test("a file without current-context leaves it to a later one", () => {
    expect(loadConnection({ env: env(`${c}:${b}`) }).context).toBe("team-a");
    expect(loadConnection({ env: env(`${c}:${b}`), context: "ctx-c" }).server).toBe("https://c.example:6443");
  });

  test("missing files in the list are skipped, duplicates read once", () => {
    expect(loadConnection({ env: env(`/nope:${b}::${b}`) }).context).toBe("team-a");
  });

  test("a list of only missing files names them", () => {
    expect(() => loadConnection({ env: env("/nope:/also-nope") })).toThrow(
      "none of the files in KUBECONFIG exists (/nope, /also-nope)",
    );
  });

  test("--kubeconfig is one file, read alone, and must exist", () => {
    expect(loadConnection({ env: env(`${a}:${b}`), kubeconfig: b }).server).toBe("https://b.example:6443");
    expect(() => loadConnection({ env: env(a), kubeconfig: `${a}:${b}` })).toThrow("does not exist");
    expect(() => loadConnection({ env: env(a), kubeconfig: "/nope" })).toThrow("kubeconfig /nope does not exist");
  });

  test("a context no file defines is named with the known ones", () => {
    expect(() => loadConnection({ env: env(`${a}:${c}`), context: "prod" })).toThrow(
      `context "prod" is not in kubeconfig ${a}:${c}; known contexts: ctx-a, ctx-c.`,
    );
  });
});

describe("entries as client-node normalises them", () => {
  test("relative certificate-authority paths are read from the kubeconfig's folder", () => {
    const sub = join(dir, "rel");
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, "ca.crt"), "not PEM");
    const path = join(sub, "rel.kc");
    writeFileSync(
      path,
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://r.example", "certificate-authority": "ca.crt" } }],
        contexts: [{ name: "r", context: { cluster: "c" } }],
        "current-context": "r",
      }),
    );
    // Read from the right place: the error names the absolute path of the file that is not PEM.
    expect(() => loadConnection({ kubeconfig: path })).toThrow(`certificate-authority ${join(sub, "ca.crt")} of`);
  });

  test("an entry without its required field is refused with client-node's message", () => {
    const path = join(dir, "noserver.kc");
    writeFileSync(path, JSON.stringify({ clusters: [{ name: "c", cluster: {} }] }));
    expect(() => loadConnection({ kubeconfig: path })).toThrow(
      `kubeconfig ${path} cannot be read: clusters[0].cluster.server is missing. Fix the file`,
    );
  });

  test("in-cluster: an IPv6 host is bracketed, port 8080 is plain HTTP, and the namespace file is read", async () => {
    const root = join(dir, "incluster");
    const sa = join(root, SERVICE_ACCOUNT_DIR);
    mkdirSync(sa, { recursive: true });
    writeFileSync(join(sa, "token"), "sa-token");
    const pki = makePki();
    rmSync(pki.dir, { recursive: true, force: true });
    writeFileSync(join(sa, "ca.crt"), pki.ca);
    const conn = loadConnection({
      inClusterRoot: root,
      env: { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "8080", HOME: root },
    });
    expect(conn.server).toBe("http://[fd00::1]:8080");
    expect(conn.namespace).toBe("default");
    expect(conn.context).toBe("");
    expect(await conn.authHeaders()).toEqual({ Authorization: "Bearer sa-token" });
  });
});
