/**
 * Automatic rollback (issue #32 item 2) and the rollout history (item 1) against the API server, with KWOK's pods:
 * an image of the test stage (tests/cluster/stages/pod-waiting.yaml) keeps its pods in CrashLoopBackOff.
 * The operator runs with --auto-rollback (the install flag's default for every WebApp):
 * - a WebApp that does not say is rolled back once its new revision has failed for its failureThreshold: the
 *   Deployment runs the last Ready image again, the WebApp is Stalled RolledBack (Ready False, kstatus Failed) with
 *   one Warning, the rollback is counted once, `rollout status` fails with it and `rollout history` shows it; a new
 *   image rolls forward and is Ready;
 * - one whose spec.rollout.autoRollback is false keeps running its failing revision, as without the feature;
 * - `rollout undo` sets spec.image back to an earlier Ready revision's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { kstatus } from "./kstatus/kstatus.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  devctl,
  ensureCrd,
  eventsOnceSeen,
  kube,
  tempNamespace,
  WEBAPPS,
  readyOnItsGeneration,
  type WebAppLike,
  webAppOnce,
  webapp,
  deployedImage as deployedImageOf,
  type ImagedDeployment,
} from "./_support.ts";

const CRASH = "stage.devctl.test/waiting:CrashLoopBackOff";
const WITHIN_MS = 60_000;
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("rollback");
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false", "--auto-rollback"]);
});
afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  expect(code).toBe(0);
});

type Dep = ImagedDeployment;
const deployedImage = (name: string) => deployedImageOf(ns.name, name);
const get = (name: string) => kube.get<WebAppLike>(WEBAPPS, name, ns.name);
const until = (name: string, what: string, ok: (w: WebAppLike) => boolean) =>
  webAppOnce(ns.name, name, what, ok, WITHIN_MS);
const ready = (name: string) => until(name, "Ready on its latest generation", readyOnItsGeneration);
const setImage = (name: string, image: string) => kube.patch(WEBAPPS, name, ns.name, { spec: { image } }, "merge");

describe("with the operator's --auto-rollback", () => {
  test("a failing revision is rolled back to the last Ready image, reported, counted once; a fix rolls forward", async () => {
    const spec = { image: "nginx:1.25", replicas: 2, port: 8080, rollout: { failureThreshold: "5s" } };
    await kube.create(WEBAPPS, webapp("shop", ns.name, spec));
    await ready("shop");
    await setImage("shop", CRASH);
    const started = Date.now();
    const w = await until("shop", "Stalled RolledBack", (w) => conditionOf(w, "Stalled")?.reason === "RolledBack");
    console.error(`rolled back ${Date.now() - started} ms after the bad image was applied`);
    expect(await deployedImage("shop")).toBe("nginx:1.25");
    expect(w.spec).toMatchObject({ image: CRASH }); // the spec is the user's, untouched
    expect(conditionOf(w, "Stalled")?.message).toStartWith(
      `revision 2 (image ${CRASH}) failed (CrashLoopBackOff: pod shop-deployment-`,
    );
    expect(conditionOf(w, "Stalled")?.message).toContain("revision 1 (image nginx:1.25) runs again");
    expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: "RolledBack" });
    expect((await kstatus([w]))[0]?.status).toBe("Failed");
    const events = await eventsOnceSeen(ns.name, "shop", (e) => e.reason === "RolledBack", "a RolledBack event");
    expect(events.filter((e) => e.reason === "RolledBack").map((e) => [e.type, e.count ?? 1])).toEqual([
      ["Warning", 1],
    ]);
    expect(await op.counter("devctl_webapp_rollbacks_total", `namespace="${ns.name}"`)).toBe(1);

    // The pods of revision 1 run again: Available, and it stays rolled back (no second rollback, no flapping).
    await until("shop", "Available again", (w) => conditionOf(w, "Available")?.status === "True");
    await Bun.sleep(3000);
    expect(conditionOf(await get("shop"), "Stalled")?.reason).toBe("RolledBack");
    expect(await deployedImage("shop")).toBe("nginx:1.25");
    expect(await op.counter("devctl_webapp_rollbacks_total", `namespace="${ns.name}"`)).toBe(1);

    const status = devctl(["webapp", "rollout", "status", "shop", "-n", ns.name, "--watch=false"]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain('webapp "shop" rollout failed: RolledBack: revision 2');
    const history = devctl(["webapp", "rollout", "history", "shop", "-n", ns.name]);
    expect(history.code).toBe(0);
    const rows = history.stdout.trim().split("\n");
    expect(rows[0]).toMatch(/^REVISION\s+IMAGE\s+RESULT\s+TOOK\s+AGE\s+NOTE$/);
    expect(rows[1]).toMatch(/^1\s+nginx:1\.25\s+Ready\s+\S+\s+\S+\s+last ready$/);
    expect(rows[2]).toMatch(
      new RegExp(
        `^2\\s+${CRASH.replaceAll(".", "\\.")}\\s+RolledBack \\(CrashLoopBackOff\\)\\s+\\S+\\s+\\S+\\s+current$`,
      ),
    );

    await setImage("shop", "nginx:1.26");
    const fixed = await ready("shop");
    expect(conditionOf(fixed, "Stalled")).toBeUndefined();
    expect(await deployedImage("shop")).toBe("nginx:1.26");
    expect(fixed.status?.rollouts?.map((r) => [r.revision, r.image, r.readyAt !== undefined])).toEqual([
      [1, "nginx:1.25", true],
      [2, CRASH, false],
      [3, "nginx:1.26", true],
    ]);
    expect(fixed.status?.lastReadyRevision).toBe(3);
  });

  test("a revision that changed its env with the image is rolled back whole; undo sets both back in the spec", async () => {
    const old = [{ name: "MODE", value: "old" }];
    const spec = { image: "nginx:1.25", replicas: 1, port: 8080, env: old, rollout: { failureThreshold: "2s" } };
    await kube.create(WEBAPPS, webapp("whole", ns.name, spec));
    await ready("whole");
    const change = { image: CRASH, env: [{ name: "MODE", value: "new" }], replicas: 2 };
    await kube.patch(WEBAPPS, "whole", ns.name, { spec: change }, "merge");
    await until("whole", "Stalled RolledBack", (w) => conditionOf(w, "Stalled")?.reason === "RolledBack");
    type Container = { image: string; env?: { name: string; value: string }[] };
    const dep = await kube.get<Dep & { spec: { replicas: number } }>(DEPLOYMENTS, "whole-deployment", ns.name);
    const container = dep.spec.template.spec.containers[0] as Container;
    expect([container.image, container.env, dep.spec.replicas]).toEqual(["nginx:1.25", old, 2]);

    const r = devctl(["webapp", "rollout", "undo", "whole", "-n", ns.name]);
    expect(r).toMatchObject({
      code: 0,
      stdout: expect.stringContaining("rolled back to revision 1 (image nginx:1.25)"),
    });
    expect((await get("whole")).spec).toMatchObject({ image: "nginx:1.25", env: old, replicas: 2 });
    const w = await ready("whole");
    expect(conditionOf(w, "Stalled")).toBeUndefined();
  });

  test("spec.rollout.autoRollback false keeps the failing revision running, Stalled with the pods' reason", async () => {
    const spec = {
      image: "nginx:1.25",
      replicas: 1,
      port: 8080,
      rollout: { autoRollback: false, failureThreshold: "1s" },
    };
    await kube.create(WEBAPPS, webapp("kept", ns.name, spec));
    await ready("kept");
    await setImage("kept", CRASH);
    await until("kept", "Stalled CrashLoopBackOff", (w) => conditionOf(w, "Stalled")?.reason === "CrashLoopBackOff");
    await Bun.sleep(5000); // well past its failureThreshold
    const w = await get("kept");
    expect(conditionOf(w, "Stalled")?.reason).toBe("CrashLoopBackOff");
    expect(await deployedImage("kept")).toBe(CRASH);
    expect(w.status?.rollouts?.at(-1)).toMatchObject({ revision: 2, image: CRASH, reason: "CrashLoopBackOff" });
    expect(w.status?.rollouts?.at(-1)?.rolledBackAt).toBeUndefined();
  });

  test("rollout undo sets spec.image back to the last Ready revision's, and the WebApp rolls to it", async () => {
    const r = devctl(["webapp", "rollout", "undo", "kept", "-n", ns.name]);
    expect(r).toMatchObject({
      code: 0,
      stdout: "webapp.apps.example.com/kept rolled back to revision 1 (image nginx:1.25)\n",
    });
    expect((await get("kept")).spec).toMatchObject({ image: "nginx:1.25" });
    const w = await ready("kept");
    expect(w.status?.rollouts?.map((r) => [r.revision, r.image])).toEqual([
      [1, "nginx:1.25"],
      [2, CRASH],
      [3, "nginx:1.25"],
    ]);
    const again = devctl(["webapp", "rollout", "undo", "kept", "-n", ns.name, "--to-revision", "3"]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.stdout).toContain("skipped rollback (the spec already gives the pod template of revision 3)");
    const unknown = devctl(["webapp", "rollout", "undo", "kept", "-n", ns.name, "--to-revision", "9"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('--to-revision 9: webapp "kept" has no such revision (it has: 1, 2, 3)');
  });
});
