/**
 * Automatic rollback on the real node (issue #32 item 4), nothing pulled: the node's pause image is the good
 * revision, an image imported on the node whose entrypoint exits 2 (the operator image's layers, entrypoint
 * `/devctl --no-such-flag`) and a reference that is not on the node (pull policy Never) are the bad ones.
 * - crash: within 90 s of the bad image the Deployment runs the good revision again with all its pods Ready, the
 *   WebApp says RolledBack naming the bad image and CrashLoopBackOff, one RolledBack Warning, kstatus Failed; a fixed
 *   spec rolls forward and is Ready. The same for ErrImageNeverPull. With autoRollback false, a failing revision
 *   stays (Failed in the history), as without the feature; `rollout history` shows the failed and the rolled-back
 *   revisions.
 * - handover: two operators with leader election; the leader is killed (SIGKILL) once it has rolled a bad image out;
 *   the new leader sees the failure, waits out its failureThreshold and rolls back, and exactly one rollback is
 *   recorded (one record, one event, its counter 1). (A leader killed between running a rollback and reporting it is
 *   src/operator/reconciler.test.ts's, with a fake clock: the next one reports it without a second write.)
 * Pods reach the real node as in pod-failures.test.ts (a MutatingAdmissionPolicy bound to this namespace).
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { rmSync } from "node:fs";
import { imagePaths } from "../../src/build/image.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { PAUSE_IMAGE } from "../cluster/nodes/real-config.ts";
import { importIntoRealNode } from "../cluster/nodes/real.ts";
import { kstatus } from "../kstatus/kstatus.ts";
import { type OperatorProcess, startOperator } from "../_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  devctl,
  ensureCrd,
  eventsFor,
  eventually,
  getOrUndefined,
  kube,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "../_support.ts";
import { buildImage, ctr, realNodeSuite } from "./_node.ts";
import { imageWithEntrypoint, routePodsToRealNode } from "./_workloads.ts";

const RUN = Math.random().toString(36).slice(2, 8);
const CRASH_IMAGE = `devctl.local/rollback-crash:${RUN}`;
const MISSING_IMAGE = `devctl.local/not-on-this-node:${RUN}`;
const WITHIN_MS = 90_000;
/** Every image is on the node (or meant not to be): nothing is pulled. */
const BASE = { replicas: 2, port: 8080, imagePullPolicy: "Never" };
const LEASE = [
  "--leader-elect",
  "--lease-name=rollback-test",
  "--lease-duration=4s",
  "--renew-deadline=3s",
  "--retry-period=1s",
];

const { node, why: absentReason, realTest } = await realNodeSuite();

let ns: Awaited<ReturnType<typeof tempNamespace>> | undefined;
let unroute: (() => Promise<void>) | undefined;
const operators: OperatorProcess[] = [];
const timings: Record<string, number> = {};

beforeAll(async () => {
  if (!node) return;
  buildImage();
  const archive = imageWithEntrypoint(imagePaths.archive, CRASH_IMAGE, ["/devctl", "--no-such-flag"]);
  const imported = await importIntoRealNode(archive).finally(() => rmSync(archive, { force: true }));
  if (!imported?.includes(CRASH_IMAGE)) throw new Error(`importing ${archive} into the real node: ${imported}`);
  await ensureCrd();
  ns = await tempNamespace("realnode-rollback");
  unroute = await routePodsToRealNode(ns.name);
}, 300_000);

afterAll(async () => {
  const codes = await Promise.all(operators.map((op) => op.stop()));
  await ns?.drop();
  await unroute?.();
  if (node) ctr(node, "images", "rm", CRASH_IMAGE);
  console.error(`real-node rollbacks (ms from the bad image): ${JSON.stringify(timings)}`);
  expect(codes.filter((c) => c !== 0)).toEqual([]);
});

function requireNs(): string {
  if (!ns) throw new Error(`the real-node suite needs the local cluster's real node: ${absentReason}`);
  return ns.name;
}

