/**
 * No credential ever reaches a log: the operator and the CLI run with every debug switch on
 * (`--log-level debug`, DEVCTL_DEBUG=1, which also prints stack traces), with a token kubeconfig and
 * with a client-certificate kubeconfig, through work that logs a lot (creates, self-healing, a name
 * collision, leader election, shutdown) and through failures (rejected credentials, missing objects).
 * Everything they print is searched for the token (and its signature alone), the base64 certificate
 * and key data, lines of their PEM bodies, and the markers "PRIVATE KEY" and "BEGIN CERTIFICATE".
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import {
  SIGNING_KEY,
  adminConnection,
  createServiceAccount,
  expiredTokenFor,
  kubeconfigYaml,
  tokenFor,
} from "./_identities.ts";
import { testWhen } from "./_skip.ts";
import { freePort } from "./_operator.ts";
import {
  DEPLOYMENTS,
  DEVCTL,
  WEBAPPS,
  conditionOf,
  ensureCrd,
  eventually,
  getOrUndefined,
  kube,
  sh,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

setDefaultTimeout(120_000);

const CLUSTERROLEBINDINGS: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterrolebindings",
  kind: "ClusterRoleBinding",
  namespaced: false,
};
const DEBUG_ENV = { DEVCTL_DEBUG: "1" };

let ns: Awaited<ReturnType<typeof tempNamespace>>;
const scratch = mkdtempSync(join(tmpdir(), "devctl-secrecy-"));
let tokenConfig = "";
let certConfig = "";
let rejectedConfig = "";
let expiredConfig = "";
/** [what, text] pairs that must never appear in any output. */
let secrets: [string, string][] = [];
/** Everything every process printed, by label. */
const outputs: [string, string][] = [];

const bindingName = () => `devctl-secrecy-${ns.name}`;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("secrecy");
  await createServiceAccount("secrecy", ns.name);
  await kube.create(CLUSTERROLEBINDINGS, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: bindingName() },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [{ kind: "ServiceAccount", name: "secrecy", namespace: ns.name }],
  });
  const admin = adminConnection();
  if (!admin.cert || !admin.key)
    throw new Error("the test kubeconfig must authenticate with a client certificate for this suite");
  const token = tokenFor("secrecy", ns.name);
  // A real token with a broken signature (rejected anywhere); the expired one needs the local signing key.
  const rejected = `${token.slice(0, -8)}AAAAAAAA`;
  const expired = await expiredTokenFor("secrecy", ns.name);
  const write = (file: string, text: string) => (writeFileSync(join(scratch, file), text), join(scratch, file));
  tokenConfig = write("token.kubeconfig", kubeconfigYaml(admin.server, "token-ctx", { ca: admin.ca, token }));
  certConfig = write(
    "cert.kubeconfig",
    kubeconfigYaml(admin.server, "cert-ctx", { ca: admin.ca, cert: admin.cert, key: admin.key }),
  );
  rejectedConfig = write(
    "rejected.kubeconfig",
    kubeconfigYaml(admin.server, "rejected-ctx", { ca: admin.ca, token: rejected }),
  );
  if (expired)
    expiredConfig = write(
      "expired.kubeconfig",
      kubeconfigYaml(admin.server, "expired-ctx", { ca: admin.ca, token: expired }),
    );
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  const pemLines = (pem: string) =>
    pem
      .split("\n")
      .filter((l) => l.length >= 40 && !l.startsWith("-----"))
      .slice(0, 3);
  secrets = [
    ["the token", token],
    ["the token's signature", token.split(".")[2] ?? token],
    ["the rejected token", rejected],
    ["the rejected token's signature", rejected.split(".")[2] ?? rejected],
    ...(expired
      ? [
          ["the expired token", expired] as [string, string],
          ["the expired token's signature", expired.split(".")[2] ?? expired] as [string, string],
        ]
      : []),
    ["client-certificate-data", b64(admin.cert)],
    ["client-key-data", b64(admin.key)],
    ...pemLines(admin.cert).map((l, i): [string, string] => [`line ${i + 2} of the client certificate`, l]),
    ...pemLines(admin.key).map((l, i): [string, string] => [`line ${i + 2} of the client key`, l]),
    ["a private key marker", "PRIVATE KEY"],
    ["a certificate marker", "BEGIN CERTIFICATE"],
  ];
});
afterAll(async () => {
  await kube.delete(CLUSTERROLEBINDINGS, bindingName()).catch(() => {});
  await ns?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

function leaks(text: string): string[] {
  return secrets.filter(([, s]) => text.includes(s)).map(([what]) => what);
}

/** Runs `devctl operator run` with the given kubeconfig and debug everything; returns a handle. */
async function operator(kubeconfigFile: string, extra: string[]) {
  const port = await freePort();
  let out = "";
  const proc = Bun.spawn(
    [
      DEVCTL,
      "operator",
      "run",
      "--kubeconfig",
      kubeconfigFile,
      "--namespaces",
      ns.name,
      "--log-level",
      "debug",
      "--metrics-bind-address",
      `127.0.0.1:${port}`,
      "--health-probe-bind-address",
      `127.0.0.1:${port}`,
      // Plain HTTP on loopback, probes and scrapes on one port: these suites measure the operator, not its auth.
      "--metrics-secure=false",
      ...extra,
    ],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...DEBUG_ENV, KUBECONFIG: "" } },
  );
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const c of s) out += d.decode(c, { stream: true });
  };
  const drained = Promise.all([
    drain(proc.stdout as ReadableStream<Uint8Array>),
    drain(proc.stderr as ReadableStream<Uint8Array>),
  ]);
  const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  return {
    proc,
    logs: () => out,
    metrics,
    ready: () =>
      eventually(
        async () => {
          if (proc.exitCode !== null) throw new Error(`the operator exited with ${proc.exitCode}: ${out}`);
          return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;
        },
        30_000,
        "the operator to be ready",
      ),
    stop: async () => {
      proc.kill("SIGTERM");
      const code = await proc.exited;
      await drained;
      return code;
    },
  };
}

