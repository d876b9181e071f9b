/**
 * Least privilege, asked of the API server's own authorizer: `devctl operator install` into a test
 * namespace, then the question `kubectl auth can-i --as=system:serviceaccount:<ns>:webapp-operator`
 * asks (a SubjectAccessReview) over a matrix of ~330 actions; a sample goes through kubectl itself.
 *
 * - It can do what the operator does (src/operator, src/runtime): read and watch WebApps, patch their
 *   status, look up, create, cache and server-side apply (patch) Deployments and Services in any
 *   namespace, delete them (the orphans the garbage collector missed, src/operator/orphans.ts), list Pods
 *   (read on demand for a WebApp that is not Ready, to report why: the one pod verb), create and patch
 *   Events, get/create/update its Lease in its own namespace, and create TokenReviews and SubjectAccessReviews
 *   (secure metrics; nothing else of those APIs).
 * - It cannot do anything else: not write WebApp specs, not update (PUT) or delete-collection
 *   children, not read Secrets or ConfigMaps, not touch Leases anywhere else,
 *   not read or write CRDs, RBAC, Namespaces or Nodes, not get, watch or write Pods, not exec, not mint
 *   tokens, not impersonate.
 * - `kubectl auth can-i --list` shows exactly those grants plus the ones every authenticated user has.
 * - Who may scrape its secure /metrics (a reader-bound ServiceAccount 200, an unbound one 403, no token 401) is
 *   tests/metrics-auth.test.ts, against a running operator.
 * The expectations are written out here, not imported from src/install: this is the spec the builders
 * are checked against. Uninstalled afterwards (the shared CRD is kept).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { KUBECTL_CACHE_DIR, kubectl } from "./_kubectl.ts";
import { devctl, KUBECTL, kube, kubeconfig, tempNamespace } from "./_support.ts";

setDefaultTimeout(120_000);

const INSTALL_NS = `rbac-${Math.random().toString(36).slice(2, 8)}`;
const SA = `system:serviceaccount:${INSTALL_NS}:webapp-operator`;
/** The kinds of child, as kubectl names their resources. */
const CHILDREN = [
  "deployments.apps",
  "services",
  "poddisruptionbudgets.policy",
  "ingresses.networking.k8s.io",
  "horizontalpodautoscalers.autoscaling",
];
let apps: Awaited<ReturnType<typeof tempNamespace>>;

beforeAll(async () => {
  apps = await tempNamespace("rbac-apps");
  const r = devctl(["operator", "install", "-n", INSTALL_NS, "--image", "ghcr.io/devctl/devctl:e2e"]);
  if (r.code !== 0) throw new Error(`devctl operator install: ${r.stderr}`);
});
afterAll(async () => {
  const r = devctl(["operator", "uninstall", "-n", INSTALL_NS]);
  await apps?.drop();
  expect(r.code).toBe(0);
});

/** [verb, resource (kubectl spelling, "/sub" for a subresource), namespace ("*": all namespaces, "": cluster scope)] */
type Check = [string, string, string];

const SUBJECT_ACCESS_REVIEWS: ResourceType = {
  group: "authorization.k8s.io",
  version: "v1",
  plural: "subjectaccessreviews",
  kind: "SubjectAccessReview",
  namespaced: false,
};

const label = ([verb, resource, ns]: Check) =>
  `${verb} ${resource} in ${ns === "*" ? "all namespaces" : ns || "cluster scope"}`;

/**
 * Asks the authorizer what `kubectl auth can-i --as=<SA>` asks (a SubjectAccessReview for the
 * ServiceAccount and the groups every ServiceAccount has), all at once: hundreds of kubectl processes
 * would take half a minute on two cores. A test below checks that kubectl gives the same answers.
 */
async function canI(checks: Check[]): Promise<Map<string, boolean>> {
  const results = await Promise.all(
    checks.map(async (check) => {
      const [verb, resource, ns] = check;
      const [res = "", sub] = resource.split("/");
      const dot = res.indexOf(".");
      const review = await kube.create<KubeObject & { status?: { allowed?: boolean } }>(SUBJECT_ACCESS_REVIEWS, {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        metadata: {},
        spec: {
          user: SA,
          groups: ["system:serviceaccounts", `system:serviceaccounts:${INSTALL_NS}`, "system:authenticated"],
          resourceAttributes: {
            verb,
            resource: dot < 0 ? res : res.slice(0, dot),
            group: res === "*" ? "*" : dot < 0 ? "" : res.slice(dot + 1),
            ...(sub ? { subresource: sub } : {}),
            ...(ns && ns !== "*" ? { namespace: ns } : {}),
          },
        },
      });
      return [label(check), review.status?.allowed === true] as const;
    }),
  );
  return new Map(results);
}

