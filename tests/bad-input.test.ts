/**
 * Bad input, at both doors.
 *
 * 1. `kubectl apply` of malformed WebApps against the REAL CRD (client-side and server-side apply),
 *    with the operator watching the namespace: each is rejected by the API server with a message
 *    naming the field, and nothing is created (no WebApp, no Deployment, no Service, no Event).
 *    Unknown fields: kubectl 1.32's default `--validate=true` is server-side *strict* field
 *    validation, so they are rejected; `--validate=warn` stores the object with a warning and the
 *    field pruned; `--validate=false` prunes it silently; server-side apply rejects them always. Invalid updates (patch, scale) are rejected
 *    and leave the stored WebApp and its children as they were.
 *    (The same objects forced past validation are tests/invalid-spec.test.ts.)
 * 2. Every CLI command that talks to a cluster, with a malformed or missing kubeconfig, an
 *    unreachable server, an expired token, a token of a deleted ServiceAccount and a token without
 *    permissions: exit 1, one `error:` line saying what is wrong, never a stack trace.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject } from "../src/kube/types.ts";
import {
  SIGNING_KEY,
  adminConnection,
  createServiceAccount,
  expiredTokenFor,
  kubeconfigYaml,
  tokenFor,
} from "./_identities.ts";
import { testWhen } from "./_skip.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  EVENTS,
  NAMESPACES,
  SERVICEACCOUNTS,
  SERVICES,
  WEBAPPS,
  conditionOf,
  devctl,
  ensureCrd,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  tempNamespace,
  type WebAppLike,
} from "./_support.ts";
import { kubectl } from "./_kubectl.ts";

setDefaultTimeout(120_000);

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;
const scratch = mkdtempSync(join(tmpdir(), "devctl-bad-input-"));

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("bad-input");
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
});
afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  rmSync(scratch, { recursive: true, force: true });
  expect(code).toBe(0);
});

const doc = (name: string, spec: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name },
    ...(spec === undefined ? {} : { spec }),
    ...extra,
  });
const GOOD = { image: "nginx:1.25", replicas: 2, port: 8080 };
const LONG_NAME = "a".repeat(60);

/** [case, name, spec (undefined: none), the field named, what else kubectl apply's message says, extra top-level fields] */
const CASES: [string, string, unknown, string, string[], Record<string, unknown>?][] = [
  [
    "replicas of the wrong type",
    "bad-type-replicas",
    { ...GOOD, replicas: "three" },
    "spec.replicas",
    ["must be of type integer"],
  ],
  ["port of the wrong type", "bad-type-port", { ...GOOD, port: "8080" }, "spec.port", ["must be of type integer"]],
  ["image of the wrong type", "bad-type-image", { ...GOOD, image: 5 }, "spec.image", ["must be of type string"]],
  ["a fractional port", "bad-fraction-port", { ...GOOD, port: 80.5 }, "spec.port", ["must be of type int32"]],
  ["spec of the wrong type", "bad-type-spec", "nginx:1.25", "spec", ["must be of type object"]],
  ["no spec", "no-spec", undefined, "spec", ["Required value"]],
  ["no image", "no-image", { replicas: 2, port: 8080 }, "spec.image", ["Required value"]],
  ["no port", "no-port", { image: "nginx:1.25", replicas: 2 }, "spec.port", ["Required value"]],
  ["an empty image", "empty-image", { ...GOOD, image: "" }, "spec.image", ["must not be empty"]],
  [
    "an image with whitespace",
    "space-image",
    { ...GOOD, image: "nginx 1.25" },
    "spec.image",
    ["must not contain whitespace"],
  ],
  ["port 0", "port-zero", { ...GOOD, port: 0 }, "spec.port", ["greater than or equal to 1"]],
  ["port 70000", "port-big", { ...GOOD, port: 70000 }, "spec.port", ["less than or equal to 65535"]],
  ["replicas 0", "replicas-zero", { ...GOOD, replicas: 0 }, "spec.replicas", ["greater than or equal to 1"]],
  ["replicas -1", "replicas-negative", { ...GOOD, replicas: -1 }, "spec.replicas", ["greater than or equal to 1"]],
  ["replicas 1001", "replicas-big", { ...GOOD, replicas: 1001 }, "spec.replicas", ["less than or equal to 1000"]],
  [
    "a 60-character name (its Service would be 64)",
    LONG_NAME,
    GOOD,
    "metadata.name",
    ["must be at most 59 characters"],
  ],
  [
    "a name starting with a digit (not a DNS-1035 label)",
    "1app",
    GOOD,
    "metadata.name",
    ["must consist of lower-case letters"],
  ],
  ["a dotted name (not a DNS-1035 label)", "web.app", GOOD, "metadata.name", ["must consist of lower-case letters"]],
  ["an unknown spec field", "unknown-spec", { ...GOOD, colour: "red" }, "spec.colour", ['unknown field "spec.colour"']],
  ["an unknown top-level field", "unknown-top", GOOD, "extra", ['unknown field "extra"'], { extra: { a: 1 } }],
];

