/**
 * The WebApp operator end to end: the compiled executable (`devctl operator run`) against the real
 * control plane. The seed's case, convergence of every owned field, self-healing, garbage collection,
 * name collisions, status conditions, and zero writes once converged (counted from its own /metrics).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { startOperator, type OperatorProcess } from "./_operator.ts";
import {
  DEPLOYMENTS,
  SERVICES,
  WEBAPPS,
  conditionOf,
  ensureCrd,
  eventsFor,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  tempNamespace,
  webapp,
  type WebAppLike,
} from "./_support.ts";

interface DeploymentLike extends KubeObject {
  spec: {
    replicas: number;
    selector?: unknown;
    template: {
      metadata?: unknown;
      spec: { containers: { name: string; image: string; ports?: { containerPort: number }[] }[] };
    };
  };
  status?: { readyReplicas?: number };
}
interface ServiceLike extends KubeObject {
  spec: { selector: Record<string, string>; ports: { port: number; targetPort: number | string }[] };
}

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

beforeAll(async () => {
  await ensureCrd();
  ns = await tempNamespace("operator");
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false", "--log-level", "debug"]);
});
afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  expect(code).toBe(0);
});

/** The reconcile count once it has not moved for a second: passes still due from an earlier step are done. */
async function quietReconciles(): Promise<number> {
  let last = await op.counter("controller_runtime_reconcile_total");
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    await Bun.sleep(1000);
    const now = await op.counter("controller_runtime_reconcile_total");
    if (now === last) return now;
    last = now;
  }
  throw new Error("the operator kept reconciling for 20 s with nothing changing");
}

const dep = (name: string) => getOrUndefined<DeploymentLike>(DEPLOYMENTS, `${name}-deployment`, ns.name);
const svc = (name: string) => getOrUndefined<ServiceLike>(SERVICES, `${name}-svc`, ns.name);
const wa = (name: string) => getOrUndefined<WebAppLike>(WEBAPPS, name, ns.name);
/** The operations of the operator's managedFields entries on a WebApp's Deployment, in order. */
const operatorOperations = async (name: string): Promise<string[]> =>
  (((await dep(name))?.metadata.managedFields ?? []) as { manager: string; operation: string }[])
    .filter((m) => m.manager === "webapp-operator")
    .map((m) => m.operation);

async function convergedTo(name: string, image: string, replicas: number, port: number): Promise<void> {
  await eventually(
    async () => {
      const [d, s, w] = await Promise.all([dep(name), svc(name), wa(name)]);
      const c = d?.spec.template.spec.containers[0];
      return (
        d?.spec.replicas === replicas &&
        c?.image === image &&
        c.ports?.length === 1 && // a changed port replaces the old one (pruned), it is not added beside it
        c.ports[0]?.containerPort === port &&
        s?.spec.ports[0]?.port === 80 &&
        s.spec.ports[0]?.targetPort === port &&
        w?.status?.readyReplicas === replicas &&
        conditionOf(w, "Available")?.status === "True" &&
        w.status.observedGeneration === w.metadata.generation
      );
    },
    60_000,
    `${name} to converge to ${image} x${replicas} on port ${port}`,
  );
}

