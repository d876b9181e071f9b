/**
 * The main job (`npm start`): from a fresh clone to the seed's example converged, with progress shown.
 *
 * 1. builds dist/devctl;
 * 2. picks the cluster: --kubeconfig / $KUBECONFIG / ~/.kube/config when one is configured (it must
 *    answer); otherwise the local control plane (tests/cluster), built from Go modules on first use;
 * 3. installs the WebApp CRD (server-side apply) and waits until it is Established;
 * 4. runs the operator from dist/devctl (`operator run`, leader election on, lease in "default");
 * 5. applies crd/examples/my-service.yaml (my-service, myregistry/myapp:v2.1.0, 5 replicas, port 8080),
 *    waits until my-service-deployment has 5 ready replicas and the WebApp is Available;
 * 6. shows `kubectl get webapps` and `kubectl get deployments`.
 * Then, on a terminal, the operator keeps running until Ctrl-C; without one (scripts, CI) it stops
 * cleanly and the command exits 0. The local cluster stays up (`npm run cluster:down` stops it).
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { buildWebAppCrd } from "../api/crd.ts";
import { CRD_NAME, CRD_RESOURCE, DEPLOYMENT_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import { createKubeClient } from "../kube/client.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";

const root = resolve(import.meta.dir, "../..");
const bun = process.execPath;
const devctl = join(root, "dist/devctl");
const started = Date.now();
const say = (msg: string) => console.error(`[start ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);

function fail(msg: string): never {
  console.error(`error: ${msg}`);
  process.exit(1);
}

function run(title: string, cmd: string[], opts: { capture?: boolean } = {}): string {
  say(title);
  const r = Bun.spawnSync(cmd, {
    cwd: root,
    stdout: opts.capture ? "pipe" : "inherit",
    stderr: "inherit",
    env: process.env,
  });
  if (r.exitCode !== 0) fail(`${title} failed (exit ${r.exitCode})`);
  return opts.capture ? (r.stdout?.toString() ?? "") : "";
}

async function eventually<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  progress?: () => Promise<string>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = 0;
  while (Date.now() < deadline) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (progress && Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      say(`  ${await progress().catch((e) => String(e))}`);
    }
    await Bun.sleep(250);
  }
  fail(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
}

/** The configured cluster, if any: --kubeconfig, $KUBECONFIG, ~/.kube/config. */
function configuredKubeconfig(): string | undefined {
  const flag = process.argv.indexOf("--kubeconfig");
  if (flag > 0 && process.argv[flag + 1]) return process.argv[flag + 1];
  if (process.env.KUBECONFIG) return process.env.KUBECONFIG;
  const def = join(process.env.HOME ?? homedir(), ".kube", "config");
  return existsSync(def) ? def : undefined;
}

run("building dist/devctl", [bun, "run", "src/build/build.ts"]);

let kubeconfig = configuredKubeconfig();
if (kubeconfig) {
  say(`using the configured cluster (${kubeconfig})`);
} else {
  say(
    "no cluster configured: starting the local control plane (the first run builds it from Go modules, ~7 min on 2 cores)",
  );
  const out = run("starting the local control plane", [bun, "run", "tests/cluster/cli.ts", "up"], { capture: true });
  kubeconfig = /^KUBECONFIG=(.+)$/m.exec(out)?.[1]?.trim() ?? fail("the control plane did not print its kubeconfig");
}
const client: KubeClient = (() => {
  try {
    // A ":"-separated $KUBECONFIG is merged by the loader itself.
    return createKubeClient(kubeconfig.includes(":") ? {} : { kubeconfig });
  } catch (e) {
    return fail((e as Error).message);
  }
})();
const version = await client.raw<{ gitVersion: string }>("GET", "/version").catch((e: Error) => fail(e.message));
say(`cluster ${client.server} answers (Kubernetes ${version.gitVersion})`);

say(`installing the WebApp CRD (${CRD_NAME})`);
await client
  .apply(CRD_RESOURCE, buildWebAppCrd(), { fieldManager: "devctl", force: true })
  .catch((e: Error) => fail(e.message));