type Dep = KubeObject & {
  spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } };
  status?: { replicas?: number; readyReplicas?: number; updatedReplicas?: number; observedGeneration?: number };
};
const get = (name: string) => getOrUndefined<WebAppLike>(WEBAPPS, name, requireNs());
const until = (name: string, what: string, ok: (w: WebAppLike) => boolean, ms = WITHIN_MS) =>
  eventually(
    async () => {
      const w = await get(name);
      return w && ok(w) ? w : undefined;
    },
    ms,
    `${name}: ${what}`,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}\nconditions: ${JSON.stringify((await get(name))?.status?.conditions)}`);
  });
const ready = (name: string) =>
  until(
    name,
    "Ready on its latest generation",
    (w) => conditionOf(w, "Ready")?.status === "True" && w.status?.observedGeneration === w.metadata.generation,
  );
const setSpec = (name: string, spec: Record<string, unknown>) =>
  kube.patch(WEBAPPS, name, requireNs(), { spec }, "merge");

/** Waits until the Deployment runs `image` with every pod updated and Ready. */
async function runsAllReady(name: string, image: string): Promise<void> {
  await eventually(
    async () => {
      const d = await kube.get<Dep>(DEPLOYMENTS, `${name}-deployment`, requireNs());
      const s = d.status ?? {};
      return (
        d.spec.template.spec.containers[0]?.image === image &&
        s.observedGeneration === d.metadata.generation &&
        s.updatedReplicas === d.spec.replicas &&
        s.readyReplicas === d.spec.replicas &&
        s.replicas === d.spec.replicas
      );
    },
    WITHIN_MS,
    `${name}-deployment to run ${image} with all its pods Ready`,
  );
}

/** The bad image applied, then: rolled back within 90 s, the good revision running with all pods Ready. */
async function rolledBack(name: string, bad: string, reason: string, label: string): Promise<WebAppLike> {
  const since = Date.now();
  await setSpec(name, { image: bad });
  const w = await until(name, `Stalled RolledBack (${reason})`, (w) => {
    const stalled = conditionOf(w, "Stalled");
    return stalled?.reason === "RolledBack" && (stalled.message ?? "").includes(`failed (${reason}`);
  });
  await runsAllReady(name, PAUSE_IMAGE);
  timings[label] = Date.now() - since;
  expect(Date.now() - since).toBeLessThan(WITHIN_MS);
  const stalled = conditionOf(w, "Stalled")?.message ?? "";
  expect(stalled).toContain(`(image ${bad}) failed (${reason}`);
  expect(stalled).toContain(`(image ${PAUSE_IMAGE}) runs again`);
  expect(w.spec).toMatchObject({ image: bad }); // the spec stays the user's
  expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: "RolledBack" });
  expect((await kstatus([w]))[0]?.status).toBe("Failed");
  return w;
}

async function rolledBackEvents(name: string): Promise<number> {
  const events = await eventsFor(requireNs(), name);
  return events
    .filter((e) => e.type === "Warning" && e.reason === "RolledBack")
    .reduce((n, e) => n + (e.count ?? 1), 0);
}

describe("automatic rollback on the real node", () => {
  realTest(
    "a crash-looping image and one not on the node are rolled back within 90 s; a fix rolls forward",
    async () => {
      operators.push(await startOperator(["--namespaces", requireNs(), "--leader-elect=false"]));
      const rollout = { autoRollback: true, failureThreshold: "10s" };
      await kube.create(WEBAPPS, webapp("deploy", requireNs(), { ...BASE, image: PAUSE_IMAGE, rollout }));
      await ready("deploy");
      await rolledBack("deploy", CRASH_IMAGE, "CrashLoopBackOff", "crash");
      await eventually(async () => (await rolledBackEvents("deploy")) === 1, 15_000, "one RolledBack Warning");

      await setSpec("deploy", { image: PAUSE_IMAGE }); // the fix: a new revision, Ready
      await ready("deploy");
      await rolledBack("deploy", MISSING_IMAGE, "ErrImageNeverPull", "neverPull");
      await setSpec("deploy", { image: PAUSE_IMAGE });
      const fixed = await ready("deploy");
      expect(conditionOf(fixed, "Stalled")).toBeUndefined();
      expect(await operators[0]?.counter("devctl_webapp_rollbacks_total")).toBe(2);
    },
    240_000,
  );

  realTest(
    "without autoRollback a failing revision keeps running; the history shows the failed and rolled-back ones",
    async () => {
      await setSpec("deploy", { image: CRASH_IMAGE, rollout: { autoRollback: false, failureThreshold: "1s" } });
      await until(
        "deploy",
        "Stalled CrashLoopBackOff",
        (w) => conditionOf(w, "Stalled")?.reason === "CrashLoopBackOff",
      );
      await Bun.sleep(5000); // past its failureThreshold
      const d = await kube.get<Dep>(DEPLOYMENTS, "deploy-deployment", requireNs());
      expect(d.spec.template.spec.containers[0]?.image).toBe(CRASH_IMAGE);
      const history = devctl(["webapp", "rollout", "history", "deploy", "-n", requireNs()]);
      expect(history.code).toBe(0);
      console.error(history.stdout);
      const results = history.stdout
        .trim()
        .split("\n")
        .slice(1)
        .map((row) => row.split(/\s{3,}/).slice(0, 3));
      expect(results).toEqual([
        ["1", PAUSE_IMAGE, "Ready"],
        ["2", CRASH_IMAGE, "RolledBack (CrashLoopBackOff)"],
        ["3", PAUSE_IMAGE, "Ready"],
        ["4", MISSING_IMAGE, "RolledBack (ErrImageNeverPull)"],
        ["5", PAUSE_IMAGE, "Ready"],
        ["6", CRASH_IMAGE, "Failed (CrashLoopBackOff)"],
      ]);
    },
    120_000,
  );

  realTest(
    "the leader killed after rolling a bad image out: the new leader rolls it back, once",
    async () => {
      // Only these two reconcile here: the operator of the tests above (no leader election) stops first.
      for (const op of operators.splice(0)) expect(await op.stop()).toBe(0);
      const args = ["--namespaces", requireNs(), ...LEASE, `--lease-namespace=${requireNs()}`];
      const first = await startOperator(args);
      operators.push(first);
      const leading = (op: OperatorProcess) => op.counter("leader_election_master_status").catch(() => 0);
      await eventually(async () => (await leading(first)) === 1, 30_000, "the first operator to lead");
      const second = await startOperator(args);
      operators.push(second);
      const rollout = { autoRollback: true, failureThreshold: "20s" };
      await kube.create(WEBAPPS, webapp("handover", requireNs(), { ...BASE, image: PAUSE_IMAGE, rollout }));
      await ready("handover");
      const since = Date.now();
      await setSpec("handover", { image: CRASH_IMAGE });
      // The leader has rolled the bad image out; it dies before any failure is reported, so the failure window,
      // the rollback and its report are all the new leader's.
      await eventually(
        async () =>
          (await kube.get<Dep>(DEPLOYMENTS, "handover-deployment", requireNs())).spec.template.spec.containers[0]
            ?.image === CRASH_IMAGE,
        30_000,
        "the leader to roll the bad image out",
      );
      expect(await first.stop("SIGKILL")).not.toBe(0);
      operators.splice(operators.indexOf(first), 1); // its exit is the kill's, not a clean stop
      await until(
        "handover",
        "Stalled CrashLoopBackOff",
        (w) => conditionOf(w, "Stalled")?.reason === "CrashLoopBackOff",
      );
      const w = await until(
        "handover",
        "Stalled RolledBack",
        (w) => conditionOf(w, "Stalled")?.reason === "RolledBack",
      );
      await runsAllReady("handover", PAUSE_IMAGE);
      timings.handover = Date.now() - since;
      expect(await leading(second)).toBe(1);
      if ((await second.counter("devctl_webapp_rollbacks_total")) !== 1)
        console.error(`first:\n${first.logs()}\nsecond:\n${second.logs()}\n${await second.metricsText()}`);
      expect(await second.counter("devctl_webapp_rollbacks_total")).toBe(1);
      const records = w.status?.rollouts ?? [];
      expect(records.filter((r) => r.rolledBackAt !== undefined).map((r) => r.revision)).toEqual([2]);
      await Bun.sleep(3000); // held events are sent
      if ((await rolledBackEvents("handover")) !== 1)
        console.error(JSON.stringify(await eventsFor(requireNs(), "handover"), null, 1), second.logs());
      expect(await rolledBackEvents("handover")).toBe(1);
    },
    180_000,
  );
});
