import { describe, expect, test } from "bun:test";
import { podSpecOf, type RolloutRecord } from "../../api/rollout-history.ts";
import type { WebApp } from "../../api/webapp.ts";
import { podTemplateDigest } from "../../operator/desired.ts";
import { planUndo } from "./rollout-undo.ts";

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
