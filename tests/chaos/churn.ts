/**
 * Random churn on a namespace of WebApps, as users and other controllers cause it.
 *
 * Properties:
 * - Every operation is one a person or a controller really does: spec edits and `kubectl scale` of
 *   WebApps; `kubectl scale` and `kubectl set image` on their Deployments (a share through the real
 *   kubectl, the rest through the same API calls it makes); edits of Services' ports and selectors;
 *   removal of the label that puts a child into the operator's cache; deletion of children; deletion of
 *   WebApps (for good, or re-created at once under the same name with a new spec); new WebApps;
 *   annotation-only touches (which must cost no writes).
 * - The API server is the truth: the final checks read the WebApps back. `population` tracks names
 *   believed to exist, to aim the operations.
 * - It remembers its own WebApp spec writes (`written`: the fields each name must have now) and the
 *   soak checks they survived (`writesSurvived`): one worker at a time per name, so the last
 *   successful write is the one that counts; a write refused with a 4xx did not land; one whose outcome
 *   is unknown (timeout, 5xx, no answer, kubectl) makes that name's memory unknown until the next write.
 * - `protectedNames` are never touched (the WebApp blocked by a foreign Deployment).
 */
import { KubeError, messageOf } from "../../src/kube/errors.ts";
import type { KubeClient } from "../../src/kube/types.ts";
import { DEPLOYMENTS, KUBECTL, SERVICES, WEBAPPS } from "../_support.ts";
import type { Random } from "./random.ts";

export const CHURN_KINDS = [
  "webapp-spec-edit",
  "webapp-kubectl-scale",
  "deployment-scale",
  "deployment-set-image",
  "deployment-unlabel",
  "deployment-delete",
  "service-edit",
  "service-delete",
  "webapp-delete-and-recreate",
  "webapp-delete",
  "webapp-create",
  "webapp-annotate",
] as const;
export type ChurnKind = (typeof CHURN_KINDS)[number];

const WEIGHTS: Record<ChurnKind, number> = {
  "webapp-spec-edit": 24,
  "webapp-kubectl-scale": 5,
  "deployment-scale": 10,
  "deployment-set-image": 10,
  "deployment-unlabel": 4,
  "deployment-delete": 8,
  "service-edit": 7,
  "service-delete": 6,
  "webapp-delete-and-recreate": 6,
  "webapp-delete": 4,
  "webapp-create": 4,
  "webapp-annotate": 6,
};

export const IMAGES = [
  "nginx:1.25",
  "nginx:1.27",
  "httpd:2.4",
  "registry.k8s.io/pause:3.10",
  "ghcr.io/example/app:v2",
] as const;
export const PORTS = [80, 8080, 3000, 9090] as const;

export interface Population {
  /** Names believed to exist. */
  live: Set<string>;
  /** Names deleted for good (so far). */
  deleted: Set<string>;
  protectedNames: Set<string>;
  /** Next index for a new name. */
  next: number;
  /** Bounds for the live count: deletions stop at min, creations at max. */
  min: number;
  max: number;
}

export type Spec = { image: string; replicas: number; port: number };

export interface ChurnStats {
  ops: Record<ChurnKind, { ok: number; failed: number }>;
  /** Spec writes whose outcome was unknown (the name's memory was dropped). */
  uncertain: number;
  /** Distinct failure messages (first 40), with counts. */
  failures: Map<string, number>;
  viaKubectl: number;
}

export const appName = (i: number): string => `app-${String(i).padStart(3, "0")}`;

export function randomSpec(random: Random): { image: string; replicas: number; port: number } {
  return { image: random.pick(IMAGES), replicas: random.int(1, 3), port: random.pick(PORTS) };
}

