import { describe, expect, test } from "bun:test";
import type { KubeObject } from "../kube/types.ts";
import { POD_SECURITY_LABELS } from "./hardening.ts";
import {
  describeLeft,
  labelCommand,
  missingLabels,
  podSecurityLabelPlan,
  withPlannedLabels,
} from "./namespace-labels.ts";

const ENFORCE = "pod-security.kubernetes.io/enforce";
const owns = (manager: string, ...labels: string[]) => ({
  manager,
  operation: manager === "devctl" ? "Apply" : "Update",
  fieldsV1: { "f:metadata": { "f:labels": Object.fromEntries(labels.map((l) => [`f:${l}`, {}])) } },
});
const ns = (labels: Record<string, string>, managedFields: unknown[]): KubeObject => ({
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: "team", labels, managedFields: managedFields as never },
});

describe("podSecurityLabelPlan", () => {
  test("a namespace that does not exist yet gets every label", () => {
    expect(podSecurityLabelPlan(undefined)).toEqual({ apply: { ...POD_SECURITY_LABELS }, left: [] });
  });

  test("a namespace devctl created alone (an earlier install) gets the labels it lacks", () => {
    const ours = ns({ "app.kubernetes.io/managed-by": "devctl" }, [owns("devctl", "app.kubernetes.io/managed-by")]);
    expect(podSecurityLabelPlan(ours)).toEqual({ apply: { ...POD_SECURITY_LABELS }, left: [] });
  });

  test("a namespace that existed before gets none it lacks, and each is said with the namespace's own value", () => {
    const theirs = ns({ "kubernetes.io/metadata.name": "team" }, [
      owns("kubectl-create", "kubernetes.io/metadata.name"),
    ]);
    const plan = podSecurityLabelPlan(theirs);
    expect(plan.apply).toEqual({});
    expect(plan.left.map((l) => l.key)).toEqual(Object.keys(POD_SECURITY_LABELS));
    expect(plan.left[0]).toEqual({ key: ENFORCE, want: "restricted" });
  });

  test("a label someone else set to another value is kept, even in a namespace devctl manages", () => {
    const labels = { ...POD_SECURITY_LABELS, [ENFORCE]: "privileged" };
    const others = Object.keys(POD_SECURITY_LABELS).filter((k) => k !== ENFORCE);
    const live = ns(labels, [owns("devctl", ...others), owns("kubectl-label", ENFORCE)]);
    const plan = podSecurityLabelPlan(live);
    expect(plan.left).toEqual([{ key: ENFORCE, want: "restricted", have: "privileged" }]);
    expect(Object.keys(plan.apply)).toEqual(others);
    expect(describeLeft(plan.left)).toBe(`${ENFORCE} is "privileged"`);
    expect(labelCommand("team", plan.left)).toBe(`kubectl label namespace team ${ENFORCE}=restricted --overwrite`);
  });

  test("a namespace some client created with devctl's User-Agent (an Update, not install's apply) is not devctl's", () => {
    const live = ns({ [ENFORCE]: "baseline" }, [{ ...owns("devctl", ENFORCE), operation: "Update" }]);
    expect(podSecurityLabelPlan(live).left).toHaveLength(6);
    expect(podSecurityLabelPlan(live).left[0]).toEqual({ key: ENFORCE, want: "restricted", have: "baseline" });
  });

  test("a label devctl set itself (another value from an older install) is devctl's to change", () => {
    const live = ns({ [ENFORCE]: "baseline" }, [owns("kubectl-create"), owns("devctl", ENFORCE)]);
    const plan = podSecurityLabelPlan(live);
    expect(plan).toEqual({ apply: { ...POD_SECURITY_LABELS }, left: [] });
  });

  test("a label a user already set to the wanted value is applied as it is (nothing changes)", () => {
    const live = ns({ [ENFORCE]: "restricted" }, [owns("kubectl-label", ENFORCE)]);
    const plan = podSecurityLabelPlan(live);
    expect(plan.apply).toEqual({ [ENFORCE]: "restricted" });
    expect(plan.left).toHaveLength(5);
  });

  test("withPlannedLabels drops only the Pod Security labels the plan leaves out", () => {
    const obj: KubeObject = {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team", labels: { "app.kubernetes.io/managed-by": "devctl", ...POD_SECURITY_LABELS } },
    };
    expect(withPlannedLabels(obj, { apply: { [ENFORCE]: "restricted" }, left: [] }).metadata.labels).toEqual({
      "app.kubernetes.io/managed-by": "devctl",
      [ENFORCE]: "restricted",
    });
    expect(Object.keys(obj.metadata.labels ?? {})).toContain("pod-security.kubernetes.io/warn"); // not mutated
  });
});

describe("missingLabels", () => {
  test("names the wanted labels absent or with another value, and nothing when all are there", () => {
    expect(missingLabels({ ...POD_SECURITY_LABELS })).toEqual([]);
    expect(
      missingLabels({ ...POD_SECURITY_LABELS, [ENFORCE]: "baseline", "pod-security.kubernetes.io/warn": "" }),
    ).toEqual([
      { key: ENFORCE, want: "restricted", have: "baseline" },
      { key: "pod-security.kubernetes.io/warn", want: "restricted", have: "" },
    ]);
  });
});
