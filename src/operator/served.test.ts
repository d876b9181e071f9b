import { describe, expect, test } from "bun:test";
import { KubeError } from "../kube/errors.ts";
import type { KubeClient } from "../kube/types.ts";
import { testApp } from "./_test-fixtures.ts";
import { unservedKinds, unservedProblems } from "./served.ts";

/** A client whose discovery answers from `groups` ("autoscaling/v2" -> plurals); any other group-version is a 404. */
function discovery(groups: Record<string, string[] | Error>): KubeClient & { asked: string[] } {
  const asked: string[] = [];
  const raw = async (method: string, path: string) => {
    asked.push(`${method} ${path}`);
    const answer = groups[path.replace(/^\/apis\//, "")];
    if (answer instanceof Error) throw answer;
    if (!answer) throw new KubeError("NotFound", "the server could not find the requested resource", 404);
    return { resources: answer.map((name) => ({ name })) };
  };
  return Object.assign({ raw } as unknown as KubeClient, { asked });
}

const ALL = {
  "policy/v1": ["poddisruptionbudgets", "poddisruptionbudgets/status"],
  "networking.k8s.io/v1": ["ingresses", "ingressclasses", "networkpolicies"],
  "autoscaling/v2": ["horizontalpodautoscalers"],
};

describe("unservedKinds", () => {
  test("asks discovery once per group-version of an optional kind; a cluster serving all has none unserved", async () => {
    const client = discovery(ALL);
    expect([...(await unservedKinds(client))]).toEqual([]);
    expect(client.asked.sort()).toEqual([
      "GET /apis/autoscaling/v2",
      "GET /apis/networking.k8s.io/v1",
      "GET /apis/policy/v1",
    ]);
  });

  test("a group-version that is a 404, or that lists no such resource, leaves its kind unserved", async () => {
    const { "autoscaling/v2": _gone, ...rest } = ALL;
    const unserved = await unservedKinds(discovery({ ...rest, "policy/v1": ["evictions"] }));
    expect([...unserved].sort()).toEqual(["HorizontalPodAutoscaler", "PodDisruptionBudget"]);
  });

  test("any other failure is not guessed at: it is thrown", async () => {
    const failing = discovery({ ...ALL, "policy/v1": new KubeError("Forbidden", "forbidden", 403) });
    await expect(unservedKinds(failing)).rejects.toThrow("forbidden");
  });
});

describe("unservedProblems", () => {
  test("one Stalled KindNotServed per kind the WebApp wants and the cluster does not serve, saying what asks for it", () => {
    const app = testApp({ replicas: 3, expose: { host: "shop.example.com" } });
    const problems = unservedProblems(app, new Set(["Ingress", "HorizontalPodAutoscaler"]));
    expect(problems).toEqual([
      {
        reason: "KindNotServed",
        message:
          "Ingress test-app-ingress cannot be created: this cluster does not serve networking.k8s.io/v1 ingresses " +
          "(Kubernetes serves them from 1.19), which spec.expose asks for; change the spec or upgrade the cluster, " +
          "then restart the operator",
      },
    ]);
    expect(unservedProblems(testApp(), new Set())).toEqual([]);
  });
});
