/**
 * The main job (`npm start`): from a fresh clone to the seed's example converged, with progress shown.
 *
 * 1. builds dist/devctl;
 * 2. picks the cluster: --kubeconfig / $KUBECONFIG / ~/.kube/config when one is configured (it must
 *    answer); otherwise the local control plane (tests/cluster), built from Go modules on first use;
 * 3. on the local cluster with its real node (Linux, root): runs the operator the way users do —
 *    `npm run image` (the Dockerfile, built offline, imported onto the node), then
 *    `devctl operator install --image <it> --wait` scheduled onto the real node; elsewhere (no real
 *    node, or your own cluster) it says why and runs the operator from dist/devctl (`operator run`,
 *    leader election on, lease in "default") after installing the CRD;
 * 4. applies crd/examples/my-service.yaml (my-service, myregistry/myapp:v2.1.0, 5 replicas, port 8080),
 *    waits until my-service-deployment has 5 ready replicas and the WebApp is Available;
 * 5. shows `kubectl get webapps`, `kubectl get deployments` and, in-cluster,
 *    `kubectl -n devctl-system get pods -o wide` (with the pinned kubectl v1.36.3).
 * In-cluster the operator keeps running there (`devctl operator uninstall` removes it). Run locally, on a
 * terminal it keeps running until Ctrl-C; without one (scripts, CI) it stops cleanly and the command
 * exits 0. The local cluster stays up (`npm run cluster:down` stops it).
 * On SIGINT, SIGTERM or SIGHUP (signals.ts) it stops the processes it started (the build, the operator run
 * here) and exits 128 + signo; before the example converged that includes a local cluster it started, which
 * is then stopped too. After that, the cluster is the job's result and stays up, as on every successful run.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { buildWebAppCrd } from "../api/crd.ts";
import { CRD_NAME, CRD_RESOURCE } from "../api/webapp.ts";
import { createKubeClient } from "../kube/client.ts";
import type { KubeClient, KubeObject } from "../kube/types.ts";
import {
  applyExampleAndConverge,
  bun,
  devctl,
  eventually,
  fail,
  localOperatorArgs,
  root,
  run,
  say,
  show,
} from "./_start-steps.ts";
import { installShutdown } from "./signals.ts";

const shutdown = installShutdown(say);
/** The local control plane this job started and has not yet handed over (the example converged): a signal stops it. */
let clusterToStop = false;
shutdown.onShutdown(async () => {
  if (!clusterToStop) return;
  say("stopping the local control plane this job started");
  await Bun.spawn([bun, "run", "tests/cluster/cli.ts", "down"], { cwd: root, stdout: "inherit", stderr: "inherit" })
    .exited;
});

/** The configured cluster, if any: --kubeconfig, $KUBECONFIG, ~/.kube/config. */
function configuredKubeconfig(): string | undefined {
  const flag = process.argv.indexOf("--kubeconfig");
  if (flag > 0 && process.argv[flag + 1]) return process.argv[flag + 1];
  if (process.env.KUBECONFIG) return process.env.KUBECONFIG;
  const def = join(process.env.HOME ?? homedir(), ".kube", "config");
  return existsSync(def) ? def : undefined;
}

/** The local cluster's real node, or why the operator runs outside the cluster. */
function realNodeOrWhy(local: boolean): { up: true } | { up: false; why: string } {
  if (!local) {
    return {
      up: false,
      why:
        "your own cluster may not have the image: the operator runs here from dist/devctl " +
        "(to run it in the cluster: npm run image, load the archive, devctl operator install --image <ref>)",
    };
  }
  const r = Bun.spawnSync([bun, "run", "tests/cluster/cli.ts", "status"], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  });
  const node = /^REAL_NODE=(\S+)$/m.exec(r.stdout.toString())?.[1];
  if (node && node !== "none") return { up: true };
  return { up: false, why: `the local cluster has no real node (${r.stderr.toString().trim() || "unknown reason"})` };
}

