import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import { admittedBy, drift, sameAdmitted, withAdmitted } from "./admission.ts";
import { desiredDeployment } from "./desired.ts";
import { needsApply } from "./diff.ts";

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
