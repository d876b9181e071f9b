import { describe, expect, test } from "bun:test";
import { podSpecOf, type RolloutRecord } from "../../api/rollout-history.ts";
import { WEBAPP_RESOURCE, type WebApp } from "../../api/webapp.ts";
import type { KubeObject } from "../../kube/types.ts";
import { createFakeApiServer } from "../../operator/_fake-apiserver.ts";
import { podTemplateDigest } from "../../operator/desired.ts";
import { CONFLICT_RETRIES, planUndo, undoWebApp } from "./rollout-undo.ts";

const spec = { image: "app:v3", replicas: 2, port: 8080 };
const webapp = (over: Partial<WebApp["spec"]> = {}): WebApp => ({
  metadata: { name: "shop", namespace: "team" },
  spec: { ...spec, ...over },
});
const record = (
  revision: number,
  image: string,
  ready: boolean,
  over: Partial<WebApp["spec"]> = {},
): RolloutRecord => ({
  revision,
  image,
  digest: podTemplateDigest(webapp({ image, ...over })),
  startedAt: "2026-12-05T10:00:00Z",
  ...(ready ? { readyAt: "2026-12-05T10:00:10Z" } : {}),
});
const withHistory = (w: WebApp, rollouts: RolloutRecord[]) => ({ ...w, status: { rollouts } });

describe("rollout undo", () => {
  const history = [record(1, "app:v1", true), record(2, "app:v2", true), record(3, "app:v3", false)];

  test("by default goes back to the last Ready revision before the current one", () => {
    const plan = planUndo(withHistory(webapp(), history), undefined, false);
    expect([plan.kind, plan.record.revision, plan.record.image]).toEqual(["patch", 2, "app:v2"]);
  });

  test("--to-revision picks that one; a spec that already gives its template needs no change", () => {
    expect(planUndo(withHistory(webapp(), history), 1, false).record.image).toBe("app:v1");
    expect(planUndo(withHistory(webapp(), history), 3, false).kind).toBe("unchanged");
  });

  test("an image-only record: refuses when more than the image changed since that revision, unless --image-only", () => {
    const older = [record(1, "app:v1", true, { port: 80 }), record(2, "app:v3", false)];
    expect(() => planUndo(withHistory(webapp(), older), 1, false)).toThrow(
      /revision 1 differs from the current spec in more than the image, and its record keeps only the image .* pass --image-only to set spec.image to app:v1/,
    );
    expect(planUndo(withHistory(webapp(), older), 1, true)).toMatchObject({ kind: "patch", spec: { image: "app:v1" } });
  });

  test("a record with its podSpec: every pod-template field goes back, and only those (replicas stays)", () => {
    const was = { image: "app:v1", port: 80, command: ["/old"] };
    const r1 = {
      ...record(1, "app:v1", true, { port: 80, command: ["/old"] }),
      podSpec: podSpecOf({ ...spec, ...was }),
    };
    const now = webapp({ env: [{ name: "MODE", value: "new" }], replicas: 5 });
    const plan = planUndo(withHistory(now, [r1, record(2, "app:v3", false)]), 1, false);
    expect(plan).toMatchObject({
      kind: "patch",
      spec: { image: "app:v1", port: 80, command: ["/old"], env: null },
    });
    if (plan.kind === "patch") expect(Object.keys(plan.spec).sort()).toEqual(["command", "env", "image", "port"]);
  });

  test("says why when there is nothing to go back to: no history, an unknown revision, no earlier Ready one", () => {
    expect(() => planUndo(webapp(), undefined, false)).toThrow('webapp "shop" has no rollout history yet');
    expect(() => planUndo(withHistory(webapp(), history), 9, false)).toThrow(
      '--to-revision 9: webapp "shop" has no such revision (it has: 1, 2, 3)',
    );
    const onlyCurrent = [record(1, "app:v3", true)];
    expect(() => planUndo(withHistory(webapp(), onlyCurrent), undefined, false)).toThrow(
      'webapp "shop" has no earlier Ready revision to go back to (revisions 1: only the current one (1) became Ready)',
    );
  });
});

describe("rollout undo against an API server where others write the WebApp meanwhile", () => {
  const history = [record(1, "app:v1", true), record(2, "app:v2", true), record(3, "app:v3", false)];
  const where = { name: "shop", namespace: "team" };
  const how = { toRevision: undefined, imageOnly: false, dryRun: "none" as const };
  /** A server holding the WebApp at generation 4, whose `meddle` runs before each PATCH reaches it. */
  function serverWith(meddle: (stored: KubeObject, patches: number) => KubeObject | undefined) {
    const server = createFakeApiServer("team");
    const w = withHistory(webapp(), history);
    server.put(WEBAPP_RESOURCE, { ...w, metadata: { ...w.metadata, generation: 4, resourceVersion: "10" } });
    let patches = 0;
    server.answer = (a) => {
      if (a.method !== "PATCH") return undefined;
      const stored = server.object(WEBAPP_RESOURCE, "team", "shop") as KubeObject;
      const changed = meddle(stored, ++patches);
      if (changed) server.put(WEBAPP_RESOURCE, changed);
      return undefined;
    };
    const sent = () => server.actions.filter((a) => a.method === "PATCH").map((a) => a.body);
    const stored = () => server.object(WEBAPP_RESOURCE, "team", "shop") as unknown as WebApp;
    return { server, sent, stored };
  }
  const bump = (o: KubeObject, over: Partial<KubeObject["metadata"]>): KubeObject => ({
    ...o,
    metadata: { ...o.metadata, resourceVersion: String(Number(o.metadata.resourceVersion) + 1), ...over },
  });

  test("a status write between its read and its patch: it reads again, plans again and patches at the new version", async () => {
    const { server, sent, stored } = serverWith((o, n) =>
      n === 1 ? bump({ ...o, status: { ...(o.status as object), observedGeneration: 4 } }, {}) : undefined,
    );
    const plan = await undoWebApp(server.client, where, how);
    expect([plan.kind, plan.record.revision]).toEqual(["patch", 2]);
    expect(sent()).toEqual([
      { metadata: { resourceVersion: "10" }, spec: { image: "app:v2" } },
      { metadata: { resourceVersion: "11" }, spec: { image: "app:v2" } },
    ]);
    expect([stored().spec.image, stored().spec.replicas]).toEqual(["app:v2", 2]);
  });

  test("a spec change between its read and its patch: it stops, says so, and leaves the other writer's spec", async () => {
    const { server, sent, stored } = serverWith((o, n) =>
      n === 1 ? bump({ ...o, spec: { ...(o.spec as object), image: "app:v4" } }, { generation: 5 }) : undefined,
    );
    await expect(undoWebApp(server.client, where, how)).rejects.toThrow(
      'webapp "shop"\'s spec changed while undo ran (generation 4 -> 5), so nothing was changed: see what runs now ' +
        "with `devctl webapp rollout history shop` and run undo again",
    );
    expect(sent()).toHaveLength(1);
    expect(stored().spec.image).toBe("app:v4");
  });

  test("status writes that never stop: it gives up after its retries with the API server's conflict", async () => {
    const { server, sent, stored } = serverWith((o) => bump(o, {}));
    await expect(undoWebApp(server.client, where, how)).rejects.toThrow("the object has been modified");
    expect(sent()).toHaveLength(CONFLICT_RETRIES + 1);
    expect(stored().spec.image).toBe("app:v3");
  });
});
