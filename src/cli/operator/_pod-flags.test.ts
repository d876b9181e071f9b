import { describe, expect, test } from "bun:test";
import { installOptionsFrom } from "./install.ts";
import { parseNodeSelector, parsePullPolicy, parsePullSecrets, parseTolerations } from "./_pod-flags.ts";

const usage = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return `${(e as Error).name}: ${(e as Error).message}`;
  }
  return "no error";
};

describe("--node-selector", () => {
  test("takes comma-separated key=value pairs, prefixed keys and empty values included", () => {
    expect(parseNodeSelector("kubernetes.io/os=linux, pool=ops,empty=")).toEqual({
      "kubernetes.io/os": "linux",
      pool: "ops",
      empty: "",
    });
    expect(parseNodeSelector(["a=1", "b=2"])).toEqual({ a: "1", b: "2" });
    expect(parseNodeSelector(undefined)).toBeUndefined();
  });

  test("refuses an item without '=', a bad key and a bad value, naming the item", () => {
    expect(usage(() => parseNodeSelector("pool"))).toBe(
      'UsageError: --node-selector "pool" must be key=value, e.g. kubernetes.io/os=linux',
    );
    expect(usage(() => parseNodeSelector("Bad_Prefix/x=1"))).toContain(
      'its prefix "Bad_Prefix" must be a DNS subdomain',
    );
    expect(usage(() => parseNodeSelector("a=b c"))).toContain('--node-selector "a=b c" is invalid: the value must be');
    expect(usage(() => parseNodeSelector(`${"k".repeat(64)}=v`))).toContain("its name must be 1 to 63");
  });
});

describe("--toleration", () => {
  test("reads kubectl taint syntax: value means Equal, none means Exists, no effect means every effect", () => {
    expect(parseTolerations("dedicated=operators:NoSchedule,devctl.dev/real:NoExecute,spot=yes,gpu")).toEqual([
      { key: "dedicated", operator: "Equal", value: "operators", effect: "NoSchedule" },
      { key: "devctl.dev/real", operator: "Exists", effect: "NoExecute" },
      { key: "spot", operator: "Equal", value: "yes" },
      { key: "gpu", operator: "Exists" },
    ]);
  });

  test("refuses an unknown effect and a bad key, saying the syntax", () => {
    expect(usage(() => parseTolerations("a=b:NoRun"))).toBe(
      'UsageError: --toleration "a=b:NoRun" is invalid: the effect must be one of NoSchedule, PreferNoSchedule, NoExecute; use key=value:Effect, key:Effect, key=value or key, e.g. dedicated=operators:NoSchedule',
    );
    expect(usage(() => parseTolerations("=x:NoSchedule"))).toContain("its name must be 1 to 63");
  });
});

describe("--image-pull-policy and --image-pull-secret", () => {
  test("the policy is one of Kubernetes' three, spelled as Kubernetes spells them", () => {
    expect(parsePullPolicy("Never")).toBe("Never");
    expect(parsePullPolicy(undefined)).toBeUndefined();
    expect(usage(() => parsePullPolicy("never"))).toBe(
      'UsageError: --image-pull-policy "never" must be one of: Always, IfNotPresent, Never',
    );
  });

  test("secrets are Secret names, deduplicated in order", () => {
    expect(parsePullSecrets("regcred,other.cred,regcred")).toEqual(["regcred", "other.cred"]);
    expect(usage(() => parsePullSecrets("Reg_Cred"))).toContain('--image-pull-secret "Reg_Cred" is not a Secret name');
  });
});

test("install's options carry the pod flags, and a bad one is a UsageError", () => {
  const o = installOptionsFrom({
    namespace: "ops",
    replicas: "1",
    "node-selector": "pool=ops",
    toleration: "pool=ops:NoSchedule",
    "image-pull-policy": "IfNotPresent",
    "image-pull-secret": "regcred",
  });
  expect(o).toMatchObject({
    nodeSelector: { pool: "ops" },
    tolerations: [{ key: "pool", operator: "Equal", value: "ops", effect: "NoSchedule" }],
    imagePullPolicy: "IfNotPresent",
    imagePullSecrets: ["regcred"],
  });
  expect(usage(() => installOptionsFrom({ replicas: "1", toleration: "x:Never" }))).toContain("UsageError");
});
