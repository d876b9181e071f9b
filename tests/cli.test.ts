/**
 * devctl for users, end to end: the compiled dist/devctl against the real control plane.
 *
 * - operator install (twice: the second changes nothing), manifests == what install applied,
 *   status, uninstall (keeps the CRD and WebApps), --delete-crd refusing without a terminal;
 * - webapp create / list / get, validation naming the field, usage errors (exit 2);
 * - errors: unreachable server (names server and context), a token without permissions (names verb
 *   and resource);
 * - the image's entrypoint run exactly as the pod runs it: in-cluster config from a TokenRequest for
 *   the installed ServiceAccount at the standard path inside a private mount namespace, non-root,
 *   read-only root filesystem, no capabilities; it must reconcile with the installed RBAC and name the
 *   missing permission when one rule is removed.
 * The install goes into a namespace of its own (devctl-system-<random>) and is uninstalled at the end;
 * the shared CRD is never deleted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildManifests, clusterRoleName, resourceOf } from "../src/install/manifests.ts";
import { operatorRules } from "../src/install/rbac.ts";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { freePort } from "./_operator.ts";
import {
  CRDS,
  DEPLOYMENTS,
  DEVCTL,
  ROOT,
  SERVICEACCOUNTS,
  WEBAPPS,
  conditionOf,
  devctl,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  kubeconfig,
  kubectl,
  NAMESPACES,
  PODS,
  sh,
  tempNamespace,
  type WebAppLike,
} from "./_support.ts";

const INSTALL_NS = `devctl-system-${Math.random().toString(36).slice(2, 8)}`;
const IMAGE = "ghcr.io/devctl/devctl:e2e";
const CRD_NAME = "webapps.apps.example.com";
const CLUSTERROLES: ResourceType = {
  group: "rbac.authorization.k8s.io",
  version: "v1",
  plural: "clusterroles",
  kind: "ClusterRole",
  namespaced: false,
};
const LEASES: ResourceType = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

let version = "";
let apps: { name: string; drop: () => Promise<void> };
const scratch = mkdtempSync(join(tmpdir(), "devctl-cli-"));
const cleanups: (() => Promise<unknown> | unknown)[] = [];

beforeAll(async () => {
  if (!existsSync(DEVCTL)) throw new Error(`${DEVCTL} is missing: run \`npm run build\` first`);
  version = /^devctl (\S+) /.exec(sh([DEVCTL, "--version"]).stdout)?.[1] ?? "";
  apps = await tempNamespace("cli-apps");
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await Promise.resolve(c()).catch(() => {});
  devctl(["operator", "uninstall", "-n", INSTALL_NS]);
  await apps?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

/** Fields of `want` that `have` lacks or holds differently, as paths (the live object adds defaults). */
function differences(want: unknown, have: unknown, path = ""): string[] {
  if (typeof want !== "object" || want === null)
    return want === have ? [] : [`${path}: want ${JSON.stringify(want)}, have ${JSON.stringify(have)}`];
  if (typeof have !== "object" || have === null) return [`${path}: missing`];
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length)
      return [`${path}: want ${want.length} items, have ${JSON.stringify(have)}`];
    return want.flatMap((w, i) => differences(w, have[i], `${path}[${i}]`));
  }
  return Object.entries(want).flatMap(([k, v]) =>
    differences(v, (have as Record<string, unknown>)[k], path ? `${path}.${k}` : k),
  );
}

const lines = (s: string) => s.split("\n").filter(Boolean);

