import { describe, expect, test } from "bun:test";
import type { KubeObject, OwnerReference } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import { adoptionPatch, previousIncarnation, type JsonPatchOp } from "./adopt.ts";

const ref = (over: Partial<OwnerReference> = {}): OwnerReference => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  name: "test-app",
  uid: "uid-0",
  controller: true,
  blockOwnerDeletion: true,
  ...over,
});
const child = (refs: OwnerReference[] | undefined): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: {
    name: "test-app-deployment",
    namespace: "default",
    uid: "child-1",
    ...(refs ? { ownerReferences: refs } : {}),
  },
});

/** RFC 6902 test/replace over plain JSON, as the API server evaluates them. */
function applyPatch(obj: KubeObject, ops: JsonPatchOp[]): KubeObject {
  const out = structuredClone(obj) as unknown as Record<string, unknown>;
  for (const { op, path, value } of ops) {
    const keys = path.slice(1).split("/");
    const last = keys.pop()!;
    const parent = keys.reduce<any>((o, k) => o?.[k], out);
    if (op === "test" && JSON.stringify(parent?.[last]) !== JSON.stringify(value))
      throw new Error(`test failed at ${path}`);
    if (op === "replace") parent[last] = value;
  }
  return out as unknown as KubeObject;
}

describe("previousIncarnation", () => {
  test("a child controlled by a WebApp of the same name and another uid is from a previous incarnation", () => {
    expect(previousIncarnation(child([ref()]), testApp())).toEqual(ref());
  });

  test("children of this WebApp, of other WebApps, of other kinds or groups, or without a controller are not", () => {
    const app = testApp();
    expect(previousIncarnation(child([ref({ uid: "uid-1" })]), app)).toBeUndefined();
    expect(previousIncarnation(child([ref({ name: "other-app" })]), app)).toBeUndefined();
    expect(previousIncarnation(child([ref({ kind: "Deployment", apiVersion: "apps/v1" })]), app)).toBeUndefined();
    expect(previousIncarnation(child([ref({ apiVersion: "evil.example.com/v1" })]), app)).toBeUndefined();
    expect(previousIncarnation(child([ref({ controller: false })]), app)).toBeUndefined();
    expect(previousIncarnation(child(undefined), app)).toBeUndefined();
  });

  test("a child being deleted is left to the garbage collector", () => {
    const dying = child([ref()]);
    dying.metadata.deletionTimestamp = "2024-05-01T12:00:00Z";
    expect(previousIncarnation(dying, testApp())).toBeUndefined();
  });

  test("a WebApp never stored (no uid) adopts nothing", () => {
    expect(previousIncarnation(child([ref()]), testApp({}, null))).toBeUndefined();
  });
});

describe("adoptionPatch", () => {
  test("replaces only the previous controller reference, keeping other owners", () => {
    const other = { apiVersion: "v1", kind: "ConfigMap", name: "keep-me", uid: "cm-1" };
    const before = child([other, ref()]);
    const after = applyPatch(before, adoptionPatch(before, testApp()));
    expect(after.metadata.ownerReferences).toEqual([other, ref({ uid: "uid-1" })]);
    expect(after.metadata.uid).toBe("child-1");
  });

  test("pins the child's uid and the old owner's uid: a child replaced or re-owned meanwhile makes it fail", () => {
    const before = child([ref()]);
    const patch = adoptionPatch(before, testApp());
    expect(() => applyPatch({ ...before, metadata: { ...before.metadata, uid: "child-2" } }, patch)).toThrow(
      "test failed at /metadata/uid",
    );
    expect(() => applyPatch(child([ref({ uid: "uid-9" })]), patch)).toThrow(
      "test failed at /metadata/ownerReferences/0/uid",
    );
  });

  test("refuses a child that is not from a previous incarnation", () => {
    expect(() => adoptionPatch(child([ref({ name: "other-app" })]), testApp())).toThrow(
      /not a child of a previous WebApp test-app/,
    );
  });
});