/** The same question through `kubectl auth can-i`. */
function kubectlCanI([verb, resource, ns]: Check): boolean {
  const [res, sub] = resource.split("/");
  const args = [
    "auth",
    "can-i",
    verb,
    res!,
    `--as=${SA}`,
    ...(sub ? [`--subresource=${sub}`] : []),
    ...(ns === "*" ? ["--all-namespaces"] : ns ? ["-n", ns] : []),
  ];
  const r = kubectl(args);
  if (r.code !== 0 && r.stdout.trim() !== "no") throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
  return r.code === 0;
}

const each = (verbs: string[], resources: string[], namespaces: string[]): Check[] =>
  verbs.flatMap((v) => resources.flatMap((r) => namespaces.map((n): Check => [v, r, n])));

describe("the installed operator's ServiceAccount", () => {
  const must = (): Check[] => {
    const ns = [apps.name, "default"];
    return [
      ...each(["get", "list", "watch"], ["webapps.apps.example.com"], [...ns, "*"]),
      ...each(["patch"], ["webapps.apps.example.com/status"], ns),
      ...each(["update"], ["webapps.apps.example.com/finalizers"], ns),
      ...each(["get", "list", "watch", "create", "patch", "delete"], CHILDREN, ns),
      ...each(["list", "watch"], CHILDREN, ["*"]),
      ...each(["create", "patch"], ["events"], ns),
      ...each(["list"], ["pods", "events"], [...ns, "*"]),
      ...each(["list", "watch"], ["ingressclasses.networking.k8s.io"], [""]),
      ...each(["get", "create", "update", "list", "watch"], ["leases.coordination.k8s.io"], [INSTALL_NS]),
      // Secure metrics: a scrape's token and its access to /metrics are reviewed by the API server.
      ...each(["create"], ["tokenreviews.authentication.k8s.io", "subjectaccessreviews.authorization.k8s.io"], [""]),
    ];
  };
  const mustNot = (): Check[] => {
    const ns = [apps.name, INSTALL_NS, "kube-system"];
    return [
      // WebApps are the users': the operator writes only their status.
      ...each(["create", "update", "patch", "delete", "deletecollection"], ["webapps.apps.example.com"], ns),
      ...each(["update"], ["webapps.apps.example.com/status"], ns),
      // Children are applied, never replaced, and deleted one by one only (orphans, children no longer wanted).
      ...each(["update", "deletecollection"], CHILDREN, ns),
      // The scale subresource is the autoscaler's (spec.autoscaling); the operator applies the Deployment itself.
      ...each(["update", "patch"], ["deployments.apps/scale", "deployments.apps/status", "services/status"], ns),
      ...each(["update", "patch"], ["horizontalpodautoscalers.autoscaling/status"], ns),
      // Secrets and configuration.
      ...each(["get", "list", "watch"], ["secrets", "configmaps"], [...ns, "*"]),
      // Other components' leader elections.
      ...each(
        ["get", "list", "watch", "create", "update", "patch", "delete"],
        ["leases.coordination.k8s.io"],
        [apps.name, "kube-system", "kube-node-lease", "default"],
      ),
      ...each(["patch", "delete"], ["leases.coordination.k8s.io"], [INSTALL_NS]),
      // Cluster-scoped objects: not even its own CRD.
      ...each(
        ["get", "list", "create", "update", "patch", "delete"],
        ["customresourcedefinitions.apiextensions.k8s.io"],
        [""],
      ),
      ...each(
        ["create", "update", "patch", "delete", "bind", "escalate"],
        ["clusterroles.rbac.authorization.k8s.io", "clusterrolebindings.rbac.authorization.k8s.io"],
        [""],
      ),
      ...each(
        ["create", "update", "bind", "escalate"],
        ["roles.rbac.authorization.k8s.io", "rolebindings.rbac.authorization.k8s.io"],
        ns,
      ),
      ...each(["get", "list", "create", "update", "delete"], ["namespaces", "nodes", "persistentvolumes"], [""]),
      ...each(
        ["create", "update", "delete"],
        [
          "mutatingwebhookconfigurations.admissionregistration.k8s.io",
          "validatingwebhookconfigurations.admissionregistration.k8s.io",
        ],
        [""],
      ),
      // Workloads it does not own, and ways into them.
      ...each(
        ["get", "list", "create", "delete"],
        ["replicasets.apps", "statefulsets.apps", "daemonsets.apps", "jobs.batch"],
        ns,
      ),
      // Pods are only listed: not read one by one, watched, written or evicted.
      ...each(["get", "watch", "create", "update", "patch", "delete", "deletecollection"], ["pods"], ns),
      ...each(["create"], ["pods/eviction"], ns),
      ...each(["create", "get"], ["pods/exec", "pods/attach", "pods/portforward", "pods/log"], ns),
      ...each(["create"], ["serviceaccounts/token"], ns),
      ...each(["get", "list", "create", "update", "delete"], ["serviceaccounts"], ns),
      ...each(["impersonate"], ["users", "groups", "serviceaccounts"], [""]),
      ...each(["delete", "update", "get", "watch"], ["events"], ns),
      ...each(["create"], ["events.events.k8s.io"], ns),
      ...each(["*"], ["*"], [...ns, ""]),
      // The reviews are create-only, and only those two: no other review, no reading them back.
      ...each(
        ["get", "list", "watch", "update", "delete"],
        ["tokenreviews.authentication.k8s.io", "subjectaccessreviews.authorization.k8s.io"],
        [""],
      ),
      ...each(["create"], ["localsubjectaccessreviews.authorization.k8s.io"], ns),
      ...each(["create"], ["certificatesigningrequests.certificates.k8s.io"], [""]),
    ];
  };

  test("can do everything the operator does", async () => {
    const answers = await canI(must());
    expect([...answers].filter(([, yes]) => !yes).map(([q]) => q)).toEqual([]);
    expect(answers.size).toBe(must().length);
  });

  test("cannot do anything it does not need", async () => {
    const answers = await canI(mustNot());
    expect([...answers].filter(([, yes]) => yes).map(([q]) => q)).toEqual([]);
    console.error(`least privilege: ${must().length} needed actions allowed, ${answers.size} others denied`);
  });

  test("kubectl auth can-i gives the same answers (a sample of both lists)", () => {
    const sample = (list: Check[], n: number) => list.filter((_, i) => i % Math.ceil(list.length / n) === 0);
    for (const [checks, want] of [
      [sample(must(), 10), true],
      [sample(mustNot(), 20), false],
    ] as const) {
      for (const c of checks) expect({ q: label(c), yes: kubectlCanI(c) }).toEqual({ q: label(c), yes: want });
    }
  });

  test("kubectl auth can-i --list shows exactly those grants and the ones every authenticated user has", () => {
    const granted = (ns: string) => {
      const r = Bun.spawnSync(
        [
          KUBECTL,
          "--kubeconfig",
          kubeconfig,
          "--cache-dir",
          KUBECTL_CACHE_DIR,
          "auth",
          "can-i",
          "--list",
          `--as=${SA}`,
          "-n",
          ns,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      const rows = r.stdout
        .toString()
        .split("\n")
        .slice(1)
        .filter((l) => /^\S/.test(l));
      return Object.fromEntries(
        rows.map((l) => {
          const cols = l.split(/\s{2,}/);
          return [
            cols[0],
            (cols.at(-1) ?? "")
              .replace(/^\[|\]$/g, "")
              .split(" ")
              .sort()
              .join(" "),
          ];
        }),
      );
    };
    const everyone = {
      "selfsubjectreviews.authentication.k8s.io": "create",
      "selfsubjectaccessreviews.authorization.k8s.io": "create",
      "selfsubjectrulesreviews.authorization.k8s.io": "create",
    };
    const clusterWide = {
      "webapps.apps.example.com": "get list watch",
      "webapps.apps.example.com/status": "patch",
      "webapps.apps.example.com/finalizers": "update",
      "deployments.apps": "create delete get list patch watch",
      services: "create delete get list patch watch",
      "poddisruptionbudgets.policy": "create delete get list patch watch",
      "ingresses.networking.k8s.io": "create delete get list patch watch",
      "horizontalpodautoscalers.autoscaling": "create delete get list patch watch",
      "ingressclasses.networking.k8s.io": "list watch",
      events: "create list patch",
      pods: "list",
      "tokenreviews.authentication.k8s.io": "create",
      "subjectaccessreviews.authorization.k8s.io": "create",
    };
    expect(granted(apps.name)).toEqual({ ...everyone, ...clusterWide });
    expect(granted(INSTALL_NS)).toEqual({
      ...everyone,
      ...clusterWide,
      "leases.coordination.k8s.io": "create get list update watch",
    });
  });
});