export function createChurn(o: {
  client: KubeClient;
  namespace: string;
  kubeconfig: string;
  kubectlCacheDir: string;
  population: Population;
  random: Random;
}) {
  const { client, namespace: ns, population: pop, random } = o;
  const stats: ChurnStats = {
    uncertain: 0,
    ops: Object.fromEntries(CHURN_KINDS.map((k) => [k, { ok: 0, failed: 0 }])) as ChurnStats["ops"],
    failures: new Map(),
    viaKubectl: 0,
  };
  /** What each WebApp's spec must be now, as far as our own successful writes say. */
  const written = new Map<string, Partial<Spec>>();
  /** Names a worker is operating on: one at a time per name, so writes to a name are ordered. */
  const busy = new Set<string>();
  const target = () => {
    const free = [...pop.live].filter((n) => !pop.protectedNames.has(n) && !busy.has(n));
    return random.pick(free.length ? free : [...pop.live].filter((n) => !pop.protectedNames.has(n)));
  };
  const remember = (name: string, spec: Partial<Spec>, replace = false) =>
    written.set(name, { ...(replace ? {} : written.get(name)), ...spec });
  const webapp = (name: string, spec: Spec = randomSpec(random)) => ({
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name, namespace: ns },
    spec,
  });

  async function kubectl(args: string[]): Promise<void> {
    stats.viaKubectl++;
    const p = Bun.spawn(
      [
        KUBECTL,
        "--kubeconfig",
        o.kubeconfig,
        "--cache-dir",
        o.kubectlCacheDir,
        "--request-timeout=5s",
        "-n",
        ns,
        ...args,
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    const [stderr, code] = [await new Response(p.stderr).text(), await p.exited];
    if (code !== 0) throw new Error(`kubectl ${args[0]}: ${stderr.trim().split("\n")[0]}`);
  }

  /** Runs one operation on `name`, holding it so no other worker writes it meanwhile. */
  async function performOn(kind: ChurnKind, name: string): Promise<void> {
    busy.add(name);
    try {
      await perform(kind, name);
    } catch (e) {
      // A 4xx refusal did not land; anything else may have: forget what this name must be.
      const refused = e instanceof KubeError && e.code >= 400 && e.code < 500 && ![408, 429].includes(e.code);
      if (!refused && kind !== "webapp-create" && written.delete(name)) stats.uncertain++;
      throw e;
    } finally {
      busy.delete(name);
    }
  }

  async function perform(kind: ChurnKind, name: string): Promise<void> {
    const dep = `${name}-deployment`;
    const svc = `${name}-svc`;
    switch (kind) {
      case "webapp-spec-edit": {
        const spec = randomSpec(random);
        const which = random.pick(["image", "replicas", "port", "all"] as const);
        const patch = which === "all" ? spec : { [which]: spec[which] };
        await client.patch(WEBAPPS, name, ns, { spec: patch }, "merge");
        remember(name, patch);
        return;
      }
      case "webapp-kubectl-scale": {
        const replicas = random.int(1, 3);
        written.delete(name); // kubectl's failures are not typed: unknown until it succeeded
        await kubectl(["scale", `webapp/${name}`, `--replicas=${replicas}`]);
        remember(name, { replicas });
        return;
      }
      case "deployment-scale": {
        const replicas = random.int(0, 6);
        if (random.chance(0.3)) return kubectl(["scale", `deployment/${dep}`, `--replicas=${replicas}`]);
        await client.patch(DEPLOYMENTS, dep, ns, { spec: { replicas } }, "merge", { subresource: "scale" });
        return;
      }
      case "deployment-set-image": {
        const image = random.pick(["evil:latest", "nginx:1.19", ...IMAGES]);
        if (random.chance(0.3)) return kubectl(["set", "image", `deployment/${dep}`, `app=${image}`]);
        await client.patch(
          DEPLOYMENTS,
          dep,
          ns,
          { spec: { template: { spec: { containers: [{ name: "app", image }] } } } },
          "strategic",
        );
        return;
      }
      case "deployment-unlabel":
        await client.patch(DEPLOYMENTS, dep, ns, { metadata: { labels: { "managed-by": null } } }, "merge");
        return;
      case "deployment-delete":
        return client.delete(DEPLOYMENTS, dep, ns);
      case "service-edit":
        if (random.chance(0.5))
          await client.patch(SERVICES, svc, ns, { spec: { selector: { app: "someone-else" } } }, "merge");
        else
          await client.patch(
            SERVICES,
            svc,
            ns,
            {
              spec: { ports: [{ name: "http", port: 80, targetPort: random.pick([1, 9999, 8081]), protocol: "TCP" }] },
            },
            "strategic",
          );
        return;
      case "service-delete":
        return client.delete(SERVICES, svc, ns);
      case "webapp-delete-and-recreate": {
        written.delete(name);
        await client.delete(WEBAPPS, name, ns);
        const spec = randomSpec(random);
        await client.create(WEBAPPS, webapp(name, spec));
        remember(name, spec, true);
        return;
      }
      case "webapp-delete":
        if (pop.live.size <= pop.min) return perform("webapp-spec-edit", name);
        pop.live.delete(name);
        pop.deleted.add(name);
        written.delete(name);
        return client.delete(WEBAPPS, name, ns);
      case "webapp-create": {
        if (pop.live.size >= pop.max) return perform("webapp-annotate", name);
        const comeback = pop.deleted.size > 0 && random.chance(0.5) ? random.pick([...pop.deleted]) : undefined;
        const fresh = comeback ?? appName(pop.next++);
        if (busy.has(fresh)) return perform("webapp-annotate", name);
        busy.add(fresh);
        try {
          pop.deleted.delete(fresh);
          pop.live.add(fresh);
          const spec = randomSpec(random);
          await client.create(WEBAPPS, webapp(fresh, spec));
          remember(fresh, spec, true);
        } catch (e) {
          const refused = e instanceof KubeError && e.code >= 400 && e.code < 500 && ![408, 429].includes(e.code);
          if (!refused) stats.uncertain++;
          throw e;
        } finally {
          busy.delete(fresh);
        }
        return;
      }
      case "webapp-annotate":
        await client.patch(
          WEBAPPS,
          name,
          ns,
          { metadata: { annotations: { "chaos/touched": String(Date.now()) } } },
          "merge",
        );
        return;
    }
  }

  return {
    stats,
    written,
    /** Runs `workers` loops of random operations until `signal` aborts; resolves when all stopped. */
    async run(signal: AbortSignal, workers: number, pauseMs: [number, number]): Promise<void> {
      const kinds = CHURN_KINDS.map((k) => [k, WEIGHTS[k]] as const);
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (!signal.aborted) {
            const kind = random.weighted(kinds);
            try {
              await performOn(kind, target());
              stats.ops[kind].ok++;
            } catch (e) {
              stats.ops[kind].failed++;
              const msg = messageOf(e)
                .replace(/app-\d+/g, "app-N")
                .replace(/\d{3,}/g, "N")
                .slice(0, 200);
              if (stats.failures.has(msg) || stats.failures.size < 40)
                stats.failures.set(msg, (stats.failures.get(msg) ?? 0) + 1);
            }
            await Bun.sleep(random.int(pauseMs[0], pauseMs[1]));
          }
        }),
      );
    },
  };
}

export type Churn = ReturnType<typeof createChurn>;