async function nothingCreatedFor(name: string): Promise<void> {
  expect(await getOrUndefined(WEBAPPS, name, ns.name)).toBeUndefined();
  expect(await getOrUndefined(DEPLOYMENTS, `${name}-deployment`, ns.name)).toBeUndefined();
  expect(await getOrUndefined(SERVICES, `${name}-svc`, ns.name)).toBeUndefined();
}

describe("kubectl apply of malformed WebApps against the real CRD", () => {
  for (const [what, name, spec, field, wants, extra] of CASES) {
    test(`${what} is rejected naming the field, by client-side and server-side apply, and nothing is created`, async () => {
      const csa = kubectl(["apply", "-n", ns.name, "-f", "-"], doc(name, spec, extra));
      expect({ what, code: csa.code }).toEqual({ what, code: 1 });
      for (const want of [field, ...wants]) expect(csa.stderr).toContain(want);
      // Server-side apply words some of them differently (".spec.colour: field not declared in schema").
      const ssa = kubectl(["apply", "--server-side", "-n", ns.name, "-f", "-"], doc(name, spec, extra));
      expect({ what, code: ssa.code }).toEqual({ what, code: 1 });
      expect(ssa.stderr).toContain(field);
      await nothingCreatedFor(name);
    });
  }

  test("server-side apply rejects unknown fields whatever --validate says", async () => {
    for (const validate of ["--validate=warn", "--validate=false"]) {
      const r = kubectl(
        ["apply", "--server-side", validate, "-n", ns.name, "-f", "-"],
        doc("ssa-unknown", { ...GOOD, colour: "red" }),
      );
      expect({ validate, code: r.code }).toEqual({ validate, code: 1 });
      expect(r.stderr).toContain(".spec.colour: field not declared in schema");
    }
    await nothingCreatedFor("ssa-unknown");
  });

  test("--validate=warn stores a WebApp with unknown fields pruned and says so; --validate=false prunes them silently", async () => {
    const warn = kubectl(
      ["apply", "--validate=warn", "-n", ns.name, "-f", "-"],
      doc("pruned-warn", { ...GOOD, colour: "red" }, { extra: 1 }),
    );
    expect(warn.code).toBe(0);
    expect(warn.stderr).toContain('Warning: unknown field "spec.colour"');
    expect(warn.stderr).toContain('Warning: unknown field "extra"');
    const silent = kubectl(
      ["apply", "--validate=false", "-n", ns.name, "-f", "-"],
      doc("pruned-silent", { ...GOOD, colour: "red" }),
    );
    expect(silent.code).toBe(0);
    expect(silent.stderr).toBe("");
    for (const name of ["pruned-warn", "pruned-silent"]) {
      const stored = await kube.get<WebAppLike>(WEBAPPS, name, ns.name);
      expect(stored.spec).toEqual(GOOD);
      expect(stored).not.toHaveProperty("extra");
    }
  });

  test("a valid WebApp applied the same way converges: the operator was watching all along", async () => {
    expect(kubectl(["apply", "-n", ns.name, "-f", "-"], doc("good", GOOD)).code).toBe(0);
    await eventually(
      async () =>
        conditionOf(await getOrUndefined<WebAppLike>(WEBAPPS, "good", ns.name), "Available")?.status === "True",
      60_000,
      "good to be Available",
    );
  });

  test("invalid updates (merge patch, replace without image, kubectl scale to 0 and 1001) are rejected and change nothing", async () => {
    const before = await kube.get<WebAppLike>(WEBAPPS, "good", ns.name);
    const dep = await kube.get<KubeObject>(DEPLOYMENTS, "good-deployment", ns.name);
    const attempts: [string[], string, string?][] = [
      [["patch", "wa", "good", "--type", "merge", "-p", '{"spec":{"port":0}}'], "spec.port"],
      [["patch", "wa", "good", "--type", "merge", "-p", '{"spec":{"image":null}}'], "spec.image: Required value"],
      [["patch", "wa", "good", "--type", "merge", "-p", '{"spec":{"replicas":"many"}}'], "spec.replicas"],
      [
        ["replace", "-f", "-"],
        "spec.image: Required value",
        JSON.stringify({
          ...JSON.parse(doc("good", { port: 80 })),
          metadata: { name: "good", namespace: ns.name, resourceVersion: before.metadata.resourceVersion },
        }),
      ],
      [["scale", "wa/good", "--replicas=0"], "spec.replicas"],
      [["scale", "wa/good", "--replicas=1001"], "spec.replicas"],
    ];
    for (const [args, want, stdin] of attempts) {
      const r = kubectl([...args, "-n", ns.name], stdin);
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr).toContain(want);
    }
    const after = await kube.get<WebAppLike>(WEBAPPS, "good", ns.name);
    expect(after.metadata.generation).toBe(before.metadata.generation);
    expect(after.spec).toEqual(GOOD);
    expect((await kube.get<KubeObject>(DEPLOYMENTS, "good-deployment", ns.name)).metadata.generation).toBe(
      dep.metadata.generation,
    );
  });

  test("in the end the namespace holds exactly the accepted WebApps' children, and Events only about them", async () => {
    const accepted = ["good", "pruned-silent", "pruned-warn"];
    await eventually(
      async () => (await kube.list(DEPLOYMENTS, { namespace: ns.name })).items.length === accepted.length,
      30_000,
      "three Deployments",
    );
    const names = async (rt: typeof DEPLOYMENTS) =>
      (await kube.list(rt, { namespace: ns.name })).items.map((o) => o.metadata.name).sort();
    expect(await names(WEBAPPS)).toEqual(accepted);
    expect(await names(DEPLOYMENTS)).toEqual(accepted.map((n) => `${n}-deployment`));
    expect(await names(SERVICES)).toEqual(accepted.map((n) => `${n}-svc`));
    // Events are sent in the order they were recorded, once the operator is quiet: those about the accepted
    // WebApps being there means that any about a rejected one would be too.
    for (const n of accepted)
      await eventsOnceSeen(ns.name, n, (e) => e.reason === "Created", `the Created event of ${n}`);
    const events = await kube.list<KubeObject & { involvedObject: { kind: string; name: string } }>(EVENTS, {
      namespace: ns.name,
    });
    const about = new Set(
      events.items.filter((e) => e.involvedObject.kind === "WebApp").map((e) => e.involvedObject.name),
    );
    expect([...about].filter((n) => !accepted.includes(n))).toEqual([]);
    expect(await op.counter("controller_runtime_reconcile_errors_total")).toBe(0);
  });
});

