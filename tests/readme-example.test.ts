/**
 * README.md's "production WebApp" (issue #31 item 6) applied exactly as printed, the block between its
 * production-example markers, with `kubectl apply -n`: the CRD admits it, the operator converges it (the
 * Deployment carries every field and starts at the autoscaler's minimum of 3, a HorizontalPodAutoscaler of 3-10, a
 * PodDisruptionBudget with minAvailable 2, an Ingress for its host with TLS) and it
 * turns Ready. The pods are KWOK's, which neither pull the image nor run the probes: the real-node suite
 * (tests/realnode/production.test.ts) proves those fields on a real kubelet.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HORIZONTAL_POD_AUTOSCALERS, INGRESSES, POD_DISRUPTION_BUDGETS } from "../src/kube/resources.ts";
import type { KubeObject } from "../src/kube/types.ts";
import { operatorForFile } from "./_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  ROOT,
  WEBAPPS,
  type WebAppLike,
} from "./_support.ts";

/** The YAML block between the README's production-example markers, as printed. */
function readmeExample(readme: string): string {
  const m = /<!-- production-example:start -->\n```yaml\n([\s\S]*?)```\n<!-- production-example:end -->/.exec(readme);
  if (!m?.[1]) throw new Error("README.md has no production-example block between its markers");
  return m[1];
}

const ns = operatorForFile("readme");

describe("README.md's production WebApp", () => {
  test("is admitted as printed, converges with every field on its children, and turns Ready", async () => {
    const yaml = readmeExample(readFileSync(join(ROOT, "README.md"), "utf8"));
    const applied = kubectl(["apply", "-n", ns.name, "-f", "-"], yaml);
    expect(applied.stderr).toBe("");
    expect(applied.stdout.trim()).toBe("webapp.apps.example.com/shop created");

    const wa = await eventually(
      async () => {
        const w = await getOrUndefined<WebAppLike>(WEBAPPS, "shop", ns.name);
        return conditionOf(w, "Ready")?.status === "True" ? w : undefined;
      },
      60_000,
      "the README's WebApp Ready",
    );
    expect(conditionOf(wa, "Available")?.message).toContain("Ingress shop-ingress has no address yet");

    type Container = {
      command?: string[];
      env?: { name: string }[];
      readinessProbe?: unknown;
      livenessProbe?: unknown;
    };
    const dep = (await kube.get<KubeObject>(DEPLOYMENTS, "shop-deployment", ns.name)) as KubeObject & {
      spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
    };
    const container = dep.spec.template.spec.containers[0] as Container;
    expect(container.command).toEqual(["/app/server"]);
    expect(container.env?.map((e) => e.name)).toEqual(["MODE", "DATABASE_URL"]);
    expect(container.readinessProbe).toBeDefined();
    expect(container.livenessProbe).toBeDefined();
    expect(dep.spec.template.metadata.labels.team).toBe("shop");

    const pdb = await kube.get<KubeObject & { spec: Record<string, unknown> }>(
      POD_DISRUPTION_BUDGETS,
      "shop-pdb",
      ns.name,
    );
    expect(pdb.spec.minAvailable).toBe(2);
    const hpa = await kube.get<KubeObject & { spec: Record<string, unknown> }>(
      HORIZONTAL_POD_AUTOSCALERS,
      "shop-hpa",
      ns.name,
    );
    expect(hpa.spec).toMatchObject({ minReplicas: 3, maxReplicas: 10 });
    expect((dep.spec as { replicas?: number }).replicas).toBe(3);
    const ingress = await kube.get<KubeObject & { spec: { tls?: unknown; rules: { host: string }[] } }>(
      INGRESSES,
      "shop-ingress",
      ns.name,
    );
    expect(ingress.spec.rules[0]?.host).toBe("shop.example.com");
    expect(ingress.spec.tls).toEqual([{ hosts: ["shop.example.com"], secretName: "shop-tls" }]);
  });
});