async function available(name: string): Promise<void> {
  await eventually(
    async () => conditionOf(await getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name), "Available")?.status === "True",
    60_000,
    `${name} to be Available`,
  );
}

test("the search finds the secrets where they are: in the kubeconfigs", () => {
  expect(leaks(readFileSync(tokenConfig, "utf8"))).toEqual(["the token", "the token's signature"]);
  expect(leaks(readFileSync(certConfig, "utf8"))).toEqual(["client-certificate-data", "client-key-data"]);
  expect(leaks(adminConnection().key ?? "")).toContain("a private key marker");
});

describe("the operator at debug level", () => {
  test("with a token kubeconfig (JSON logs, leader election, self-healing, a name collision, shutdown) logs no credential", async () => {
    const op = await operator(tokenConfig, [
      "--log-format",
      "json",
      "--lease-namespace",
      ns.name,
      "--lease-duration",
      "4s",
      "--renew-deadline",
      "3s",
      "--retry-period",
      "1s",
    ]);
    await op.ready();
    await kube.create(WEBAPPS, webapp("token-app", ns.name, { image: "nginx:1.25", replicas: 2, port: 8080 }));
    await available("token-app");
    await kube.delete(DEPLOYMENTS, "token-app-deployment", ns.name);
    await eventually(
      () => getOrUndefined(DEPLOYMENTS, "token-app-deployment", ns.name),
      30_000,
      "the Deployment to be recreated",
    );
    await kube.create(DEPLOYMENTS, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "taken-deployment", namespace: ns.name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { x: "y" } },
        template: {
          metadata: { labels: { x: "y" } },
          spec: { containers: [{ name: "x", image: "registry.k8s.io/pause:3.10" }] },
        },
      },
    } as KubeObject);
    await kube.create(WEBAPPS, webapp("taken", ns.name, { image: "nginx:1.25", replicas: 1, port: 80 }));
    await eventually(
      async () =>
        conditionOf(await getOrUndefined<WebAppLike>(WEBAPPS, "taken", ns.name), "Degraded")?.reason ===
        "ResourceExists",
      30_000,
      "a collision",
    );
    const metrics = await op.metrics();
    expect(await op.stop()).toBe(0);
    const logs = op.logs();
    expect(logs).toContain('"level":"debug"');
    outputs.push(["operator (token, json)", logs], ["its /metrics", metrics]);
    expect(leaks(logs)).toEqual([]);
    expect(leaks(metrics)).toEqual([]);
  }, 120_000);

  test("with a client-certificate kubeconfig (text logs) logs no credential", async () => {
    const op = await operator(certConfig, ["--log-format", "text", "--leader-elect=false"]);
    await op.ready();
    await kube.create(WEBAPPS, webapp("cert-app", ns.name, { image: "nginx:1.25", replicas: 1, port: 8080 }));
    await available("cert-app");
    expect(await op.stop()).toBe(0);
    const logs = op.logs();
    expect(logs).toContain("synced with"); // a debug-level line
    outputs.push(["operator (client certificate, text)", logs]);
    expect(leaks(logs)).toEqual([]);
  }, 120_000);

  test("whose credentials are rejected exits with an error that quotes no credential", async () => {
    const op = await operator(rejectedConfig, ["--log-format", "json", "--leader-elect=false"]);
    const code = await op.proc.exited;
    await op.stop();
    expect(code).toBe(1);
    expect(op.logs()).toContain("unauthorized");
    outputs.push(["operator (rejected token)", op.logs()]);
    expect(leaks(op.logs())).toEqual([]);
  });

  testWhen(SIGNING_KEY)("whose token has expired exits with an error that quotes no credential", async () => {
    const op = await operator(expiredConfig, ["--log-format", "json", "--leader-elect=false"]);
    const code = await op.proc.exited;
    await op.stop();
    expect(code).toBe(1);
    expect(op.logs()).toContain("unauthorized");
    outputs.push(["operator (expired token)", op.logs()]);
    expect(leaks(op.logs())).toEqual([]);
  });
});

