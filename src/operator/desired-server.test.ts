/**
 * No write loop from the API server's defaulting and normalisation (issue #31): for each WebApp of
 * testdata/template-cases.ts, testdata/server-stored.json holds the Deployment intent devctl sent and the
 * Deployment kube-apiserver v1.36's own code stored for it (decoded, defaulted, validated and encoded, recorded by
 * `bun run tests/apicheck.ts`): quantities rewritten ("0.5" -> "500m", "1.5Gi" -> "1536Mi", "3072Mi" -> "3Gi"),
 * probes given their scheme, timeout, period and thresholds, an empty env value dropped, maps sorted. Read back
 * from the cache, that object must never look like drift, or every pass would write it again. The recording also
 * has Pod Security admission's own verdict on each stored pod template at level "restricted".
 */
import { describe, expect, test } from "bun:test";
import { parseWebApp } from "../api/parse.ts";
import type { KubeObject } from "../kube/types.ts";
import { desiredDeployment } from "./desired.ts";
import { needsApply } from "./diff.ts";
import { TEMPLATE_CASES } from "./testdata/template-cases.ts";

interface Stored {
  what: string;
  sent: KubeObject;
  errors: string[];
  stored: Record<string, any>;
  /** What Pod Security admission's "restricted" level (its v1.36 code) forbids in the stored pod template. */
  restricted: string[];
}

const recorded = (await Bun.file(new URL("./testdata/server-stored.json", import.meta.url)).json()) as Stored[];
const intentOf = (name: string, spec: unknown) => {
  const parsed = parseWebApp({ metadata: { name, namespace: "default", uid: `uid-${name}` }, spec });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return desiredDeployment(parsed.webapp);
};
const containerOf = (d: Record<string, any>) => d.spec.template.spec.containers[0];

describe("a Deployment as the API server stores it for our intent", () => {
  for (const [i, c] of TEMPLATE_CASES.entries()) {
    const r = recorded[i];
    test(`${c.what}: was recorded for today's intent, accepted, and reads as no drift`, () => {
      expect(r?.what).toBe(c.what);
      const intent = intentOf(c.name, c.spec);
      // A change to desired.ts must be recorded anew with the API server's code: `bun run tests/apicheck.ts`.
      expect(JSON.stringify(r?.sent)).toBe(JSON.stringify(intent));
      expect(r?.errors).toEqual([]);
      expect(needsApply(intent, r?.stored as KubeObject)).toEqual({ diffs: [], extra: 0 });
    });
  }

  test("is not our intent verbatim: the recording holds the normalisations that matter", () => {
    const shop = containerOf(recorded[1]!.stored);
    expect(shop.resources).toEqual({
      limits: { cpu: "2", memory: "3Gi" },
      requests: { cpu: "500m", memory: "1536Mi" },
    });
    expect(shop.readinessProbe).toEqual({
      httpGet: { path: "/healthz", port: 8080, scheme: "HTTP" },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    expect(shop.env[1]).toEqual({ name: "EMPTY" });
    const probes = containerOf(recorded[2]!.stored);
    expect(probes.readinessProbe.httpGet).toMatchObject({ path: "/", scheme: "HTTP" });
    expect(probes.livenessProbe.grpc).toEqual({ port: 9090, service: "" });
    expect(probes.resources).toEqual({
      limits: { cpu: "2", memory: "1G" },
      requests: { cpu: "1.500", memory: "512Mi" },
    });
    expect(containerOf(recorded[3]!.stored).resources).toEqual({ limits: { cpu: "250m", memory: "1153433600m" } });
  });

  test('podSecurity restricted passes Pod Security admission at "restricted"; a template without it fails its 4 checks', () => {
    const restricted = TEMPLATE_CASES.map((c, i) => [c.spec.podSecurity, recorded[i]?.restricted] as const);
    for (const [podSecurity, forbidden] of restricted) {
      if (podSecurity === "restricted") expect(forbidden).toEqual([]);
      else
        expect(forbidden?.map((f) => f.slice(0, f.indexOf(":")))).toEqual([
          "allowPrivilegeEscalation != false",
          "unrestricted capabilities",
          "runAsNonRoot != true",
          "seccompProfile",
        ]);
    }
    expect(restricted.filter(([p]) => p === "restricted")).toHaveLength(1);
  });

  test("would read as drift had the intent kept the user's spelling: what canonical quantities prevent", () => {
    const naive = structuredClone(recorded[1]!.sent) as Record<string, any>;
    containerOf(naive).resources.requests = { cpu: "0.5", memory: "1.5Gi" };
    expect(needsApply(naive as KubeObject, recorded[1]!.stored as KubeObject).diffs.map((d) => d.path)).toEqual([
      "spec.template.spec.containers[app].resources.requests.cpu",
      "spec.template.spec.containers[app].resources.requests.memory",
    ]);
    const zeroDelay = structuredClone(recorded[2]!.sent) as Record<string, any>;
    containerOf(zeroDelay).readinessProbe.initialDelaySeconds = 0;
    expect(needsApply(zeroDelay as KubeObject, recorded[2]!.stored as KubeObject).diffs).toHaveLength(1);
  });
});
