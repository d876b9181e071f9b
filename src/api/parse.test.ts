import { describe, expect, test } from "bun:test";
import { formatIssues, type Issue, MEMO_SIZE, parseWebApp, parseWebAppSpec } from "./parse.ts";
import { fixedReplicas, leastReplicas } from "./webapp.ts";

const webapp = (spec: unknown, name = "my-service") => ({ metadata: { name, namespace: "default" }, spec });

describe("parseWebAppSpec", () => {
  test("the seed's example is valid unchanged", () => {
    const out = parseWebAppSpec(webapp({ image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 }));
    expect(out).toEqual({ ok: true, spec: { image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 } });
  });

  test("the seed's test-app case is valid", () => {
    expect(parseWebAppSpec(webapp({ image: "nginx:1.25", replicas: 3, port: 80 }, "test-app"))).toEqual({
      ok: true,
      spec: { image: "nginx:1.25", replicas: 3, port: 80 },
    });
  });

  test("replicas left out stays out (no key is added), and the operator runs 1 pod: fixedReplicas", () => {
    const out = parseWebAppSpec(webapp({ image: "nginx:1.25", port: 80 }));
    expect(out.ok && out.spec).toEqual({ image: "nginx:1.25", port: 80 });
    expect(out.ok && fixedReplicas(out.spec)).toBe(1);
  });

  test("autoscaling: no replicas beside it, a CPU request, min at most max; the operator runs no fixed count", () => {
    const requests = { resources: { requests: { cpu: "100m" } } };
    const ok = parseWebAppSpec(webapp({ image: "a", port: 80, autoscaling: { maxReplicas: 5 }, ...requests }));
    expect(ok.ok && fixedReplicas(ok.spec)).toBeUndefined();
    expect(ok.ok && leastReplicas(ok.spec)).toBe(1);
    const errors = (spec: Record<string, unknown>) => {
      const out = parseWebAppSpec(webapp({ image: "a", port: 80, ...spec }));
      return out.ok ? [] : out.issues.map((i) => `${i.path}: ${i.message}`);
    };
    expect(errors({ replicas: 3, autoscaling: { maxReplicas: 5 }, ...requests })).toEqual([
      "spec.replicas: spec.replicas and spec.autoscaling cannot both be set: the autoscaler decides the number of " +
        "pods; remove spec.replicas, or remove spec.autoscaling to choose it yourself",
    ]);
    expect(errors({ autoscaling: { maxReplicas: 5 } })).toEqual([
      "spec.autoscaling: spec.autoscaling needs spec.resources.requests.cpu: the autoscaler measures CPU use in " +
        'percent of it; set it (e.g. "100m")',
    ]);
    expect(errors({ autoscaling: { maxReplicas: 5, targetMemoryUtilizationPercentage: 70 }, ...requests })).toEqual([
      "spec.autoscaling: spec.autoscaling.targetMemoryUtilizationPercentage needs spec.resources.requests.memory: " +
        'the autoscaler measures memory use in percent of it; set it (e.g. "128Mi")',
    ]);
    expect(errors({ autoscaling: { minReplicas: 6, maxReplicas: 5 }, ...requests })).toEqual([
      "spec.autoscaling.minReplicas: minReplicas must be at most maxReplicas: lower minReplicas or raise maxReplicas",
    ]);
    expect(errors({ autoscaling: { minReplicas: 0, maxReplicas: 1001 }, ...requests })).toEqual([
      "spec.autoscaling.minReplicas: must be at least 1 (got 0)",
      "spec.autoscaling.maxReplicas: must be at most 1000 (got 1001)",
    ]);
  });

  test("imagePullPolicy takes Kubernetes' three policies, and anything else is rejected naming them", () => {
    for (const policy of ["Always", "IfNotPresent", "Never"] as const) {
      const out = parseWebAppSpec(webapp({ image: "nginx:1.25", port: 80, imagePullPolicy: policy }));
      expect(out.ok && out.spec.imagePullPolicy).toBe(policy);
    }
    const out = parseWebAppSpec(webapp({ image: "nginx:1.25", port: 80, imagePullPolicy: "never" }));
    expect(out).toEqual({
      ok: false,
      issues: [{ path: "spec.imagePullPolicy", message: 'must be one of Always, IfNotPresent, Never (got "never")' }],
    });
  });

  test("port 0 and port 70000 are rejected with messages naming the field and the value", () => {
    for (const [port, message] of [
      [0, "must be at least 1 (got 0)"],
      [70000, "must be at most 65535 (got 70000)"],
    ] as const) {
      const out = parseWebAppSpec(webapp({ image: "nginx", port }));
      expect(out).toEqual({ ok: false, issues: [{ path: "spec.port", message }] });
      if (!out.ok) expect(formatIssues(out.issues)).toBe(`spec.port: ${message}`);
    }
  });

  test("replicas 0, 1001 and 2.5 are rejected, each saying what is wrong", () => {
    const msg = (replicas: number) => {
      const out = parseWebAppSpec(webapp({ image: "nginx", port: 80, replicas }));
      return out.ok ? "" : formatIssues(out.issues);
    };
    expect(msg(0)).toBe("spec.replicas: must be at least 1 (got 0)");
    expect(msg(1001)).toBe("spec.replicas: must be at most 1000 (got 1001)");
    expect(msg(2.5)).toBe("spec.replicas: must be a whole number (got 2.5)");
  });

  test("a name of 59 characters is accepted and one of 60 is rejected, saying why", () => {
    expect(parseWebAppSpec(webapp({ image: "nginx", port: 80 }, "a".repeat(59))).ok).toBe(true);
    const out = parseWebAppSpec(webapp({ image: "nginx", port: 80 }, "a".repeat(60)));
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.issues).toHaveLength(1);
    expect(out.issues[0]?.path).toBe("metadata.name");
    expect(out.issues[0]?.message).toStartWith("must be at most 59 characters (got 60)");
    expect(out.issues[0]?.message).toContain("63 characters");
  });

  test("names that are not DNS-1035 labels are rejected", () => {
    for (const name of ["1app", "my.app", "My-App", "app-", "-app", ""]) {
      const out = parseWebAppSpec(webapp({ image: "nginx", port: 80 }, name));
      expect(out.ok ? [] : out.issues.map((i) => i.path)).toEqual(["metadata.name"]);
    }
  });

  test("an empty image and an image with whitespace are rejected with distinct messages", () => {
    const empty = parseWebAppSpec(webapp({ image: "", port: 80 }));
    expect(empty.ok ? "" : formatIssues(empty.issues)).toBe(
      "spec.image: must not be empty: set it to a container image such as nginx:1.25",
    );
    const spaced = parseWebAppSpec(webapp({ image: "nginx 1.25", port: 80 }));
    expect(spaced.ok ? "" : formatIssues(spaced.issues)).toBe(
      'spec.image: must not contain whitespace (got "nginx 1.25")',
    );
  });

  test("missing fields and wrong types are all reported at once, in field order", () => {
    const out = parseWebAppSpec(webapp({ replicas: "5" }, "Bad"));
    expect(out.ok ? [] : formatIssues(out.issues).split("\n")).toEqual([
      expect.stringMatching(/^metadata.name: must be a DNS-1035 label/),
      "spec.image: is required",
      'spec.replicas: must be a number (got the string "5")',
      "spec.port: is required",
    ]);
  });

  test("a missing spec says which fields to set", () => {
    const out = parseWebAppSpec({ metadata: { name: "x" } });
    expect(out.ok ? "" : formatIssues(out.issues)).toBe(
      "spec: is required: set spec.image and spec.port (spec.replicas defaults to 1)",
    );
  });

  test("a missing name is reported unless generateName will supply one", () => {
    const missing = parseWebAppSpec({ metadata: {}, spec: { image: "nginx", port: 80 } });
    expect(missing.ok ? "" : formatIssues(missing.issues)).toBe("metadata.name: is required");
    expect(parseWebAppSpec({ metadata: { generateName: "web-" }, spec: { image: "nginx", port: 80 } }).ok).toBe(true);
  });

  test("a non-object is rejected as a whole", () => {
    expect(parseWebAppSpec("nope")).toEqual({
      ok: false,
      issues: [{ path: "", message: 'must be an object (got the string "nope")' }],
    });
  });
});