describe("devctl operator install", () => {
  // On KWOK no process runs, so no pod holds the Lease: `--wait` (until one does) is tested in
  // tests/install.test.ts, where a real operator process takes a pod's identity.
  test("installs the CRD, namespace, RBAC and Deployment, and a second run changes nothing", () => {
    const first = devctl(["operator", "install", "-n", INSTALL_NS, "--image", IMAGE]);
    expect(first.stderr).not.toContain("error:");
    expect(first.code).toBe(0);
    const out = lines(first.stdout);
    expect(out.map((l) => l.replace(/ \S+$/, ""))).toEqual([
      `customresourcedefinition.apiextensions.k8s.io/${CRD_NAME}`,
      `namespace/${INSTALL_NS}`,
      "serviceaccount/webapp-operator",
      `clusterrole.rbac.authorization.k8s.io/${clusterRoleName(INSTALL_NS)}`,
      `clusterrolebinding.rbac.authorization.k8s.io/${clusterRoleName(INSTALL_NS)}`,
      "clusterrole.rbac.authorization.k8s.io/devctl-metrics-reader",
      "role.rbac.authorization.k8s.io/webapp-operator-leader-election",
      "rolebinding.rbac.authorization.k8s.io/webapp-operator-leader-election",
      "poddisruptionbudget.policy/webapp-operator",
      "deployment.apps/webapp-operator",
    ]);
    // The CRD is shared with other suites (already there); everything of this install is new.
    expect(out.slice(1).every((l) => l.endsWith(" created"))).toBe(true);
    expect(first.stderr).toContain("the operator starts in the background");

    const second = devctl(["operator", "install", "-n", INSTALL_NS, "--image", IMAGE]);
    expect(second.code).toBe(0);
    expect(lines(second.stdout).every((l) => l.endsWith(" unchanged"))).toBe(true);
    expect(lines(second.stdout).length).toBe(10);
    expect(second.stderr).toContain("everything was already up to date");
  }, 120_000);

  test("manifests prints exactly the objects install applied, and kubectl accepts them as they are", async () => {
    const printed = devctl(["operator", "manifests", "-n", INSTALL_NS, "--image", IMAGE]);
    expect(printed.code).toBe(0);
    const docs = printed.stdout.split(/^---$/m).map((d) => Bun.YAML.parse(d) as KubeObject);
    const built = buildManifests({ namespace: INSTALL_NS, image: IMAGE, replicas: 2, version });
    expect(docs).toEqual(JSON.parse(JSON.stringify(built)));
    for (const doc of docs) {
      const live = await kube.get(resourceOf(doc), doc.metadata.name as string, doc.metadata.namespace);
      expect({ object: doc.metadata.name, differences: differences(doc, live) }).toEqual({
        object: doc.metadata.name,
        differences: [],
      });
    }
    const dry = kubectl(
      ["apply", "--server-side", "--field-manager=devctl", "--dry-run=server", "-f", "-"],
      printed.stdout,
    );
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(lines(dry.stdout).length).toBe(10);
  }, 30_000);

  test("--dry-run=server has the API server check every object of an installed operator: all unchanged", async () => {
    const before = await kube.get(DEPLOYMENTS, "webapp-operator", INSTALL_NS);
    const r = devctl(["operator", "install", "-n", INSTALL_NS, "--image", IMAGE, "--dry-run=server"]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(lines(r.stdout).length).toBe(10);
    expect(lines(r.stdout).filter((l) => !l.endsWith(" unchanged (server dry run)"))).toEqual([]);
    const other = devctl([
      "operator",
      "install",
      "-n",
      INSTALL_NS,
      "--image",
      "example.com/other:1",
      "--dry-run=server",
    ]);
    expect(lines(other.stdout)).toContain("deployment.apps/webapp-operator configured (server dry run)");
    const after = await kube.get(DEPLOYMENTS, "webapp-operator", INSTALL_NS);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  test("--dry-run prints what would be applied and applies nothing", async () => {
    const ns = `${INSTALL_NS}-dry`;
    const r = devctl(["operator", "install", "--dry-run", "-n", ns]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`name: ${ns}`);
    expect(r.stderr).toContain("nothing applied");
    expect(await getOrUndefined(NAMESPACES, ns)).toBeUndefined();
  });

  test("flags with bad values are usage errors (exit 2) naming the flag", () => {
    const r = devctl(["operator", "install", "--replicas", "0", "-n", INSTALL_NS]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--replicas "0" must be a whole number from 1 to 10');
  });
});

describe("devctl webapp", () => {
  test("create makes the WebApp, list shows it as `kubectl get wa` does, get prints it as yaml and json", async () => {
    const create = devctl([
      "webapp",
      "create",
      "my-service",
      "-n",
      apps.name,
      "--image",
      "myregistry/myapp:v2.1.0",
      "--replicas",
      "5",
      "--port",
      "8080",
    ]);
    expect(create.stderr).toBe("");
    expect(create.code).toBe(0);
    expect(create.stdout.trim()).toBe("webapp.apps.example.com/my-service created");
    const stored = await kube.get<WebAppLike>(WEBAPPS, "my-service", apps.name);
    expect(stored.spec).toEqual({ image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 });

    devctl(["webapp", "create", "b", "-n", apps.name, "--image", "nginx:1.25", "--port", "80"]);
    // Same table as kubectl (AGE can tick between the two calls: retry until both read the same second).
    await eventually(
      () => {
        const ours = devctl(["webapp", "list", "-n", apps.name]).stdout;
        const theirs = kubectl(["get", "wa", "-n", apps.name]).stdout;
        return ours === theirs ? ours : undefined;
      },
      10_000,
      "devctl webapp list to equal kubectl get wa",
    );
    const all = await eventually(
      () => {
        const ours = devctl(["webapp", "list", "-A"]).stdout;
        const theirs = kubectl(["get", "wa", "-A"]).stdout;
        return ours === theirs ? ours : undefined;
      },
      10_000,
      "devctl webapp list -A to equal kubectl get wa -A",
    );
    expect(all).toStartWith("NAMESPACE ");
    expect(all).toMatch(new RegExp(`^${apps.name} +my-service +myregistry/myapp:v2.1.0 +5 `, "m"));

    const json = JSON.parse(
      devctl(["webapp", "get", "my-service", "-n", apps.name, "-o", "json"]).stdout,
    ) as WebAppLike;
    expect(json.spec).toEqual(stored.spec);
    expect(json.metadata.uid).toBe(stored.metadata.uid);
    expect(json.metadata.managedFields).toBeUndefined();
    const yaml = Bun.YAML.parse(
      devctl(["webapp", "get", "my-service", "-n", apps.name, "-o", "yaml"]).stdout,
    ) as WebAppLike;
    expect(yaml.spec).toEqual(stored.spec);
    expect(yaml.metadata.uid).toBe(stored.metadata.uid);
  }, 30_000);

  test("create refuses a port out of range naming spec.port (exit 2), and creates nothing", async () => {
    const r = devctl(["webapp", "create", "bad-port", "-n", apps.name, "--image", "nginx:1.25", "--port", "70000"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("spec.port (--port): must be at most 65535 (got 70000)");
    expect(await getOrUndefined(WEBAPPS, "bad-port", apps.name)).toBeUndefined();
  });

  test("create --image-pull-policy sets spec.imagePullPolicy; a value not in the CRD's enum names field and flag", async () => {
    const ok = devctl([
      "webapp",
      "create",
      "pull-never",
      "-n",
      apps.name,
      "--image",
      "registry.local/web:dev",
      "--port",
      "80",
      "--image-pull-policy",
      "Never",
    ]);
    expect(ok.code).toBe(0);
    const live = (await getOrUndefined(WEBAPPS, "pull-never", apps.name)) as { spec?: { imagePullPolicy?: string } };
    expect(live?.spec?.imagePullPolicy).toBe("Never");
    const bad = devctl(
      ["webapp", "create", "pull-bad", "-n", apps.name, "--image", "x:1", "--port", "80"].concat([
        "--image-pull-policy",
        "sometimes",
      ]),
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'spec.imagePullPolicy (--image-pull-policy): must be one of Always, IfNotPresent, Never (got "sometimes")',
    );
    expect(await getOrUndefined(WEBAPPS, "pull-bad", apps.name)).toBeUndefined();
  });

  test("a missing required flag is a usage error (exit 2)", () => {
    const r = devctl(["webapp", "create", "no-port", "-n", apps.name, "--image", "nginx:1.25"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      "error: required flag --port of \"devctl webapp create\" is not set\nsee 'devctl webapp create --help'\n",
    );
    expect(r.stdout).toBe("");
  });

  test("create --dry-run prints the WebApp as YAML and creates nothing", async () => {
    const r = devctl([
      "webapp",
      "create",
      "dry",
      "-n",
      apps.name,
      "--image",
      "nginx:1.25",
      "--port",
      "80",
      "--dry-run",
    ]);
    expect(r.code).toBe(0);
    expect(Bun.YAML.parse(r.stdout)).toEqual({
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      metadata: { name: "dry", namespace: apps.name },
      spec: { image: "nginx:1.25", replicas: 1, port: 80 },
    });
    expect(await getOrUndefined(WEBAPPS, "dry", apps.name)).toBeUndefined();
  });

  test("get of a WebApp that does not exist fails naming it (exit 1)", () => {
    const r = devctl(["webapp", "get", "nope", "-n", apps.name]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('webapps.apps.example.com "nope" not found');
  });
});

describe("kubectl's output formats and verbs", () => {
  let ns: { name: string; drop: () => Promise<void> };
  beforeAll(async () => {
    ns = await tempNamespace("cli-formats");
    cleanups.push(() => ns.drop());
    for (const [name, labels] of [
      ["alpha", { team: "payments" }],
      ["beta", { team: "search" }],
    ] as const)
      await kube.create(WEBAPPS, {
        apiVersion: "apps.example.com/v1",
        kind: "WebApp",
        metadata: { name, namespace: ns.name, labels },
        spec: { image: "nginx:1.25", replicas: 2, port: 80 },
      });
  });
  const inNs = (...args: string[]) => devctl([...args, "-n", ns.name]);

  test("list and get print name, json, yaml and jsonpath exactly, and -l selects", async () => {
    const live = await kube.list<WebAppLike>(WEBAPPS, { namespace: ns.name });
    const names = live.items.map((w) => w.metadata.name).sort();
    expect(names).toEqual(["alpha", "beta"]);
    expect(inNs("webapp", "list", "-o", "name")).toEqual({
      code: 0,
      stdout: "webapp.apps.example.com/alpha\nwebapp.apps.example.com/beta\n",
      stderr: "",
    });
    expect(inNs("webapp", "list", "-l", "team=payments", "-o", "name").stdout).toBe("webapp.apps.example.com/alpha\n");
    expect(inNs("webapp", "list", "-o", "jsonpath={.items[*].metadata.name}")).toEqual({
      code: 0,
      stdout: "alpha beta",
      stderr: "",
    });
    expect(inNs("webapp", "get", "beta", "-o", "jsonpath={.spec.port}").stdout).toBe("80");
    const json = JSON.parse(inNs("webapp", "list", "-o", "json").stdout);
    expect(json.kind).toBe("List");
    expect(json.items.map((w: WebAppLike) => w.metadata.uid)).toEqual(live.items.map((w) => w.metadata.uid));
    expect(json.items[0].metadata.managedFields).toBeUndefined();
    const yaml = Bun.YAML.parse(inNs("webapp", "list", "-o", "yaml").stdout) as { items: WebAppLike[] };
    expect(yaml.items.map((w) => w.metadata.name)).toEqual(names);
    expect(inNs("webapp", "list", "-o", "name", "-l", "team=nobody")).toEqual({ code: 0, stdout: "", stderr: "" });
    // Same as kubectl get -o name / jsonpath.
    expect(inNs("webapp", "list", "-o", "name").stdout).toBe(
      kubectl(["get", "wa", "-n", ns.name, "-o", "name"]).stdout,
    );
    const wide = lines(inNs("webapp", "list", "-o", "wide").stdout);
    expect(wide[0]).toMatch(
      /^NAME +IMAGE +DESIRED +AVAILABLE +READY +REASON +AGE +PORT +PROGRESSING +DEGRADED +MINPODS +MAXPODS +URL$/,
    );
  });

  test("--watch prints the current rows, then one row per change", async () => {
    const proc = Bun.spawn([DEVCTL, "webapp", "list", "-n", ns.name, "--watch", "-o", "name"], {
      env: { ...process.env, KUBECONFIG: kubeconfig },
      stdout: "pipe",
      stderr: "pipe",
    });
    let seen = "";
    void (async () => {
      const d = new TextDecoder();
      for await (const c of proc.stdout as ReadableStream<Uint8Array>) seen += d.decode(c, { stream: true });
    })();
    await eventually(() => seen.split("\n").length > 2, 10_000, "the first rows");
    expect(inNs("webapp", "scale", "alpha", "--replicas", "3").stdout).toBe("webapp.apps.example.com/alpha scaled\n");
    await eventually(() => seen.split("\n").length > 3, 10_000, "a row for the change");
    proc.kill("SIGINT");
    await proc.exited;
    expect(seen.split("\n").slice(0, 3)).toEqual([
      "webapp.apps.example.com/alpha",
      "webapp.apps.example.com/beta",
      "webapp.apps.example.com/alpha",
    ]);
  });

  test("scale and delete with --dry-run=server change nothing; without it they do", async () => {
    expect(inNs("webapp", "scale", "beta", "--replicas", "7", "--dry-run=server").stdout).toBe(
      "webapp.apps.example.com/beta scaled (server dry run)\n",
    );
    expect((await kube.get<WebAppLike>(WEBAPPS, "beta", ns.name)).spec.replicas).toBe(2);
    expect(inNs("webapp", "delete", "beta", "--dry-run=server").stdout).toBe(
      'webapp.apps.example.com "beta" deleted (server dry run)\n',
    );
    expect(await getOrUndefined(WEBAPPS, "beta", ns.name)).toBeDefined();
    expect(inNs("webapp", "create", "gamma", "--image", "nginx", "--port", "80", "--dry-run=server")).toEqual({
      code: 0,
      stdout: "webapp.apps.example.com/gamma created (server dry run)\n",
      stderr: "",
    });
    expect(await getOrUndefined(WEBAPPS, "gamma", ns.name)).toBeUndefined();
    expect(inNs("webapp", "delete", "beta").stdout).toBe('webapp.apps.example.com "beta" deleted\n');
    expect(await getOrUndefined(WEBAPPS, "beta", ns.name)).toBeUndefined();
    expect(inNs("webapp", "delete", "beta").code).toBe(1);
    expect(inNs("webapp", "delete", "beta", "--ignore-not-found")).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("describe shows spec, conditions and events", async () => {
    const r = inNs("webapp", "describe", "alpha");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Name:         alpha\nNamespace:    ${ns.name}\nLabels:       team=payments\n`);
    expect(r.stdout).toContain("Spec:\n  Image:     nginx:1.25\n  Replicas:  3\n  Port:      80\n");
    expect(r.stdout).toMatch(/\nConditions:\n/);
    expect(r.stdout).toMatch(/\nEvents:/);
  });

  test("--request-timeout bounds each request", () => {
    const r = inNs("webapp", "list", "--request-timeout", "1ms");
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
    expect(r.stderr).toMatch(/^error: .*no answer from https:\/\/\S+ within 1 ms/);
    expect(inNs("webapp", "list", "--request-timeout", "0", "-o", "name").code).toBe(0);
  });

  test("operator logs without a leader says why, exit 1", () => {
    const r = devctl(["operator", "logs", "-n", ns.name]);
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
    expect(r.stderr).toBe(
      `error: no Lease ${ns.name}/webapp-operator-lock: the operator is not installed in namespace ${ns.name} or has never run there (devctl operator status -n ${ns.name})\n`,
    );
  });

  test("version -o json names the client, the server and the operator (not installed here)", () => {
    const r = devctl(["version", "-o", "json", "-n", `${ns.name}-none`]);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.stdout);
    expect(v.clientVersion.version).toBe(version);
    expect(v.serverVersion.gitVersion).toMatch(/^v\d+\.\d+\.\d+/);
    expect(v.operatorVersion).toEqual({ namespace: `${ns.name}-none` });
  });
});

describe("help", () => {
  test("every command has --help with examples (exit 0)", () => {
    const commands = [
      [],
      ["operator"],
      ["operator", "install"],
      ["operator", "uninstall"],
      ["operator", "status"],
      ["operator", "manifests"],
      ["webapp", "list"],
      ["webapp", "get"],
      ["webapp", "create"],
    ];
    for (const c of commands) {
      const r = devctl([...c, "--help"]);
      expect({ c, code: r.code }).toEqual({ c, code: 0 });
      if (c.length !== 1) expect({ c, examples: r.stdout.includes("Examples:") }).toEqual({ c, examples: true });
    }
  });
});

describe("errors", () => {
  test("an unreachable API server: exit 1 and one line naming the server and the context, no stack trace", () => {
    const file = join(scratch, "unreachable.kubeconfig");
    writeFileSync(file, kubeconfigYaml("https://127.0.0.1:1", "nowhere-ctx", { insecure: true, token: "x" }));
    for (const args of [
      ["operator", "install"],
      ["operator", "status"],
      ["webapp", "list"],
    ]) {
      const r = devctl([...args, "--kubeconfig", file]);
      expect(r.code).toBe(1);
      const error = lines(r.stderr).filter((l) => l.startsWith("error:"));
      expect(error.length).toBe(1);
      expect(error[0]).toContain("https://127.0.0.1:1");
      expect(error[0]).toContain('context "nowhere-ctx"');
      expect(r.stderr).not.toMatch(/^\s+at /m);
    }
  });

  test("a token without permissions: exit 1 and a message naming the verbs and resources", async () => {
    const ns = await tempNamespace("cli-nobody");
    cleanups.push(ns.drop);
    await kube.create(SERVICEACCOUNTS, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "nobody", namespace: ns.name },
    });
    const file = join(scratch, "nobody.kubeconfig");
    writeFileSync(file, kubeconfigYaml(serverUrl(), "nobody-ctx", { ca: caPem(), token: tokenFor("nobody", ns.name) }));

    const install = devctl(["operator", "install", "--kubeconfig", file, "-n", `${INSTALL_NS}-nobody`]);
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('missing permissions for the install (context "nobody-ctx")');
    expect(install.stderr).toContain(`get, create, patch customresourcedefinitions.apiextensions.k8s.io`);
    expect(install.stderr).toContain(`get, create, patch deployments.apps in namespace "${INSTALL_NS}-nobody"`);
    expect(await getOrUndefined(NAMESPACES, `${INSTALL_NS}-nobody`)).toBeUndefined();

    const list = devctl(["webapp", "list", "--kubeconfig", file, "-n", apps.name]);
    expect(list.code).toBe(1);
    expect(list.stderr).toContain(`forbidden: cannot list webapps.apps.example.com in namespace "${apps.name}"`);
  }, 30_000);
});

describe("the operator image's entrypoint, run as the pod runs it", () => {
  test("reconciles with exactly the installed RBAC, shows up in status, and names a permission that is taken away", async () => {
    const watched = await tempNamespace("cli-incluster");
    cleanups.push(watched.drop);
    const dep = await kube.get<KubeObject & { spec: any }>(DEPLOYMENTS, "webapp-operator", INSTALL_NS);
    const container = dep.spec.template.spec.containers[0];
    const entrypoint = JSON.parse(
      (await Bun.file(join(ROOT, "Dockerfile")).text()).match(/^ENTRYPOINT (.*)$/m)![1]!,
    ) as string[];
    const port = await freePort();
    const metricsPort = await freePort();
    // The pod's args, except that the servers listen on free loopback ports instead of :8443 (HTTPS) and :8081.
    const args = (container.args as string[]).map((a) =>
      a.startsWith("--health-probe-bind-address=")
        ? `--health-probe-bind-address=127.0.0.1:${port}`
        : a.startsWith("--metrics-bind-address=")
          ? `--metrics-bind-address=127.0.0.1:${metricsPort}`
          : a,
    );
    // The binary is bind-mounted at a fixed path first, as the image has it at one: the clone may sit
    // under /tmp, which the pod's empty /tmp below would hide.
    const command = ["/run/devctl", ...entrypoint.slice(1), ...args];

    const secrets = join(scratch, "serviceaccount");
    sh(["mkdir", "-p", secrets]);
    writeFileSync(join(secrets, "token"), tokenFor("webapp-operator", INSTALL_NS));
    writeFileSync(join(secrets, "ca.crt"), caPem());
    writeFileSync(join(secrets, "namespace"), INSTALL_NS);
    const uid = String(dep.spec.template.spec.securityContext.runAsUser);
    // Inside a private mount namespace: the token, CA and namespace at the standard path (read-only, as the
    // kubelet mounts them), an empty /tmp (the emptyDir), a read-only root filesystem, then the binary as
    // the pod's user with no capabilities and no privilege escalation.
    const script = [
      "set -e",
      "mount -t tmpfs -o mode=0755 tmpfs /run",
      "mkdir -p /run/secrets/kubernetes.io/serviceaccount",
      'cp "$SA_SOURCE"/token "$SA_SOURCE"/ca.crt "$SA_SOURCE"/namespace /run/secrets/kubernetes.io/serviceaccount/',
      "chmod 0644 /run/secrets/kubernetes.io/serviceaccount/*",
      "touch /run/devctl",
      'mount --bind "$DEVCTL_BIN" /run/devctl',
      "mount -o remount,ro,bind /run",
      "mount -t tmpfs -o mode=1777 tmpfs /tmp",
      "mount -o remount,ro,bind /",
      `exec setpriv --reuid=${uid} --regid=${uid} --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- "$@"`,
    ].join("\n");
    const env = {
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: "/tmp",
      SA_SOURCE: secrets,
      DEVCTL_BIN: DEVCTL,
      KUBERNETES_SERVICE_HOST: "127.0.0.1",
      KUBERNETES_SERVICE_PORT: new URL(serverUrl()).port,
      // Only this suite's namespace: other suites' operators run on the same cluster (the pod sets none).
      WATCH_NAMESPACE: watched.name,
      // The Deployment's downward-API env: the name of one of its pods (KWOK runs no process for it).
      POD_NAME: await podOfInstall(),
    };
    let logs = "";
    const proc = Bun.spawn(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", ...command], {
      env,
      stdout: "pipe",
      stderr: "pipe",
    });
    const drain = async (s: ReadableStream<Uint8Array>) => {
      const d = new TextDecoder();
      for await (const c of s) logs += d.decode(c, { stream: true });
    };
    void drain(proc.stdout as ReadableStream<Uint8Array>);
    void drain(proc.stderr as ReadableStream<Uint8Array>);
    cleanups.push(async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    });

    await eventually(
      async () => {
        if (proc.exitCode !== null) throw new Error(`the operator exited with ${proc.exitCode}: ${logs}`);
        return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;
      },
      30_000,
      "the in-cluster operator to be ready",
    );
    expect(logs).toContain(`starting the WebApp operator against https://127.0.0.1:${env.KUBERNETES_SERVICE_PORT}`);
    // Secure metrics work as the pod runs (read-only root, user 65532): HTTPS, and no token is 401.
    const scrape = await fetch(`https://127.0.0.1:${metricsPort}/metrics`, { tls: { rejectUnauthorized: false } });
    expect(scrape.status).toBe(401);

    // It reconciles with the installed RBAC: Deployment, Service, status, events.
    const create = devctl([
      "webapp",
      "create",
      "in-cluster",
      "-n",
      watched.name,
      "--image",
      "nginx:1.25",
      "--replicas",
      "2",
      "--port",
      "80",
    ]);
    expect(create.code).toBe(0);
    const ready = await eventually(
      async () => {
        const wa = await getOrUndefined<WebAppLike>(WEBAPPS, "in-cluster", watched.name);
        return conditionOf(wa, "Available")?.status === "True" && wa?.status?.readyReplicas === 2 ? wa : undefined;
      },
      60_000,
      "the WebApp to become Available through the in-cluster operator",
    );
    expect(ready.status?.readyReplicas).toBe(2);
    expect(await getOrUndefined(DEPLOYMENTS, "in-cluster-deployment", watched.name)).toBeDefined();
    await eventsOnceSeen(watched.name, "in-cluster", (e) => e.reason === "Created", "a Created event");
    expect(logs).not.toContain("forbidden");

    // It leads through the Lease in the install namespace, which status shows.
    const lease = await eventually(
      async () =>
        (
          await getOrUndefined<KubeObject & { spec: { holderIdentity?: string } }>(
            LEASES,
            "webapp-operator-lock",
            INSTALL_NS,
          )
        )?.spec?.holderIdentity,
      30_000,
      "the lease",
    );
    const status = devctl(["operator", "status", "-n", INSTALL_NS]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Version:   ${version}`);
    expect(status.stdout).toContain(`Image:     ${IMAGE}`);
    expect(status.stdout).toContain("Replicas:  2/2 ready");
    expect(status.stdout).toMatch(
      new RegExp(`Leader: +${lease.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, last renewed \\d+s ago at \\d{4}-`),
    );
    expect(status.stdout).toMatch(/WebApps: +\d+ in all namespaces: [1-9]\d* Available, \d+ Degraded, \d+ Progressing/);

    // Its footprint, for the Deployment's requests and limits (deployment.ts).
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(await Bun.file(`/proc/${proc.pid}/status`).text())?.[1]);
    console.error(`in-cluster operator RSS after its first reconcile: ${(rss / 1024).toFixed(1)} MiB`);
    expect(rss / 1024).toBeLessThan(192);

    // Take one rule away: creating Deployments.
    const role = await kube.get<
      KubeObject & { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }
    >(CLUSTERROLES, clusterRoleName(INSTALL_NS));
    const rules = operatorRules().map((r) =>
      r.resources.includes("deployments") ? { ...r, verbs: r.verbs.filter((v) => v !== "create") } : r,
    );
    await kube.replace(CLUSTERROLES, { ...role, rules });
    const second = devctl([
      "webapp",
      "create",
      "no-create",
      "-n",
      watched.name,
      "--image",
      "nginx:1.25",
      "--port",
      "80",
    ]);
    expect(second.code).toBe(0);
    // Server-side apply of a new object needs create: the API server names exactly that permission.
    const missing = `cannot create resource "deployments" in API group "apps" in the namespace "${watched.name}"`;
    const logged = () =>
      logs.split("\n").some((l) => l.startsWith("{") && (JSON.parse(l) as { msg: string }).msg.includes(missing));
    await eventually(logged, 30_000, `the operator's log to say "${missing}"`).catch((e: Error) => {
      throw new Error(`${e.message}\n--- the operator's log, last lines ---\n${logs.slice(-4000)}`);
    });
    const degraded = await eventually(
      async () => {
        const wa = await getOrUndefined<WebAppLike>(WEBAPPS, "no-create", watched.name);
        const c = conditionOf(wa, "Degraded");
        return c?.status === "True" ? c : undefined;
      },
      30_000,
      "the WebApp to be Degraded",
    );
    expect(degraded.message).toContain(missing);
    await eventsOnceSeen(
      watched.name,
      "no-create",
      (e) => e.type === "Warning" && e.message.includes(missing),
      "the Warning event",
    );

    // Install again repairs the tampered rule and reports just that object as configured.
    const repair = devctl(["operator", "install", "-n", INSTALL_NS, "--image", IMAGE]);
    expect(repair.code).toBe(0);
    expect(lines(repair.stdout).filter((l) => !l.endsWith(" unchanged"))).toEqual([
      `clusterrole.rbac.authorization.k8s.io/${clusterRoleName(INSTALL_NS)} configured`,
    ]);
    await eventually(
      async () =>
        conditionOf(await getOrUndefined<WebAppLike>(WEBAPPS, "no-create", watched.name), "Available")?.status ===
        "True",
      60_000,
      "the WebApp to recover once the rule is back",
    );

    // SIGTERM: stops cleanly (exit 0) and releases the lease.
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const released = await kube.get<KubeObject & { spec: { holderIdentity?: string } }>(
      LEASES,
      "webapp-operator-lock",
      INSTALL_NS,
    );
    expect(released.spec.holderIdentity ?? "").toBe("");
  }, 240_000);
});

describe("devctl operator uninstall", () => {
  test("--delete-crd without --yes and without a terminal refuses, says what it would delete, and deletes nothing", async () => {
    const r = devctl(["operator", "uninstall", "-n", INSTALL_NS, "--delete-crd"], {}, "y\n");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /--delete-crd deletes the CustomResourceDefinition webapps\.apps\.example\.com at \S+ and with it \d+ WebApps? in \d+ namespaces? \([^)]*\), and so \d+ Deployments? and \d+ Services? they own\./,
    );
    expect(r.stderr).toContain(apps.name);
    expect(r.stderr).toContain("refusing to delete the CRD without confirmation: stdin is not a terminal");
    expect(r.stdout).toBe("");
    expect(await getOrUndefined(CRDS, CRD_NAME)).toBeDefined();
    expect(await getOrUndefined(DEPLOYMENTS, "webapp-operator", INSTALL_NS)).toBeDefined();
    expect(await getOrUndefined(WEBAPPS, "my-service", apps.name)).toBeDefined();
  });

  test("--delete-crd on a terminal asks first, and an answer other than y deletes nothing", async () => {
    // `script` gives the command a pseudo-terminal; "n" is typed at the prompt.
    const cmd = [DEVCTL, "operator", "uninstall", "-n", INSTALL_NS, "--delete-crd"].join(" ");
    const r = sh(["script", "-qec", cmd, "/dev/null"], { env: { KUBECONFIG: kubeconfig }, stdin: "n\n" });
    expect(r.stdout).toContain("Delete them? [y/N]");
    expect(r.stdout).toContain("nothing deleted");
    expect(r.code).toBe(1);
    expect(await getOrUndefined(CRDS, CRD_NAME)).toBeDefined();
    expect(await getOrUndefined(DEPLOYMENTS, "webapp-operator", INSTALL_NS)).toBeDefined();
  });

  test("removes the operator, its RBAC and its namespace, and keeps the CRD and every WebApp", async () => {
    const r = devctl(["operator", "uninstall", "-n", INSTALL_NS]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("deployment.apps/webapp-operator deleted");
    expect(r.stdout).toContain(`clusterrolebinding.rbac.authorization.k8s.io/${clusterRoleName(INSTALL_NS)} deleted`);
    expect(r.stdout).toContain(`namespace/${INSTALL_NS} deleted`);
    expect(r.stdout).toContain(`customresourcedefinition.apiextensions.k8s.io/${CRD_NAME} kept`);
    expect(await getOrUndefined(CLUSTERROLES, clusterRoleName(INSTALL_NS))).toBeUndefined();
    expect(await getOrUndefined(DEPLOYMENTS, "webapp-operator", INSTALL_NS)).toBeUndefined();
    expect(await getOrUndefined(CRDS, CRD_NAME)).toBeDefined();
    expect((await kube.get<WebAppLike>(WEBAPPS, "my-service", apps.name)).spec.replicas).toBe(5);

    const status = devctl(["operator", "status", "-n", INSTALL_NS]);
    expect(status.code).toBe(1);
    expect(status.stdout).toContain("not installed");
  });
});

/** The name of a pod of the installed Deployment, as the downward API gives it to its container. */
async function podOfInstall(): Promise<string> {
  const pods = await kube.list(PODS, {
    namespace: INSTALL_NS,
    labelSelector: "app.kubernetes.io/name=devctl-operator",
  });
  const name = pods.items[0]?.metadata.name;
  if (!name) throw new Error(`no pod of the operator Deployment in ${INSTALL_NS}`);
  return name;
}

// --- helpers: kubeconfigs for other identities -------------------------------------------------

function adminConfig(): { server: string; ca: string } {
  const cfg = Bun.YAML.parse(readFileSync(kubeconfig, "utf8")) as { clusters: { cluster: Record<string, string> }[] };
  const c = cfg.clusters[0]!.cluster;
  const ca = c["certificate-authority-data"]
    ? Buffer.from(c["certificate-authority-data"], "base64").toString("utf8")
    : readFileSync(c["certificate-authority"] as string, "utf8");
  return { server: c.server as string, ca };
}
const serverUrl = () => adminConfig().server;
const caPem = () => adminConfig().ca;

/** A token for a ServiceAccount through the TokenRequest API (kubectl create token). */
function tokenFor(sa: string, namespace: string): string {
  const r = kubectl(["create", "token", sa, "-n", namespace, "--duration=1h"]);
  if (r.code !== 0) throw new Error(`kubectl create token ${sa}: ${r.stderr}`);
  return r.stdout.trim();
}

function kubeconfigYaml(
  server: string,
  context: string,
  auth: { ca?: string; insecure?: boolean; token: string },
): string {
  const cluster: Record<string, unknown> = { server };
  if (auth.ca) cluster["certificate-authority-data"] = Buffer.from(auth.ca).toString("base64");
  if (auth.insecure) cluster["insecure-skip-tls-verify"] = true;
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster }],
    users: [{ name: "u", user: { token: auth.token } }],
    contexts: [{ name: context, context: { cluster: "c", user: "u", namespace: "default" } }],
    "current-context": context,
  });
}
