/**
 * Pod failures a real kubelet reports (issue #13 §2), surfaced on the WebApp within 60 s, with nothing pulled:
 * - an image imported on the node whose entrypoint exits 2 (the operator image's layers, entrypoint
 *   `/devctl --no-such-flag`): Stalled CrashLoopBackOff;
 * - a local reference that is not on the node with spec.imagePullPolicy Never: Stalled ErrImageNeverPull;
 * - both cleared, Ready, once spec.image names an image on the node (the node's pause image).
 * The operator is the compiled devctl run beside the tests (as tests/pod-failures.test.ts does with KWOK).
 *
 * How the WebApps' pods reach the real node: a WebApp has no nodeSelector or toleration, the real node is tainted
 * and KWOK's node takes any pod. Removing the taint or cordoning KWOK's node would change every suite's cluster
 * until restored (and not be restored if this process died); instead a MutatingAdmissionPolicy (admission v1,
 * on by default in 1.36) bound to this suite's namespace alone adds the node's label as nodeSelector and a
 * toleration of exactly its taint to the pods created there. No node changes; afterAll deletes the policy,
 * and a policy left behind matches only a namespace that is gone.
 *
 * Needs the real node (tests/cluster, where the machine can run it) and an image builder for `npm run image`;
 * without the node every test is skipped with the reason, which the runner turns into a failure on CI.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { rmSync } from "node:fs";
import { PAUSE_IMAGE } from "../cluster/nodes/real-config.ts";
import { importIntoRealNode } from "../cluster/nodes/real.ts";
import { kstatus } from "../kstatus/kstatus.ts";
import { startOperator, type OperatorProcess } from "../_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  ensureCrd,
  eventsFor,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  PODS,
  tempNamespace,
  WEBAPPS,
  webapp,
  type WebAppLike,
} from "../_support.ts";
import { imagePaths } from "../../src/build/image.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { buildImage, ctr, type PodLike, realNodeSuite } from "./_node.ts";
import { imageWithEntrypoint, routePodsToRealNode } from "./_workloads.ts";

const WITHIN_MS = 60_000;
const RUN = Math.random().toString(36).slice(2, 8);
/** The operator image's layers with an entrypoint that exits 2 (devctl refuses an unknown flag). */
const CRASH_IMAGE = `devctl.local/crash:${RUN}`;
const MISSING_IMAGE = `devctl.local/not-on-this-node:${RUN}`;
/** How long a crash loop is watched once Stalled, at least: longer than the kubelet's second back-off (20 s). */
const STEADY_MS = 25_000;
/**
 * ...and until the container restarted once more, at most this long: the back-off doubles (10, 20, 40 s), so a
 * count read just after the second restart grows only ~40 s later (CI read 2 after the checks before took their
 * time, and 25 s saw no third); after the third, 80 s. Within the suite's 180 s per test: 60 + the checks + 90.
 */
const RESTART_WAIT_MS = 90_000;

const { node, why: absentReason, realTest } = await realNodeSuite();

let ns: Awaited<ReturnType<typeof tempNamespace>> | undefined;
let unroute: (() => Promise<void>) | undefined;
let op: OperatorProcess | undefined;
const created: Record<string, number> = {};
const timings: Record<string, number> = {};

beforeAll(async () => {
  if (!node) return;
  buildImage(); // dist/devctl (the operator run here) and dist/image/devctl.oci.tar (the crash image's layers)
  const archive = imageWithEntrypoint(imagePaths.archive, CRASH_IMAGE, ["/devctl", "--no-such-flag"]);
  const imported = await importIntoRealNode(archive).finally(() => rmSync(archive, { force: true }));
  if (!imported?.includes(CRASH_IMAGE)) throw new Error(`importing ${archive} into the real node: ${imported}`);
  await ensureCrd();
  ns = await tempNamespace("realnode-podfail");
  unroute = await routePodsToRealNode(ns.name);
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
}, 300_000);

afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  await unroute?.();
  if (node) ctr(node, "images", "rm", CRASH_IMAGE);
  console.error(`real-node pod failures (ms from creation): ${JSON.stringify(timings)}`);
  if (op) expect(code).toBe(0);
});