describe("parseWebApp", () => {
  test("returns the WebApp with its parsed spec and keeps the rest of the object", () => {
    const out = parseWebApp({
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      metadata: { name: "a", namespace: "ns", uid: "u1" },
      spec: { image: "nginx", port: 80 },
    });
    expect(out.ok && out.webapp).toEqual({
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      metadata: { name: "a", namespace: "ns", uid: "u1" },
      spec: { image: "nginx", port: 80 },
    });
  });

  test("a WebApp without a namespace is rejected", () => {
    const out = parseWebApp({ metadata: { name: "a" }, spec: { image: "nginx", port: 80 } });
    expect(out).toEqual({ ok: false, issues: [{ path: "metadata.namespace", message: "is required" }] });
  });
});

describe("parsing a cached (frozen) WebApp once", () => {
  const frozen = (spec: Record<string, unknown>) =>
    Object.freeze({
      metadata: Object.freeze({ name: "a", namespace: "ns", uid: "u1", resourceVersion: "7" }),
      spec: Object.freeze(spec),
    });

  test("a frozen WebApp gets the same frozen outcome on every call, from parseWebApp and parseWebAppSpec", () => {
    const obj = frozen({ image: "nginx", port: 80 });
    const first = parseWebApp(obj);
    expect(parseWebApp(obj)).toBe(first);
    expect(first.ok && first.webapp.spec).toEqual({ image: "nginx", port: 80 });
    expect(Object.isFrozen(first) && first.ok && Object.isFrozen(first.webapp.spec)).toBe(true);
    const spec = parseWebAppSpec(obj);
    expect(parseWebAppSpec(obj)).toBe(spec);
    expect(spec.ok && first.ok && spec.spec === first.webapp.spec).toBe(true);
  });

  test("the memory is bounded: the least recently used of more than MEMO_SIZE frozen WebApps is parsed again", () => {
    const [first, kept] = [frozen({ image: "nginx", port: 80 }), frozen({ image: "nginx", port: 81 })];
    const [firstOut, keptOut] = [parseWebApp(first), parseWebApp(kept)];
    for (let i = 0; i < MEMO_SIZE - 1; i++) {
      parseWebApp(frozen({ image: "nginx", port: 1000 + i }));
      if (i % 16 === 0) expect(parseWebApp(kept)).toBe(keptOut); // used again: stays
    }
    expect(parseWebApp(kept)).toBe(keptOut);
    const again = parseWebApp(first);
    expect(again).not.toBe(firstOut);
    expect(again).toEqual(firstOut);
  });

  test("an invalid frozen WebApp's issues are remembered and cannot be changed by a caller", () => {
    const obj = frozen({ image: "", port: 0 });
    const out = parseWebApp(obj);
    expect(parseWebApp(obj)).toBe(out);
    expect(out.ok ? [] : out.issues.map((i) => i.path)).toEqual(["spec.image", "spec.port"]);
    expect(() => !out.ok && (out.issues as Issue[]).push({ path: "x", message: "y" })).toThrow();
  });

  test("a WebApp that can still change (not frozen, or its spec or metadata not frozen) is parsed on every call", () => {
    const spec = { image: "nginx", port: 80 };
    const mutableSpec = Object.freeze({ metadata: Object.freeze({ name: "a", namespace: "ns" }), spec });
    expect(parseWebApp(mutableSpec).ok).toBe(true);
    spec.port = 0;
    expect(parseWebApp(mutableSpec).ok).toBe(false);
    const meta = { name: "a", namespace: "ns" };
    const mutableMeta = Object.freeze({ metadata: meta, spec: Object.freeze({ image: "nginx", port: 80 }) });
    expect(parseWebApp(mutableMeta).ok).toBe(true);
    meta.name = "Not-A-Label";
    expect(parseWebApp(mutableMeta).ok).toBe(false);
    const plain = { metadata: { name: "a", namespace: "ns" }, spec: { image: "nginx", port: 80 } };
    expect(parseWebApp(plain)).not.toBe(parseWebApp(plain));
  });
});