describe("the seed's case", () => {
  test("a WebApp test-app of nginx:1.25 with 3 replicas gets its Deployment and Service, owned by it", async () => {
    await kube.create(WEBAPPS, webapp("test-app", ns.name, { image: "nginx:1.25", replicas: 3, port: 80 }));
    await convergedTo("test-app", "nginx:1.25", 3, 80);
    const [d, s, w] = await Promise.all([dep("test-app"), svc("test-app"), wa("test-app")]);
    expect(d?.metadata.labels).toMatchObject({ app: "test-app", "managed-by": "webapp-operator" });
    expect(s?.spec.selector).toEqual({ app: "test-app", "managed-by": "webapp-operator" });
    for (const child of [d, s]) {
      expect(child?.metadata.ownerReferences).toEqual([
        {
          apiVersion: "apps.example.com/v1",
          kind: "WebApp",
          name: "test-app",
          uid: w?.metadata.uid as string,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    expect(conditionOf(w, "Progressing")?.status).toBe("False");
    expect(conditionOf(w, "Degraded")?.status).toBe("False");
    // Announced by the pass that creates the Deployment, with the Service its next pass creates.
    const events = await eventsOnceSeen(ns.name, "test-app", (e) => e.reason === "Created", "a Created event");
    const created = events.filter((e) => e.reason === "Created").map((e) => e.message);
    expect(created).toContainEqual(expect.stringContaining("Deployment test-app-deployment created"));
    expect(created).toContainEqual(expect.stringContaining("Service test-app-svc next"));
  });

  test("kubectl get wa shows image, desired, available replicas, Ready and its reason", () => {
    const r = kubectl(["get", "wa", "test-app", "-n", ns.name]);
    expect(r.code).toBe(0);
    const [header, row] = r.stdout.trim().split("\n");
    expect(header).toMatch(/NAME\s+IMAGE\s+DESIRED\s+AVAILABLE\s+READY\s+REASON\s+AGE/);
    expect(row).toMatch(/^test-app\s+nginx:1\.25\s+3\s+3\s+True\s+Available\s+/);
  });

  test("reconciling a converged WebApp five more times writes nothing", async () => {
    const before = await op.writes();
    const reconciles = await op.counter("controller_runtime_reconcile_total");
    for (let i = 0; i < 5; i++) {
      await kube.patch(
        WEBAPPS,
        "test-app",
        ns.name,
        { metadata: { annotations: { "test/touch": String(i) } } },
        "merge",
      );
    }
    await eventually(
      async () => (await op.counter("controller_runtime_reconcile_total")) >= reconciles + 5,
      20_000,
      "five reconciles",
    );
    await Bun.sleep(1000);
    expect(await op.writes()).toBe(before);
    expect(await op.counter("controller_runtime_reconcile_errors_total")).toBe(0);
    expect((await kube.list(DEPLOYMENTS, { namespace: ns.name, labelSelector: "app=test-app" })).items).toHaveLength(1);
  });

  test("a status someone else overwrote is put back in one write; the echo of that write writes nothing", async () => {
    const reconciles = await quietReconciles();
    const before = await op.writes();
    await kube.patch(WEBAPPS, "test-app", ns.name, { status: { readyReplicas: 99 } }, "merge", {
      subresource: "status",
    });
    await eventually(async () => (await wa("test-app"))?.status?.readyReplicas === 3, 20_000, "the status put back");
    await Bun.sleep(1000);
    // One pass for the foreign edit, and one for the update that carries the status the operator wrote back, which
    // finds it equal (BENCHMARKS.md: the status-echo filter that skipped that pass was measured and removed).
    expect(await op.counter("controller_runtime_reconcile_total")).toBe(reconciles + 2);
    expect(await op.writes()).toBe(before + 1);
  });
});

describe("spec changes converge", () => {
  test("image, replicas and port changes reach the Deployment and the Service", async () => {
    await kube.patch(WEBAPPS, "test-app", ns.name, { spec: { image: "nginx:1.27" } }, "merge");
    await convergedTo("test-app", "nginx:1.27", 3, 80);
    await kube.patch(WEBAPPS, "test-app", ns.name, { spec: { replicas: 5 } }, "merge");
    await convergedTo("test-app", "nginx:1.27", 5, 80);
    await kube.patch(WEBAPPS, "test-app", ns.name, { spec: { port: 8080 } }, "merge");
    await convergedTo("test-app", "nginx:1.27", 5, 8080);
    // Created by POST (an Update entry), reshaped by the new port: every field is ours by apply now.
    expect(await operatorOperations("test-app")).toEqual(["Apply"]);
    await eventsOnceSeen(
      ns.name,
      "test-app",
      (e) => e.reason === "Scaled" && e.message === "Deployment test-app-deployment updated to 5 replicas",
      "the Scaled event",
    );
  });

  test("kubectl scale on the WebApp goes through the scale subresource", async () => {
    const r = kubectl(["scale", "wa/test-app", "-n", ns.name, "--replicas=2"]);
    expect(r.stderr).toBe("");
    await convergedTo("test-app", "nginx:1.27", 2, 8080);
  });
});

describe("self-healing", () => {
  test("a deleted Deployment is recreated", async () => {
    const old = await dep("test-app");
    await kube.delete(DEPLOYMENTS, "test-app-deployment", ns.name);
    await eventually(
      async () => {
        const d = await dep("test-app");
        return d && d.metadata.uid !== old?.metadata.uid;
      },
      30_000,
      "the Deployment to be recreated",
    );
    await convergedTo("test-app", "nginx:1.27", 2, 8080);
  });

  test("a deleted Service is recreated: a new object, controlled by the WebApp, with the spec it asks for", async () => {
    const old = await svc("test-app");
    const owner = await wa("test-app");
    expect(old?.metadata.uid).toBeDefined();
    await kube.delete(SERVICES, "test-app-svc", ns.name);
    const recreated = await eventually(
      async () => {
        const s = await svc("test-app");
        return s && s.metadata.uid !== old?.metadata.uid ? s : undefined;
      },
      30_000,
      "a new Service (another uid) to be created",
    );
    expect({
      controller: recreated.metadata.ownerReferences?.find((r) => r.controller)?.uid,
      ports: recreated.spec.ports.map((p) => ({ port: p.port, targetPort: p.targetPort })),
      selector: recreated.spec.selector,
    }).toEqual({
      controller: owner?.metadata.uid,
      ports: [{ port: 80, targetPort: 8080 }],
      selector: { app: "test-app", "managed-by": "webapp-operator" },
    });
  });

  test("kubectl scale and kubectl set image on the Deployment are reverted", async () => {
    expect(kubectl(["scale", "deployment/test-app-deployment", "-n", ns.name, "--replicas=7"]).code).toBe(0);
    expect(kubectl(["set", "image", "deployment/test-app-deployment", "-n", ns.name, "app=evil:latest"]).code).toBe(0);
    await convergedTo("test-app", "nginx:1.27", 2, 8080);
  });

  test("a port left under our create's Update entry beside the intent's is pruned", async () => {
    // The state the chaos soak's app-036 ended in (its old port stayed beside the new one, still ours by the
    // create): written here as our field manager, on the Deployment re-created above, which still has that entry.
    expect(await operatorOperations("test-app")).toContain("Update");
    const leftover = { containers: [{ name: "app", ports: [{ containerPort: 9090, protocol: "TCP" }] }] };
    await kube.patch(
      DEPLOYMENTS,
      "test-app-deployment",
      ns.name,
      { spec: { template: { spec: leftover } } },
      "strategic",
      {
        fieldManager: "webapp-operator",
      },
    );
    await convergedTo("test-app", "nginx:1.27", 2, 8080);
  });

  test("a changed Service port and selector are restored", async () => {
    await kube.patch(
      SERVICES,
      "test-app-svc",
      ns.name,
      { spec: { selector: { app: "other" }, ports: [{ name: "http", port: 80, targetPort: 9999 }] } },
      "strategic",
    );
    await eventually(
      async () => {
        const s = await svc("test-app");
        return s?.spec.ports[0]?.targetPort === 8080 && s.spec.selector.app === "test-app";
      },
      30_000,
      "the Service to be restored",
    );
  });
});

describe("objects we do not control", () => {
  test("a same-named Deployment is left untouched and the WebApp reports ResourceExists", async () => {
    const foreign = await kube.create<DeploymentLike>(DEPLOYMENTS, {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "taken-deployment", namespace: ns.name, labels: { team: "someone-else" } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { team: "someone-else" } },
        template: {
          metadata: { labels: { team: "someone-else" } },
          spec: { containers: [{ name: "x", image: "registry.k8s.io/pause:3.10" }] },
        },
      },
    });
    await kube.create(WEBAPPS, webapp("taken", ns.name, { image: "nginx:1.25", replicas: 2, port: 80 }));
    const w = await eventually(
      async () => {
        const w = await wa("taken");
        return conditionOf(w, "Degraded")?.reason === "ResourceExists" ? w : undefined;
      },
      30_000,
      "Degraded=ResourceExists",
    );
    expect(conditionOf(w, "Degraded")?.message).toContain(
      "Deployment taken-deployment exists and is not controlled by this WebApp",
    );
    await eventually(
      async () =>
        (await eventsFor(ns.name, "taken")).some((e) => e.type === "Warning" && e.reason === "ResourceExists"),
      10_000,
      "a Warning event",
    );
    // Its controllers keep writing its status, so compare what we could have touched: spec, labels,
    // owners, and the field managers.
    const after = await dep("taken");
    expect(after?.metadata.generation).toBe(foreign.metadata.generation);
    expect(after?.metadata.labels).toEqual({ team: "someone-else" });
    expect(after?.spec).toEqual(foreign.spec);
    expect(after?.metadata.ownerReferences).toBeUndefined();
    expect(JSON.stringify(after?.metadata.managedFields)).not.toContain("webapp-operator");
    // The Service has no conflict and is created.
    expect(await svc("taken")).toBeDefined();
  });
});

describe("garbage collection", () => {
  test("deleting the WebApp removes its Deployment and Service", async () => {
    await kube.delete(WEBAPPS, "test-app", ns.name);
    await eventually(
      async () => !(await dep("test-app")) && !(await svc("test-app")),
      60_000,
      "children to be garbage-collected",
    );
  });
});

describe("the operator's own health", () => {
  test("/metrics uses controller-runtime's metric names", async () => {
    const text = await op.metricsText();
    for (const name of [
      "controller_runtime_reconcile_total",
      "controller_runtime_reconcile_time_seconds_bucket",
      "workqueue_depth",
      "workqueue_retries_total",
      "rest_client_requests_total",
      "process_resident_memory_bytes",
    ]) {
      expect(text).toContain(name);
    }
  });

  test("nothing crashed: no error-level log lines", () => {
    const errors = op
      .logs()
      .split("\n")
      .filter((l) => l.includes('"level":"error"'));
    expect(errors).toEqual([]);
  });
});