await eventually(
  "the CRD to be Established",
  async () => {
    const crd = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(
      CRD_RESOURCE,
      CRD_NAME,
    );
    return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True") || undefined;
  },
  60_000,
);

const port = (() => {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = s.port;
  s.stop(true);
  return p;
})();
say(`starting the operator: devctl operator run (health and metrics on http://127.0.0.1:${port})`);
const operator = Bun.spawn(
  [
    devctl,
    "operator",
    "run",
    "--lease-namespace",
    "default",
    "--metrics-bind-address",
    `127.0.0.1:${port}`,
    "--health-probe-bind-address",
    `127.0.0.1:${port}`,
  ],
  { cwd: root, stdout: "inherit", stderr: "inherit", env: { ...process.env, KUBECONFIG: kubeconfig } },
);
const stopOperator = async () => {
  if (operator.exitCode === null) operator.kill("SIGTERM");
  return operator.exited;
};
process.on("SIGINT", () => void stopOperator().then((code) => process.exit(code)));
await eventually(
  "the operator to be ready",
  async () => {
    if (operator.exitCode !== null) fail(`the operator exited with code ${operator.exitCode}`);
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).ok || undefined;
  },
  60_000,
);

const example = Bun.YAML.parse(readFileSync(join(root, "crd/examples/my-service.yaml"), "utf8")) as KubeObject;
const namespace = client.namespace;
say(`applying crd/examples/my-service.yaml in namespace ${namespace}`);
await client
  .apply(
    WEBAPP_RESOURCE,
    { ...example, metadata: { ...example.metadata, namespace } },
    { fieldManager: "kubectl", force: true },
  )
  .catch((e: Error) => fail(e.message));

type Dep = KubeObject & { status?: { readyReplicas?: number; replicas?: number } };
type Wa = KubeObject & { status?: { conditions?: { type: string; status: string; message: string }[] } };
await eventually(
  "my-service to converge",
  async () => {
    const [dep, wa] = await Promise.all([
      client.get<Dep>(DEPLOYMENT_RESOURCE, "my-service-deployment", namespace),
      client.get<Wa>(WEBAPP_RESOURCE, "my-service", namespace),
    ]);
    const available = wa.status?.conditions?.find((c) => c.type === "Available")?.status === "True";
    return dep.status?.readyReplicas === 5 && available ? true : undefined;
  },
  180_000,
  async () => {
    const dep = await client.get<Dep>(DEPLOYMENT_RESOURCE, "my-service-deployment", namespace).catch(() => undefined);
    return dep
      ? `my-service-deployment: ${dep.status?.readyReplicas ?? 0}/5 replicas ready`
      : "waiting for my-service-deployment to be created";
  },
);
say("converged");

const kubectl = Bun.which("kubectl");
for (const what of ["webapps", "deployments"]) {
  console.log(`\n$ kubectl get ${what}`);
  if (kubectl) {
    const r = Bun.spawnSync([kubectl, "get", what, "-n", namespace], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    process.stdout.write(r.stdout.toString());
  } else if (what === "webapps") {
    process.stdout.write(
      Bun.spawnSync([devctl, "webapp", "list"], { env: { ...process.env, KUBECONFIG: kubeconfig } }).stdout.toString(),
    );
  } else {
    const list = await client.list<Dep>(DEPLOYMENT_RESOURCE, { namespace });
    for (const d of list.items)
      console.log(`${d.metadata.name}  ${d.status?.readyReplicas ?? 0}/${d.status?.replicas ?? 0}`);
  }
}

if (process.stdin.isTTY) {
  console.error(
    `\nThe operator keeps running: try \`KUBECONFIG=${kubeconfig} kubectl scale deployment my-service-deployment --replicas=1\` and watch it heal.\nCtrl-C stops it; \`npm run cluster:down\` stops the local cluster.`,
  );
  process.exit(await operator.exited);
}
const code = await stopOperator();
say(
  `operator stopped (exit ${code}); the cluster stays up (KUBECONFIG=${kubeconfig}; npm run cluster:down stops a local one)`,
);
process.exit(code);