describe("the pod-template fields of issue #31", () => {
  test("a spec without them parses to exactly the spec of before: no key is added", () => {
    const out = parseWebAppSpec(webapp({ image: "nginx:1.25", replicas: 3, port: 80 }));
    expect(out.ok && Object.keys(out.spec)).toEqual(["image", "replicas", "port"]);
  });

  test("every issue of a bad spec is reported at once, each at its field, map keys as the API server writes them", () => {
    const out = parseWebAppSpec(
      webapp({
        image: "nginx",
        port: 80,
        env: [{ name: "A" }],
        resources: { requests: { cpu: "1" }, limits: { cpu: "500m" } },
        podLabels: { "example.com/team": "x".repeat(64) },
        healthCheck: { path: "/" },
        livenessProbe: { tcpSocket: { port: 80 } },
      }),
    );
    expect(out.ok ? [] : out.issues.map((i) => i.path)).toEqual([
      "spec.env[0]",
      "spec.resources.limits.cpu",
      "spec.podLabels.example.com/team",
      "spec.livenessProbe",
    ]);
  });

  test("a quantity written as a YAML number is refused with what to write instead", () => {
    const out = parseWebAppSpec(webapp({ image: "nginx", port: 80, resources: { requests: { cpu: 1 } } }));
    expect(out.ok ? "" : formatIssues(out.issues)).toEndWith("written as a string (got 1); quote numbers in YAML");
  });

  test("a cached WebApp's spec is handed out frozen all the way down", () => {
    const obj = Object.freeze({
      metadata: Object.freeze({ name: "a", namespace: "ns" }),
      spec: Object.freeze({ image: "nginx", port: 80, env: [{ name: "A", value: "1" }] }),
    });
    const out = parseWebApp(obj);
    const env = out.ok ? out.webapp.spec.env : undefined;
    expect(Object.isFrozen(env) && Object.isFrozen(env?.[0])).toBe(true);
  });
});
