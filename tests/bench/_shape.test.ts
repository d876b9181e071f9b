import { expect, test } from "bun:test";
import { parseWebAppSpec } from "../../src/api/parse.ts";
import { webappObject } from "./_kube.ts";
import {
  PRODUCTION_SECRET,
  productionShape,
  productionSpec,
  SEED_SHAPE,
  SECRETS,
  specHasField,
  wantedChildren,
} from "./_shape.ts";

const names = ["app-00000", "app-00001", "app-00002", "app-00003"];

test("the seed shape is the seed's WebApp, unchanged, and wants a Deployment and a Service each", () => {
  const webapps = names.map((n, i) => SEED_SHAPE.webapp(n, "ns", "img:v1", i));
  expect(webapps[1]).toEqual(webappObject("app-00001", "ns", "img:v1"));
  expect(SEED_SHAPE.prerequisites("ns")).toEqual([]);
  expect(wantedChildren(webapps).map(({ kind, count }) => [kind, count])).toEqual([
    ["Deployment", 4],
    ["Service", 4],
  ]);
});

test("a production-shaped WebApp is valid and wants a PodDisruptionBudget and an Ingress besides", () => {
  const shape = productionShape(false);
  const webapps = names.map((n, i) => shape.webapp(n, "ns", "img:v1", i));
  for (const w of webapps) expect(parseWebAppSpec(w).ok).toBe(true);
  expect(wantedChildren(webapps).map(({ kind, count }) => [kind, count])).toEqual([
    ["Deployment", 4],
    ["Service", 4],
    ["PodDisruptionBudget", 4],
    ["Ingress", 4],
  ]);
  const spec = productionSpec("app-00000", "img:v1", 0, false);
  expect(spec).toMatchObject({ replicas: 2, healthCheck: { path: "/healthz" }, expose: {} });
  expect(spec).not.toHaveProperty("autoscaling");
  expect(JSON.stringify(spec.expose)).not.toContain("ingressClassName");
});

test("the Secret a production-shaped env reads is among its namespace's prerequisites", () => {
  const [secret, ...rest] = productionShape(false).prerequisites("ns");
  expect(rest).toEqual([]);
  expect(secret?.rt).toBe(SECRETS);
  expect(secret?.object.metadata).toEqual({ name: PRODUCTION_SECRET, namespace: "ns" });
  const env = productionSpec("a", "img:v1", 0, false).env as { valueFrom?: { secretKeyRef?: { name: string } } }[];
  const refs = env.flatMap((e) => (e.valueFrom?.secretKeyRef ? [e.valueFrom.secretKeyRef.name] : []));
  expect(refs).toEqual([PRODUCTION_SECRET]);
});

test("with HPA on half, even WebApps autoscale from 2 to 4 without replicas and odd ones run 2 replicas", () => {
  const even = productionSpec("app-00000", "img:v1", 0, true);
  const odd = productionSpec("app-00001", "img:v1", 1, true);
  expect(even.autoscaling).toEqual({ minReplicas: 2, maxReplicas: 4 });
  expect(even).not.toHaveProperty("replicas");
  expect(odd.replicas).toBe(2);
  expect(odd).not.toHaveProperty("autoscaling");
  expect(even.resources).toMatchObject({ requests: { cpu: "10m" } });
});

test("specHasField reads the generated CRD: image is a field, a made-up name is not", () => {
  expect(specHasField("image")).toBe(true);
  expect(specHasField("expose")).toBe(true);
  expect(specHasField("noSuchField")).toBe(false);
});
