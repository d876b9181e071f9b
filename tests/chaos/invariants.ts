/**
 * The end state a soak demands once churn has stopped, read from the API server (the truth), not
 * from what the churn believes it did.
 *
 * `convergenceChecks` (polled until all hold, within a bound):
 * - children: every WebApp has exactly one Deployment and exactly one Service controlled by it (owner
 *   uid), named <name>-deployment / <name>-svc, matching its spec (replicas, image, container port,
 *   labels and selector; Service port 80 -> spec.port, selector app/managed-by), the Deployment
 *   rolled out (observedGeneration current, readyReplicas = replicas);
 * - status: observedGeneration = generation, readyReplicas = spec.replicas, Available=True,
 *   Progressing=False, Degraded=False;
 * - collision: the WebApp whose Deployment name is taken stays Degraded/ResourceExists, has its
 *   Service and no Deployment of its own;
 * - orphans: every Deployment or Service owned by a WebApp or labelled managed-by=webapp-operator is
 *   controlled by a WebApp that exists with that uid (the planted decoys, by uid, are checked unchanged
 *   elsewhere), and no child named after a deleted WebApp remains. No other excuse.
 * `outsideUntouched`: WebApps in a namespace the operator does not watch got no children and no status.
 */
import { UNOBSERVED_STATUS } from "../../src/api/webapp.ts";
import { messageOf } from "../../src/kube/errors.ts";
import type { KubeClient, KubeObject } from "../../src/kube/types.ts";
import type { ManagerEntry } from "../../src/operator/ownership.ts";
import { DEPLOYMENTS, PODS, SERVICES, WEBAPPS, type WebAppLike } from "../_support.ts";

export interface CheckResult {
  name: string;
  ok: boolean;
  /** How many objects the check looked at. */
  checked: number;
  problems: string[];
}

interface Child extends KubeObject {
  spec: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> } | Record<string, string>;
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec: { containers: { name: string; image: string; ports?: { containerPort: number }[] }[] };
    };
    ports?: { port: number; targetPort: number | string }[];
  };
  status?: { readyReplicas?: number; replicas?: number; observedGeneration?: number };
}

const MANAGED = { "managed-by": "webapp-operator" };
const controllerUid = (o: KubeObject) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid;
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The pods of a WebApp, for a failure to be read: "x-deployment-abc-1 Pending on kwok-node-0 (ready False), ...". */
async function podsOf(client: KubeClient, namespace: string, app: string): Promise<string> {
  type Pod = KubeObject & {
    spec?: { nodeName?: string };
    status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
  };
  try {
    const pods = await client.listAll<Pod>(PODS, { namespace, labelSelector: `app=${app}` });
    const described = pods.items.map((p) => {
      const ready = p.status?.conditions?.find((c) => c.type === "Ready");
      const scheduled = p.status?.conditions?.find((c) => c.type === "PodScheduled");
      const where = p.spec?.nodeName ? `on ${p.spec.nodeName}` : `unscheduled (${scheduled?.reason ?? "no reason"})`;
      const gone = p.metadata.deletionTimestamp ? ", being deleted" : "";
      return `${p.metadata.name} ${p.status?.phase ?? "no phase"} ${where} (ready ${ready?.status ?? "?"}${gone})`;
    });
    return described.join(", ") || "none";
  } catch (e) {
    return `could not list them: ${messageOf(e)}`;
  }
}