describe("the CLI with DEVCTL_DEBUG=1", () => {
  test("prints no credential, on success or on failure (with its stack trace)", () => {
    const commands = [
      ["webapp", "list", "-n", ns.name],
      ["webapp", "get", "token-app", "-n", ns.name, "-o", "yaml"],
      ["webapp", "get", "missing", "-n", ns.name],
      ["webapp", "create", "cli-app", "-n", ns.name, "--image", "nginx:1.25", "--port", "80", "--dry-run"],
      ["operator", "status", "-n", ns.name],
      ["version"],
    ];
    let stacks = 0;
    for (const [what, file] of [
      ["token", tokenConfig],
      ["client certificate", certConfig],
      ["rejected token", rejectedConfig],
    ] as const) {
      for (const args of commands) {
        const r = sh([DEVCTL, ...args, "--kubeconfig", file], { env: { ...DEBUG_ENV, KUBECONFIG: "" } });
        const text = r.stdout + r.stderr;
        if (/^\s+at /m.test(text)) stacks++;
        outputs.push([`devctl ${args.slice(0, 2).join(" ")} (${what})`, text]);
        expect({ command: `${args.join(" ")} with the ${what}`, leaks: leaks(text) }).toEqual({
          command: `${args.join(" ")} with the ${what}`,
          leaks: [],
        });
      }
    }
    // The debug switch did its job: failures printed their stacks (and those were searched too).
    expect(stacks).toBeGreaterThan(0);
    const bytes = outputs.reduce((n, [, t]) => n + t.length, 0);
    console.error(
      `log secrecy: ${outputs.length} outputs (${(bytes / 1024).toFixed(0)} KiB) searched for ${secrets.length} secrets: none found`,
    );
  });
});
