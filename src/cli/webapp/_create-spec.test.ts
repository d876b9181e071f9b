import { describe, expect, test } from "bun:test";
import { type CreateFlags, draftSpec, parseEnvFlag, validSpec } from "./_create-spec.ts";

const flags = (over: Partial<CreateFlags> = {}): CreateFlags => ({
  name: "shop",
  image: "shop:v3",
  port: "8080",
  ...over,
});
const refusal = (over: Partial<CreateFlags>) => {
  try {
    validSpec(flags(over));
  } catch (e) {
    return (e as Error).message;
  }
  return "accepted";
};

describe("the spec `devctl webapp create` sends", () => {
  test("without the new flags it is the spec of before: no field is added", () => {
    expect(validSpec(flags({ replicas: "3" }))).toEqual({ image: "shop:v3", replicas: 3, port: 8080 });
  });

  test("each new flag sets its field: env, envFrom, healthCheck, resource requests, podSecurity, expose", () => {
    const spec = validSpec(
      flags({
        env: ["MODE=production", "DSN=postgres://h/db?sslmode=require", "EMPTY="],
        "env-from-secret": ["shop-db", "shop-keys"],
        "health-path": "/healthz",
        cpu: "250m",
        memory: "256Mi",
        restricted: true,
        host: "shop.example.com",
      }),
    );
    expect(spec).toEqual({
      image: "shop:v3",
      replicas: 1,
      port: 8080,
      env: [
        { name: "MODE", value: "production" },
        { name: "DSN", value: "postgres://h/db?sslmode=require" },
        { name: "EMPTY", value: "" },
      ],
      envFrom: [{ secretRef: { name: "shop-db" } }, { secretRef: { name: "shop-keys" } }],
      healthCheck: { path: "/healthz" },
      resources: { requests: { cpu: "250m", memory: "256Mi" } },
      podSecurity: "restricted",
      expose: { host: "shop.example.com" },
    });
  });

  test("--min and --max set spec.autoscaling; beside --replicas, or without --cpu, each is refused naming its flag", () => {
    expect(validSpec(flags({ cpu: "100m", min: "2", max: "10" })).autoscaling).toEqual({
      minReplicas: 2,
      maxReplicas: 10,
    });
    expect(refusal({ cpu: "100m", min: "2", max: "10", replicas: "3" })).toContain(
      "spec.replicas (--replicas): spec.replicas and spec.autoscaling cannot both be set",
    );
    expect(refusal({ min: "2", max: "10" })).toContain(
      "spec.autoscaling (--min/--max): spec.autoscaling needs spec.resources.requests.cpu",
    );
    expect(refusal({ cpu: "100m", min: "2" })).toContain("spec.autoscaling.maxReplicas (--max):");
    expect(refusal({ cpu: "100m", min: "5", max: "3" })).toContain(
      "spec.autoscaling.minReplicas (--min): minReplicas must be at most maxReplicas",
    );
  });

  test("--cpu alone requests cpu only; --restricted=false and empty repeatables set nothing", () => {
    expect(draftSpec(flags({ cpu: "1" })).resources).toEqual({ requests: { cpu: "1" } });
    expect(Object.keys(draftSpec(flags({ restricted: false, env: [], "env-from-secret": [] })))).toEqual([
      "image",
      "replicas",
      "port",
    ]);
    expect(draftSpec(flags({ cpu: "1", max: "3" }))).not.toHaveProperty("replicas");
  });

  test("a bad value is refused naming its field and the flag that set it, every one at once", () => {
    const message = refusal({
      env: ["1X=a"],
      "env-from-secret": ["Shop_DB"],
      "health-path": "healthz",
      cpu: "half",
      memory: "-1Gi",
      host: "Shop.Example.com:80",
    });
    expect(message.split("; ").map((m) => m.slice(0, m.indexOf(":")))).toEqual([
      'invalid WebApp "shop"',
      "spec.envFrom[0].secretRef.name (--env-from-secret)",
      "spec.resources.requests.cpu (--cpu)",
      "spec.resources.requests.memory (--memory)",
      "spec.healthCheck.path (--health-path)",
      "spec.expose.host (--host)",
    ]);
    expect(message).toStartWith(
      'invalid WebApp "shop": spec.env[0].name (--env): must be an environment variable name',
    );
  });

  test("an --env given twice for one name is refused at --env", () => {
    expect(refusal({ env: ["A=1", "A=2"] })).toBe(
      'invalid WebApp "shop": spec.env (--env): each name may be set once ("A" is there twice)',
    );
  });
});

describe("parseEnvFlag", () => {
  test("splits at the first '=', and refuses a value without a name or without '='", () => {
    expect(parseEnvFlag("A=b=c", "--env")).toEqual({ name: "A", value: "b=c" });
    expect(parseEnvFlag("A=", "--env")).toEqual({ name: "A", value: "" });
    expect(() => parseEnvFlag("A", "--env")).toThrow('--env "A" must be NAME=VALUE');
    expect(() => parseEnvFlag("=b", "--env")).toThrow('--env "=b" must be NAME=VALUE');
  });
});