// --- the CLI with bad connections ---------------------------------------------------------------

/** Every command that talks to a cluster, with arguments that would succeed with good credentials. */
const COMMANDS = (appNs: string, installNs: string): string[][] => [
  ["operator", "install", "-n", installNs, "--image", "ghcr.io/devctl/devctl:e2e"],
  ["operator", "uninstall", "-n", installNs],
  ["operator", "status", "-n", installNs],
  [
    "operator",
    "run",
    "--namespaces",
    appNs,
    "--leader-elect=false",
    "--metrics-bind-address",
    "0",
    "--health-probe-bind-address",
    "0",
  ],
  ["webapp", "list", "-n", appNs],
  ["webapp", "get", "good", "-n", appNs],
  ["webapp", "create", "from-cli", "-n", appNs, "--image", "nginx:1.25", "--port", "80"],
  ["version"],
];

describe("every CLI command with a bad kubeconfig or bad credentials", () => {
  const server = () => adminConnection().server;
  let kubeconfigs: [string, string, RegExp][] = [];
  let expiredConfig: [string, string, RegExp] | undefined;
  let denied: Awaited<ReturnType<typeof tempNamespace>>;
  const installNs = `bad-input-install-${Math.random().toString(36).slice(2, 8)}`;

  beforeAll(async () => {
    denied = await tempNamespace("bad-input-sa");
    const { ca } = adminConnection();
    const write = (file: string, text: string) => (writeFileSync(join(scratch, file), text), join(scratch, file));
    await createServiceAccount("nobody", denied.name);
    await createServiceAccount("deleted", denied.name);
    const noPermissions = tokenFor("nobody", denied.name);
    const ofDeleted = tokenFor("deleted", denied.name);
    const expired = await expiredTokenFor("nobody", denied.name);
    await kube.delete(SERVICEACCOUNTS, "deleted", denied.name);
    await eventually(
      async () => !(await getOrUndefined(SERVICEACCOUNTS, "deleted", denied.name)),
      10_000,
      "the ServiceAccount to be gone",
    );
    const unauthorized =
      /^error: unauthorized at https:\/\/\S+: the credentials of context "\S+" were rejected \(expired token or wrong certificate\?\)/m;
    kubeconfigs = [
      [
        "a kubeconfig that is not YAML",
        write("garbage", "clusters: [ {name: c, cluster: {server:\n  - oops\n"),
        /^error: kubeconfig \S+garbage cannot be read: [\s\S]*Fix the file/m,
      ],
      ["an empty kubeconfig", write("empty", ""), /^error: kubeconfig \S+empty cannot be read: .*empty/m],
      [
        "a kubeconfig without contexts",
        write(
          "no-context",
          JSON.stringify({
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "c", cluster: { server: server() } }],
            users: [],
            contexts: [],
          }),
        ),
        /^error: kubeconfig \S+ has no current context; pass --context/m,
      ],
      [
        "a kubeconfig with an invalid server URL",
        write("bad-url", kubeconfigYaml("not a url", "bad-url-ctx", { token: "t" })),
        /^error: cluster "c" in kubeconfig \S+ has an invalid server URL "not a url"/m,
      ],
      [
        "a kubeconfig file that does not exist",
        join(scratch, "missing"),
        /^error: kubeconfig \S+missing does not exist/m,
      ],
      [
        "an unreachable server",
        write("unreachable", kubeconfigYaml("https://127.0.0.1:1", "nowhere-ctx", { insecure: true, token: "t" })),
        /^error: cannot reach the Kubernetes API server at https:\/\/127\.0\.0\.1:1 \(context "nowhere-ctx"\)/m,
      ],
      [
        "a server whose certificate the CA does not vouch for",
        write("untrusted", kubeconfigYaml(server(), "untrusted-ctx", { token: noPermissions })),
        /^error: cannot reach the Kubernetes API server at \S+ \(context "untrusted-ctx"\): .*certificate/m,
      ],
      [
        "a CA that is not PEM",
        write("junk-ca", kubeconfigYaml(server(), "junk-ca-ctx", { ca: "not a certificate", token: "t" })),
        /^error: certificate-authority-data of cluster "c" in kubeconfig \S+ is not a PEM certificate/m,
      ],
      [
        "a client key that is not PEM",
        write(
          "junk-key",
          kubeconfigYaml(server(), "junk-key-ctx", { ca, cert: adminConnection().cert ?? ca, key: "not a key" }),
        ),
        /^error: client-key-data of user "u" in kubeconfig \S+ is not a PEM private key/m,
      ],
      [
        "a token of a deleted ServiceAccount",
        write("deleted-sa", kubeconfigYaml(server(), "deleted-ctx", { ca, token: ofDeleted })),
        unauthorized,
      ],
      [
        "a token without permissions",
        write("nobody", kubeconfigYaml(server(), "nobody-ctx", { ca, token: noPermissions })),
        /^error: (forbidden: cannot|missing permissions for the install)/m,
      ],
    ];
    if (expired)
      expiredConfig = [
        "an expired token",
        write("expired", kubeconfigYaml(server(), "expired-ctx", { ca, token: expired })),
        unauthorized,
      ];
  });
  afterAll(async () => {
    await denied?.drop();
  });

  /** Every command with each kubeconfig: exit 1, one error line matching its message, no stack, nothing created. */
  async function failsCleanly(configs: [string, string, RegExp][]): Promise<void> {
    const results: string[] = [];
    for (const [what, file, message] of configs) {
      for (const args of COMMANDS(ns.name, installNs)) {
        const r = devctl([...args, "--kubeconfig", file], { KUBECONFIG: undefined });
        const label = `${args.slice(0, 2).join(" ")} with ${what}`;
        // `version` needs no permission at all: /version is open to every authenticated user.
        if (args[0] === "version" && what === "a token without permissions") {
          expect({ label, code: r.code, out: r.stdout }).toEqual({
            label,
            code: 0,
            out: expect.stringContaining("Server: v"),
          });
          continue;
        }
        const errors = r.stderr.split("\n").filter((l) => l.startsWith("error:"));
        expect({
          label,
          code: r.code,
          errors: errors.length,
          stack: /^\s+at /m.test(r.stdout + r.stderr),
          message: message.test(r.stderr),
        }).toEqual({ label, code: 1, errors: 1, stack: false, message: true });
        results.push(`${label}: ${errors[0]}`);
      }
    }
    expect(await getOrUndefined(NAMESPACES, installNs)).toBeUndefined();
    expect(await getOrUndefined(WEBAPPS, "from-cli", ns.name)).toBeUndefined();
    console.error(
      `${results.length} failing invocations checked, e.g.\n  ${results.filter((_, i) => i % 8 === 6).join("\n  ")}`,
    );
  }

  test("each fails with exit 1 and one error line saying what is wrong; none prints a stack trace or creates anything", async () => {
    expect(kubeconfigs.length).toBe(11);
    await failsCleanly(kubeconfigs);
  }, 120_000);

  testWhen(SIGNING_KEY)(
    "an expired token fails each command the same way, as unauthorized",
    async () => {
      if (!expiredConfig) throw new Error("no expired token was made");
      await failsCleanly([expiredConfig]);
    },
    60_000,
  );

  test("missing permissions name what is missing for each command", () => {
    const file = kubeconfigs.find(([w]) => w === "a token without permissions")![1];
    const wanted: Record<string, RegExp> = {
      "operator install":
        /missing permissions for the install \(context "nobody-ctx"\): get, create, patch customresourcedefinitions\.apiextensions\.k8s\.io;/,
      "operator uninstall": /forbidden: cannot delete deployments\.apps "webapp-operator"/,
      // status reads four things at once and reports the first refusal.
      "operator status":
        /forbidden: cannot get (deployments\.apps "webapp-operator"|leases\.coordination\.k8s\.io "webapp-operator-lock"|customresourcedefinitions\.apiextensions\.k8s\.io "webapps\.apps\.example\.com") /,
      "operator run": /forbidden: cannot list webapps\.apps\.example\.com in namespace/,
      "webapp list": /forbidden: cannot list webapps\.apps\.example\.com in namespace/,
      "webapp get": /forbidden: cannot get webapps\.apps\.example\.com "good" in namespace/,
      "webapp create": /forbidden: cannot create webapps\.apps\.example\.com in namespace/,
    };
    for (const args of COMMANDS(ns.name, installNs)) {
      const key = args.slice(0, 2).join(" ");
      if (!wanted[key]) continue;
      const r = devctl([...args, "--kubeconfig", file], { KUBECONFIG: undefined });
      expect({ key, matches: wanted[key].test(r.stderr) }).toEqual({ key, matches: true });
    }
  });
});
