/**
 * Steps of the main job (`npm start`, start.ts) shared by its two ways of running the operator.
 *
 * - say/fail/run/eventually: progress on stderr with elapsed seconds; a failed step exits 1 naming it. run() does not
 *   block the signal handlers (signals.ts), and on a signal the job goes no further.
 * - applyExampleAndConverge(): applies crd/examples/my-service.yaml (field manager kubectl) and waits
 *   until my-service-deployment has 5 ready replicas and the WebApp is Available.
 * - localOperatorArgs(): how that operator is run when there is no real node (its checks: start-steps.test.ts).
 * - show(): prints `$ kubectl <args>` and kubectl's table, with the pinned kubectl when it is built,
 *   else the machine's, else devctl's own listing (webapps) or nothing.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { DEPLOYMENT_RESOURCE, WEBAPP_RESOURCE } from "../api/webapp.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import { installShutdown, runChild } from "./signals.ts";

export const root = resolve(import.meta.dir, "../..");
export const bun = process.execPath;
export const devctl = join(root, "dist/devctl");
const started = Date.now();

/**
 * `devctl` arguments of the operator the main job runs on this machine when there is no real node: the Lease in
 * default, and /healthz, /readyz and /metrics on one loopback address over plain HTTP (secure metrics, the default,
 * would need a port of their own and a token to be read).
 */
export const localOperatorArgs = (addr: string): string[] => [
  "operator",
  "run",
  "--lease-namespace",
  "default",
  "--metrics-bind-address",
  addr,
  "--health-probe-bind-address",
  addr,
  "--metrics-secure=false",
];

export const say = (msg: string) =>
  console.error(`[start ${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s] ${msg}`);

export function fail(msg: string): never {
  console.error(`error: ${msg}`);
  process.exit(1);
}

export async function run(
  title: string,
  cmd: string[],
  opts: { capture?: boolean; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  say(title);
  const r = await runChild(cmd, { cwd: root, ...opts });
  installShutdown().signal.throwIfAborted();
  if (r.code !== 0) fail(`${title} failed (exit ${r.code})`);
  return r.stdout;
}

export async function eventually<T>(
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

type Dep = KubeObject & { status?: { readyReplicas?: number; replicas?: number } };
type Wa = KubeObject & { status?: { conditions?: { type: string; status: string; message: string }[] } };

export async function applyExampleAndConverge(client: KubeClient, namespace: string): Promise<void> {
  const example = Bun.YAML.parse(readFileSync(join(root, "crd/examples/my-service.yaml"), "utf8")) as KubeObject;
  say(`applying crd/examples/my-service.yaml in namespace ${namespace}`);
  await client
    .apply(
      WEBAPP_RESOURCE,
      { ...example, metadata: { ...example.metadata, namespace } },
      { fieldManager: "kubectl", force: true },
    )
    .catch((e: Error) => fail(e.message));
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
}

/** The pinned kubectl (run through the cluster CLI) when built, else the machine's, else none. */
export async function kubectlBinary(): Promise<string[] | undefined> {
  const pinned = Bun.spawnSync([bun, "run", join(root, "tests/cluster/cli.ts"), "kubectl", "version", "--client"], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (pinned.exitCode === 0) return [bun, "run", join(root, "tests/cluster/cli.ts"), "kubectl"];
  const found = Bun.which("kubectl");
  return found ? [found] : undefined;
}

export async function show(args: string[], kubeconfig: string, client: KubeClient, namespace: string): Promise<void> {
  console.log(`\n$ kubectl ${args.join(" ")}`);
  const kubectl = await kubectlBinary();
  if (kubectl) {
    const r = Bun.spawnSync([...kubectl, ...args, ...(args.includes("-n") ? [] : ["-n", namespace])], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, KUBECONFIG: kubeconfig },
    });
    process.stdout.write(r.stdout.toString() || r.stderr.toString());
  } else if (args[1] === "webapps") {
    const r = Bun.spawnSync([devctl, "webapp", "list"], { env: { ...process.env, KUBECONFIG: kubeconfig } });
    process.stdout.write(r.stdout.toString());
  } else if (args[1] === "deployments") {
    const list = await client.list<Dep>(DEPLOYMENT_RESOURCE, { namespace });
    for (const d of list.items)
      console.log(`${d.metadata.name}  ${d.status?.readyReplicas ?? 0}/${d.status?.replicas ?? 0}`);
  }
}