/** npm run image, then install onto the real node; resolves to the operator's namespace. */
async function operatorInCluster(kubeconfig: string): Promise<string> {
  const out = await run(
    "building the operator image (npm run image) and importing it onto the real node",
    [bun, "run", "src/build/image.ts"],
    { capture: true },
  );
  const image = /^IMAGE=(\S+)$/m.exec(out)?.[1] ?? fail("npm run image printed no IMAGE= line");
  const installed = await run(
    `devctl operator install --image ${image} --wait, onto the real node`,
    [bun, "run", "tests/cluster/cli.ts", "install-operator", image],
    { capture: true, env: { KUBECONFIG: kubeconfig } },
  );
  return /^OPERATOR_NAMESPACE=(\S+)$/m.exec(installed)?.[1] ?? fail("the install printed no OPERATOR_NAMESPACE= line");
}

async function operatorLocally(client: KubeClient, kubeconfig: string): Promise<ReturnType<typeof Bun.spawn>> {
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
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  say(`starting the operator: devctl operator run (health and metrics on http://127.0.0.1:${port})`);
  const addr = `127.0.0.1:${port}`;
  const operator = Bun.spawn([devctl, ...localOperatorArgs(addr)], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
    env: { ...process.env, KUBECONFIG: kubeconfig },
  });
  await eventually(
    "the operator to be ready",
    async () => {
      if (operator.exitCode !== null) fail(`the operator exited with code ${operator.exitCode}`);
      return (await fetch(`http://${addr}/readyz`)).ok || undefined;
    },
    60_000,
  );
  return operator;
}

await run("building dist/devctl", [bun, "run", "src/build/build.ts"]);
let kubeconfig = configuredKubeconfig();
/** The local control plane, started here or named by the configured kubeconfig ($DEVCTL_CLUSTER_DIR or .cluster/). */
const clusterDir = process.env.DEVCTL_CLUSTER_DIR ? resolve(process.env.DEVCTL_CLUSTER_DIR) : join(root, ".cluster");
const local = !kubeconfig || resolve(kubeconfig) === join(clusterDir, "kubeconfig");
if (kubeconfig) {
  say(`using the configured cluster (${kubeconfig})`);
} else {
  say(
    "no cluster configured: starting the local control plane (the first run builds it from Go modules, ~8 min on 2 cores)",
  );
  const status = Bun.spawnSync([bun, "run", "tests/cluster/cli.ts", "status"], {
    cwd: root,
    stdout: "ignore",
    stderr: "ignore",
  });
  clusterToStop = status.exitCode !== 0; // `up` starts one; one already running is only reused, and left alone
  const out = await run("starting the local control plane", [bun, "run", "tests/cluster/cli.ts", "up"], {
    capture: true,
  });
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

const node = realNodeOrWhy(local);
let operator: ReturnType<typeof Bun.spawn> | undefined;
let operatorNamespace = "";
if (node.up) {
  say("the local cluster has a real node: the operator runs there as a container, the way users run it");
  operatorNamespace = await operatorInCluster(kubeconfig);
} else {
  say(`running the operator locally: ${node.why}`);
  operator = await operatorLocally(client, kubeconfig);
}
const namespace = client.namespace;
await applyExampleAndConverge(client, namespace);
clusterToStop = false;
await show(["get", "webapps"], kubeconfig, client, namespace);
await show(["get", "deployments"], kubeconfig, client, namespace);
if (node.up) await show(["-n", operatorNamespace, "get", "pods", "-o", "wide"], kubeconfig, client, namespace);

if (!operator) {
  say(
    `the operator keeps running in namespace ${operatorNamespace} ` +
      `(devctl operator uninstall removes it; KUBECONFIG=${kubeconfig}; npm run cluster:down stops the local cluster)`,
  );
  process.exit(0);
}
if (process.stdin.isTTY) {
  console.error(
    `\nThe operator keeps running: try \`KUBECONFIG=${kubeconfig} kubectl scale deployment my-service-deployment ` +
      "--replicas=1` and watch it heal.\nCtrl-C stops it; `npm run cluster:down` stops the local cluster.",
  );
  process.exit(await operator.exited);
}
if (operator.exitCode === null) operator.kill("SIGTERM");
const code = await operator.exited;
say(
  `operator stopped (exit ${code}); the cluster stays up (KUBECONFIG=${kubeconfig}; npm run cluster:down stops a local one)`,
);
process.exit(code);
