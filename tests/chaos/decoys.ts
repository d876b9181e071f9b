/**
 * Objects in the soak's namespace that the operator must never modify, and their fingerprints.
 *
 * - `<collision>-deployment`: a foreign Deployment with the very name the operator wants for one
 *   WebApp (which must stay Degraded/ResourceExists);
 * - `unrelated-web`: an unrelated Deployment and a Service selecting it;
 * - `impostor-deployment` / `impostor-svc`: labelled managed-by=webapp-operator (so they sit in the
 *   operator's caches) but owned by nobody.
 * A fingerprint is everything a writer could change except what controllers legitimately keep
 * writing: generation, spec, labels, annotations, owners, finalizers, and the managedFields of the
 * main resource (manager, operation, fields; not their timestamps, not the status subresource).
 * Fingerprints are taken once the Deployment controller has settled them (revision annotation
 * written, observedGeneration current), so its own first writes do not count as changes.
 */
import { isNotFound } from "../../src/kube/errors.ts";
import type { KubeClient, KubeObject, ResourceType } from "../../src/kube/types.ts";
import { DEPLOYMENTS, SERVICES } from "../_support.ts";

export interface Decoy {
  rt: ResourceType;
  name: string;
  /** The object planted (a re-created one of the same name is not the decoy). */
  uid: string;
  fingerprint?: string;
}

const deployment = (name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, labels },
  spec: {
    replicas: 1,
    selector: { matchLabels: labels },
    template: { metadata: { labels }, spec: { containers: [{ name: "main", image: "registry.k8s.io/pause:3.10" }] } },
  },
});
const service = (name: string, labels: Record<string, string>, selector: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, labels },
  spec: { selector, ports: [{ name: "web", port: 8080, targetPort: 8080, protocol: "TCP" }] },
});

export async function plantDecoys(client: KubeClient, namespace: string, collisionName: string): Promise<Decoy[]> {
  const impostor = { app: "impostor", "managed-by": "webapp-operator" };
  const planted: [ResourceType, KubeObject][] = [
    [DEPLOYMENTS, deployment(`${collisionName}-deployment`, { team: "someone-else" })],
    [DEPLOYMENTS, deployment("unrelated-web", { app: "unrelated-web" })],
    [SERVICES, service("unrelated-web", { app: "unrelated-web" }, { app: "unrelated-web" })],
    [DEPLOYMENTS, deployment("impostor-deployment", impostor)],
    [SERVICES, service("impostor-svc", impostor, impostor)],
  ];
  const decoys: Decoy[] = [];
  for (const [rt, obj] of planted) {
    const made = await client.create(rt, { ...obj, metadata: { ...obj.metadata, namespace } });
    decoys.push({ rt, name: obj.metadata.name as string, uid: made.metadata.uid as string });
  }
  return decoys;
}

interface Settling extends KubeObject {
  status?: { observedGeneration?: number };
}

export function fingerprintOf(obj: KubeObject): string {
  const m = obj.metadata;
  const managed = (
    (m.managedFields ?? []) as { manager?: string; operation?: string; subresource?: string; fieldsV1?: unknown }[]
  )
    .filter((f) => !f.subresource)
    .map((f) => ({ manager: f.manager, operation: f.operation, fields: f.fieldsV1 }));
  return JSON.stringify({
    generation: m.generation,
    spec: obj.spec,
    labels: m.labels,
    annotations: m.annotations,
    owners: m.ownerReferences,
    finalizers: m.finalizers,
    managed,
  });
}

/** Waits until each decoy is settled, then records its fingerprint. */
export async function fingerprintDecoys(
  client: KubeClient,
  namespace: string,
  decoys: Decoy[],
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const d of decoys) {
    for (;;) {
      const obj = await client.get<Settling>(d.rt, d.name, namespace);
      const settled =
        d.rt !== DEPLOYMENTS ||
        (obj.metadata.annotations?.["deployment.kubernetes.io/revision"] &&
          obj.status?.observedGeneration === obj.metadata.generation);
      if (settled) {
        d.fingerprint = fingerprintOf(obj);
        break;
      }
      if (Date.now() > deadline) throw new Error(`decoy ${d.rt.kind} ${d.name} did not settle within ${timeoutMs} ms`);
      await Bun.sleep(250);
    }
  }
}

/** Problems: decoys that are gone, or whose fingerprint changed (with both versions). */
export async function changedDecoys(client: KubeClient, namespace: string, decoys: Decoy[]): Promise<string[]> {
  const problems: string[] = [];
  for (const d of decoys) {
    try {
      const now = fingerprintOf(await client.get(d.rt, d.name, namespace));
      if (now !== d.fingerprint)
        problems.push(`${d.rt.kind} ${d.name} changed:\n      before ${d.fingerprint}\n      after  ${now}`);
      if (now.includes('"manager":"webapp-operator"'))
        problems.push(`${d.rt.kind} ${d.name} has fields managed by webapp-operator`);
    } catch (e) {
      problems.push(
        isNotFound(e) ? `${d.rt.kind} ${d.name} was deleted` : `${d.rt.kind} ${d.name}: ${(e as Error).message}`,
      );
    }
  }
  return problems;
}