/** Who owns what of a child, for a failure to be read: "webapp-operator/Apply (ports 80), kubectl-set/Update". */
function managers(obj: { metadata: { managedFields?: unknown[] } }): string {
  const entries = (obj.metadata.managedFields ?? []) as ManagerEntry[];
  const described = entries.map((e) => {
    const ports = [...JSON.stringify(e.fieldsV1 ?? {}).matchAll(/k:\{\\"(?:containerPort|port)\\":(\d+)/g)].map(
      (m) => m[1],
    );
    const what = `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ""}`;
    return ports.length > 0 ? `${what} (ports ${ports.join(", ")})` : what;
  });
  return described.join(", ") || "nobody";
}
const result = (name: string, checked: number, problems: string[]): CheckResult => ({
  name,
  ok: problems.length === 0,
  checked,
  problems,
});

export async function convergenceChecks(
  client: KubeClient,
  namespace: string,
  collisionName: string,
  deletedNames: Iterable<string>,
  decoyUids: ReadonlySet<string>,
): Promise<CheckResult[]> {
  const [webapps, deployments, services] = await Promise.all([
    client.listAll<WebAppLike>(WEBAPPS, { namespace }),
    client.listAll<Child>(DEPLOYMENTS, { namespace }),
    client.listAll<Child>(SERVICES, { namespace }),
  ]);
  const owned = (items: Child[], uid: string | undefined) => items.filter((c) => uid && controllerUid(c) === uid);
  const children: string[] = [];
  const status: string[] = [];
  const collision: string[] = [];
  let regular = 0;
  for (const w of webapps.items) {
    const name = w.metadata.name as string;
    const labels = { app: name, ...MANAGED };
    const deps = owned(deployments.items, w.metadata.uid);
    const svcs = owned(services.items, w.metadata.uid);
    const cond = (type: string) => w.status?.conditions?.find((c) => c.type === type);
    if (name === collisionName) {
      if (cond("Degraded")?.status !== "True" || cond("Degraded")?.reason !== "ResourceExists")
        collision.push(`${name}: Degraded is ${JSON.stringify(cond("Degraded"))}`);
      if (deps.length !== 0) collision.push(`${name}: controls ${deps.length} Deployment(s)`);
      if (svcs.length !== 1) collision.push(`${name}: controls ${svcs.length} Service(s)`);
      continue;
    }
    regular++;
    const spec = w.spec as { image: string; replicas: number; port: number };
    if (deps.length !== 1 || deps[0]?.metadata.name !== `${name}-deployment`)
      children.push(`${name}: controls Deployments [${deps.map((d) => d.metadata.name).join(", ")}]`);
    if (svcs.length !== 1 || svcs[0]?.metadata.name !== `${name}-svc`)
      children.push(`${name}: controls Services [${svcs.map((d) => d.metadata.name).join(", ")}]`);
    const d = deps[0];
    if (d) {
      const c = d.spec.template?.spec.containers.find((x) => x.name === "app");
      const want = {
        replicas: spec.replicas,
        image: spec.image,
        ports: [spec.port],
        containers: 1,
        labels,
        selector: labels,
        podLabels: labels,
      };
      const have = {
        replicas: d.spec.replicas,
        image: c?.image,
        ports: c?.ports?.map((p) => p.containerPort),
        containers: d.spec.template?.spec.containers.length,
        labels: pick(d.metadata.labels, labels),
        selector: (d.spec.selector as { matchLabels?: unknown })?.matchLabels,
        podLabels: pick(d.spec.template?.metadata?.labels, labels),
      };
      if (!same(want, have))
        children.push(
          `${name}: Deployment is ${JSON.stringify(have)}, want ${JSON.stringify(want)}; fields managed by ${managers(d)}`,
        );
      else if (
        d.status?.observedGeneration !== d.metadata.generation ||
        (d.status?.readyReplicas ?? 0) !== spec.replicas
      ) {
        children.push(
          `${name}: Deployment not rolled out (generation ${d.metadata.generation}, observed ${d.status?.observedGeneration}, ready ${d.status?.readyReplicas ?? 0}/${spec.replicas}); its pods: ${await podsOf(client, namespace, name)}`,
        );
      }
    }
    const s = svcs[0];
    if (s) {
      const want = { ports: [{ port: 80, targetPort: spec.port }], selector: labels, labels };
      const have = {
        ports: (s.spec.ports ?? []).map((p) => ({ port: p.port, targetPort: p.targetPort })),
        selector: s.spec.selector,
        labels: pick(s.metadata.labels, labels),
      };
      if (!same(want, have))
        children.push(
          `${name}: Service is ${JSON.stringify(have)}, want ${JSON.stringify(want)}; fields managed by ${managers(s)}`,
        );
    }
    const st = w.status;
    const wantStatus = {
      observedGeneration: w.metadata.generation,
      readyReplicas: spec.replicas,
      Available: "True",
      Progressing: "False",
      Degraded: "False",
    };
    const haveStatus = {
      observedGeneration: st?.observedGeneration,
      readyReplicas: st?.readyReplicas,
      Available: cond("Available")?.status,
      Progressing: cond("Progressing")?.status,
      Degraded: cond("Degraded")?.status,
    };
    if (!same(wantStatus, haveStatus))
      status.push(
        `${name}: status ${JSON.stringify(haveStatus)}, want ${JSON.stringify(wantStatus)}${cond("Degraded")?.status === "True" ? ` (${cond("Degraded")?.message})` : ""}`,
      );
  }

  const uids = new Set(webapps.items.map((w) => w.metadata.uid));
  const orphans: string[] = [];
  const ours = (c: Child) =>
    c.metadata.labels?.["managed-by"] === MANAGED["managed-by"] ||
    c.metadata.ownerReferences?.some((r) => r.kind === "WebApp");
  for (const [kind, items] of [
    ["Deployment", deployments.items],
    ["Service", services.items],
  ] as const) {
    for (const c of items) {
      if (!ours(c) || decoyUids.has(c.metadata.uid as string)) continue;
      if (!uids.has(controllerUid(c)))
        orphans.push(
          `${kind} ${c.metadata.name}: owner ${JSON.stringify(c.metadata.ownerReferences ?? [])} does not exist`,
        );
    }
  }
  const existing = new Set(webapps.items.map((w) => w.metadata.name));
  const gone = [...deletedNames].filter((n) => !existing.has(n));
  for (const n of gone) {
    if (deployments.items.some((d) => d.metadata.name === `${n}-deployment`))
      orphans.push(`Deployment ${n}-deployment of deleted WebApp ${n} remains`);
    if (services.items.some((s) => s.metadata.name === `${n}-svc`))
      orphans.push(`Service ${n}-svc of deleted WebApp ${n} remains`);
  }
  return [
    result(
      "every WebApp has exactly one Deployment and one Service, controlled by it and matching its spec",
      regular,
      children,
    ),
    result(
      "every WebApp's status is truthful (observedGeneration = generation, readyReplicas = spec.replicas, Available=True, Progressing=False, Degraded=False)",
      regular,
      status,
    ),
    result(
      "the WebApp whose Deployment name is taken reports Degraded/ResourceExists and has only its Service",
      1,
      collision,
    ),
    result(
      `no orphaned children: every child belongs to a live WebApp, and the ${gone.length} WebApps deleted for good left nothing behind`,
      deployments.items.length + services.items.length,
      orphans,
    ),
  ];
}

/** Only the keys of `want` from `labels` (others may add their own labels). */
function pick(
  labels: Record<string, string> | undefined,
  want: Record<string, string>,
): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(want).map((k) => [k, labels?.[k]]));
}