function requireNs(): string {
  if (!ns) throw new Error(`the real-node suite needs the local cluster's real node: ${absentReason}`);
  return ns.name;
}

async function createApp(name: string, spec: Record<string, unknown>): Promise<void> {
  created[name] = Date.now();
  await kube.create(WEBAPPS, webapp(name, requireNs(), { replicas: 1, port: 8080, ...spec }));
}

/** Waits (WITHIN_MS from its creation) until the WebApp is Stalled with `reason`; records how long it took. */
async function stalled(name: string, reason: string): Promise<WebAppLike> {
  const since = created[name] ?? Date.now();
  const w = await eventually(
    async () => {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, requireNs());
      return conditionOf(w, "Stalled")?.reason === reason ? w : undefined;
    },
    since + WITHIN_MS - Date.now(),
    `${name} to be Stalled ${reason} within ${WITHIN_MS / 1000} s of its creation`,
  ).catch(async (e: Error) => {
    const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, requireNs());
    const pods = (await podsOfApp(name)).map((p) => ({ node: p.spec.nodeName, status: p.status?.containerStatuses }));
    throw new Error(
      `${e.message}\nconditions: ${JSON.stringify(w?.status?.conditions)}\npods: ${JSON.stringify(pods)}`,
    );
  });
  timings[`${name}Stalled`] = Date.now() - since;
  return w;
}

async function podsOfApp(name: string): Promise<PodLike[]> {
  return (await kube.list<PodLike>(PODS, { namespace: requireNs(), labelSelector: `app=${name}` })).items;
}

/** `kubectl get wa NAME`'s READY and REASON cells. */
function printed(name: string): { ready: string; reason: string } {
  const r = kubectl(["get", "wa", name, "-n", requireNs()]);
  expect(r.code).toBe(0);
  const [header, row] = r.stdout.trim().split("\n");
  const cells = row?.trim().split(/\s+/) ?? [];
  const at = (col: string) => cells[(header?.trim().split(/\s+/) ?? []).indexOf(col)] ?? "";
  return { ready: at("READY"), reason: at("REASON") };
}

async function expectOneWarning(name: string, reason: string): Promise<void> {
  const events = await eventsOnceSeen(requireNs(), name, (e) => e.type === "Warning", `a Warning event about ${name}`);
  const warnings = events.filter((e) => e.type === "Warning");
  expect(warnings.map((e) => [e.reason, e.count ?? 1])).toEqual([[reason, 1]]);
}

