import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import * as v from "valibot";
import { type AdmittedField, WebAppStatus } from "../api/webapp.ts";
import { admittedBy, drift, OVERFLOW_PATH, PER_KIND, sameAdmitted, withAdmitted } from "./admission.ts";
import { desiredDeployment } from "./desired.ts";
import { type ApplyCheck, type Diff, needsApply } from "./diff.ts";

const IMAGE = "spec.template.spec.containers[app].image";
const pinned = (image: string) => `${image}@sha256:${"1".repeat(64)}`;

/** The intent as the API server stored it: the image pinned by admission, and maybe scaled by someone. */
function stored(image: string, replicas = 3): KubeObject {
  const d = structuredClone(desiredDeployment(testApp({ image }))) as KubeObject & Record<string, any>;
  d.spec.template.spec.containers[0].image = pinned(image);
  d.spec.replicas = replicas;
  return d;
}

describe("what admission made of our write", () => {
  test("is recorded from what the write returned: the field, what we sent, what was stored", () => {
    const want = desiredDeployment(testApp({ image: "nginx:1.25" }));
    expect(admittedBy("Deployment", needsApply(want, stored("nginx:1.25")))).toEqual([
      { kind: "Deployment", path: IMAGE, sent: '"nginx:1.25"', stored: JSON.stringify(pinned("nginx:1.25")) },
    ]);
  });

  test("is no drift while the intent and the child still hold what was recorded; anything else is", () => {
    const want = desiredDeployment(testApp({ image: "nginx:1.25" }));
    const records = admittedBy("Deployment", needsApply(want, stored("nginx:1.25")));
    expect(drift("Deployment", needsApply(want, stored("nginx:1.25")), records)).toEqual([]);
    // Someone scaled it: drift, the pinned image still not.
    expect(drift("Deployment", needsApply(want, stored("nginx:1.25", 5)), records).map((d) => d.path)).toEqual([
      "spec.replicas",
    ]);
    // A new spec: the record is for what we sent before, so the image is drift again.
    const next = desiredDeployment(testApp({ image: "nginx:1.26" }));
    expect(drift("Deployment", needsApply(next, stored("nginx:1.25")), records).map((d) => d.path)).toEqual([IMAGE]);
    // Someone set another image by hand: not what was stored, drift.
    const edited = stored("nginx:1.25");
    (edited.spec as any).template.spec.containers[0].image = "evil:latest";
    expect(drift("Deployment", needsApply(want, edited), records).map((d) => d.path)).toEqual([IMAGE]);
    // Records of another kind explain nothing here.
    expect(drift("Service", needsApply(want, stored("nginx:1.25")), records).map((d) => d.path)).toEqual([IMAGE]);
  });

  test("a kind's records are replaced by its latest write's, the others' kept; compared as they are stored", () => {
    const svc = { kind: "Service", path: "metadata.labels[app]", sent: '"a"', stored: '"b"' };
    const dep = { kind: "Deployment", path: IMAGE, sent: '"x"', stored: '"y"' };
    expect(withAdmitted([svc, dep], "Deployment", [])).toEqual([svc]);
    expect(withAdmitted([svc], "Deployment", [dep])).toEqual([svc, dep]);
    expect(sameAdmitted(undefined, [])).toBe(true);
    expect(sameAdmitted([svc], [dep])).toBe(false);
  });
});

describe("the records fit what the CRD lets the status hold", () => {
  const check = (diffs: Diff[]): ApplyCheck => ({ diffs, extra: 0 });
  const field = (i: number, want: unknown, have: unknown): Diff => ({ path: `spec.f${i}`, want, have });
  const fits = (records: AdmittedField[]) => v.safeParse(WebAppStatus, { admitted: records }).success;

  test("a value longer than the CRD's limit is recorded as its digest, and still tells admission from drift", () => {
    const long = "x".repeat(5000);
    const returned = check([field(1, long, `${long}-pinned`)]);
    const records = admittedBy("Deployment", returned);
    expect(records[0]?.sent).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(records[0]?.stored).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(fits(records)).toBe(true);
    expect(drift("Deployment", returned, records)).toEqual([]);
    expect(drift("Deployment", check([field(1, long, `${long}-edited`)]), records)).toHaveLength(1);
  });

  test("past PER_KIND fields, the rest is one record: 7 kinds of 40 fields each fit the status", () => {
    const many = check(Array.from({ length: 40 }, (_, i) => field(i, i, i + 1)));
    const records = ["A", "B", "C", "D", "E", "F", "G"].flatMap((kind) => admittedBy(kind, many));
    expect(records.filter((r) => r.kind === "A")).toHaveLength(PER_KIND + 1);
    expect(records.filter((r) => r.path === OVERFLOW_PATH)).toHaveLength(7);
    expect(fits(records)).toBe(true);
    // Unchanged: no drift. One field past PER_KIND edited: every field the overflow record stood for is drift.
    expect(drift("A", many, records)).toEqual([]);
    const edited = check(many.diffs.map((d, i) => (i === 30 ? { ...d, have: "edited" } : d)));
    expect(drift("A", edited, records).map((d) => d.path)).toEqual(many.diffs.slice(PER_KIND).map((d) => d.path));
    // One of the first PER_KIND edited: it is drift, and so is the rest (what the overflow record stood for changed).
    const first = check(many.diffs.map((d, i) => (i === 0 ? { ...d, have: "edited" } : d)));
    expect(drift("A", first, records).map((d) => d.path)).toEqual([
      "spec.f0",
      ...many.diffs.slice(PER_KIND).map((d) => d.path),
    ]);
  });
});