export async function outsideUntouched(client: KubeClient, namespace: string): Promise<CheckResult> {
  const [webapps, deployments, services] = await Promise.all([
    client.listAll<WebAppLike>(WEBAPPS, { namespace }),
    client.listAll<Child>(DEPLOYMENTS, { namespace }),
    client.listAll<Child>(SERVICES, { namespace }),
  ]);
  const problems = [
    ...deployments.items.map((d) => `Deployment ${d.metadata.name} appeared`),
    ...services.items.map((s) => `Service ${s.metadata.name} appeared`),
    // The CRD's default (UNOBSERVED_STATUS) is what every WebApp reads with until an operator writes a status.
    ...webapps.items
      .filter((w) => w.status !== undefined && !Bun.deepEquals(w.status, UNOBSERVED_STATUS))
      .map((w) => `WebApp ${w.metadata.name} got a status`),
  ];
  return result(
    `WebApps in a namespace the operator does not watch (${namespace}) got no children and no status`,
    webapps.items.length,
    problems,
  );
}

/** The churn's own successful WebApp spec writes are what the API server holds now (none lost or overwritten). */
export async function writesSurvived(
  client: KubeClient,
  namespace: string,
  written: ReadonlyMap<string, Record<string, unknown>>,
): Promise<CheckResult> {
  const webapps = await client.listAll<WebAppLike>(WEBAPPS, { namespace });
  const byName = new Map(webapps.items.map((w) => [w.metadata.name, w]));
  const problems: string[] = [];
  for (const [name, want] of written) {
    const live = byName.get(name);
    if (!live) {
      problems.push(`${name}: written last with ${JSON.stringify(want)}, but it is gone`);
      continue;
    }
    const spec = live.spec as unknown as Record<string, unknown>;
    const have = Object.fromEntries(Object.keys(want).map((k) => [k, spec[k]]));
    if (!same(have, want))
      problems.push(`${name}: spec is ${JSON.stringify(have)}, but the last write made it ${JSON.stringify(want)}`);
  }
  return result(
    `the churn's own WebApp spec writes survived: each name holds what its last successful write set`,
    written.size,
    problems,
  );
}