describe("WebApps whose pods fail on the real node", () => {
  realTest("an imported image whose entrypoint exits 2 is Stalled CrashLoopBackOff within 60 s", async () => {
    await createApp("crash", { image: CRASH_IMAGE });
    const w = await stalled("crash", "CrashLoopBackOff");
    const message = conditionOf(w, "Stalled")?.message ?? "";
    // The kubelet's words while it waits out the back-off, or the exit seen between restarts (readiness/pods.ts).
    expect(message).toMatch(
      /^pod crash-deployment-\S+: container app (CrashLoopBackOff: back-off \d+s restarting|exited with code 2 \(Error\) after \d+ restarts?)/,
    );
    expect(message).toContain("read its logs (kubectl logs --previous)");
    expect(conditionOf(w, "Degraded")).toMatchObject({ status: "True", reason: "CrashLoopBackOff" });
    expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: "CrashLoopBackOff" });
    expect(printed("crash")).toEqual({ ready: "False", reason: "CrashLoopBackOff" });
    expect((await kstatus([w]))[0]?.status).toBe("Failed");
    await expectOneWarning("crash", "CrashLoopBackOff");
    // It ran on the real node, from the imported image (present, not pulled), and exited 2 with devctl's words.
    const [pod] = await podsOfApp("crash");
    expect(pod?.spec.nodeName).toBe(node?.name);
    const last = (pod?.status?.containerStatuses?.[0] as { lastState?: { terminated?: { exitCode?: number } } })
      ?.lastState?.terminated;
    expect(last?.exitCode).toBe(2);
    const podEvents = await eventsFor(requireNs(), pod?.metadata.name ?? "");
    expect(podEvents.filter((e) => e.reason === "Pulling")).toEqual([]);
    expect(podEvents.find((e) => e.reason === "Pulled")?.message).toContain("already present on machine");
    // The last run's output: the current container's while it is down, else (waiting for its back-off) the previous.
    const logs = ["", "--previous"].map(
      (flag) => kubectl(["logs", "-n", requireNs(), pod?.metadata.name ?? "", ...(flag ? [flag] : [])]).stdout,
    );
    expect(logs.join("\n")).toContain("unknown flag --no-such-flag");
    // It stays so across the next restart (the pod is Ready for an instant at each): no flapping.
    const restartsOf = (p: PodLike | undefined) => p?.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const restarts = restartsOf((await podsOfApp("crash"))[0]);
    const seen = new Set<string>();
    const start = Date.now();
    let now = restarts;
    while ((Date.now() - start < STEADY_MS || now <= restarts) && Date.now() - start < RESTART_WAIT_MS) {
      const wa = await getOrUndefined<WebAppLike>(WEBAPPS, "crash", requireNs());
      seen.add(`${conditionOf(wa, "Stalled")?.status}/${conditionOf(wa, "Stalled")?.reason}`);
      now = restartsOf((await podsOfApp("crash"))[0]);
      await Bun.sleep(500);
    }
    expect(now).toBeGreaterThan(restarts);
    expect([...seen]).toEqual(["True/CrashLoopBackOff"]);
    await expectOneWarning("crash", "CrashLoopBackOff");
  });

  realTest(
    "a local image not on the node, spec.imagePullPolicy Never: Stalled ErrImageNeverPull within 60 s",
    async () => {
      await createApp("never", { image: MISSING_IMAGE, imagePullPolicy: "Never" });
      const w = await stalled("never", "ErrImageNeverPull");
      const dep = await getOrUndefined<KubeObject & { spec: { template: { spec: { containers: object[] } } } }>(
        DEPLOYMENTS,
        "never-deployment",
        requireNs(),
      );
      expect(dep?.spec.template.spec.containers[0]).toMatchObject({ image: MISSING_IMAGE, imagePullPolicy: "Never" });
      const message = conditionOf(w, "Stalled")?.message ?? "";
      expect(message).toMatch(/^pod never-deployment-\S+: container app ErrImageNeverPull: /);
      expect(message).toContain(`${MISSING_IMAGE}" is not present with pull policy of Never`);
      expect(message).toContain("import it onto the node, or set spec.imagePullPolicy to IfNotPresent");
      expect(printed("never")).toEqual({ ready: "False", reason: "ErrImageNeverPull" });
      expect((await kstatus([w]))[0]?.status).toBe("Failed");
      await expectOneWarning("never", "ErrImageNeverPull");
      const [pod] = await podsOfApp("never");
      expect(pod?.spec.nodeName).toBe(node?.name);
    },
  );

  realTest("both recover once spec.image names an image on the node: Stalled cleared, Ready within 60 s", async () => {
    const since = Date.now();
    for (const name of ["crash", "never"])
      await kube.patch(WEBAPPS, name, requireNs(), { spec: { image: PAUSE_IMAGE } }, "merge");
    for (const name of ["crash", "never"]) {
      const w = await eventually(
        async () => {
          const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, requireNs());
          return conditionOf(w, "Ready")?.status === "True" ? w : undefined;
        },
        since + WITHIN_MS - Date.now(),
        `${name} to be Ready within ${WITHIN_MS / 1000} s of the fix`,
      );
      timings[`${name}Ready`] = Date.now() - since;
      expect(conditionOf(w, "Stalled")).toBeUndefined();
      expect(conditionOf(w, "Degraded")?.status).toBe("False");
      expect(printed(name).ready).toBe("True");
      expect((await kstatus([w]))[0]?.status).toBe("Current");
      const pods = await podsOfApp(name);
      expect(pods.map((p) => [p.spec.nodeName, p.status?.phase])).toContainEqual([node?.name, "Running"]);
    }
  });
});
