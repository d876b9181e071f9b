/**
 * The operator's watches under control-plane faults, against the local cluster (skipped when
 * DEVCTL_TEST_KUBECONFIG names another cluster: these tests restart, freeze and compact it):
 * - resourceVersions expired (etcd compaction + restart) while the operator was not looking → it re-lists,
 *   and its cache holds exactly the API server's objects: the one deleted in the gap is gone (a child it
 *   re-created while the caches disagreed is collected), the one created in the gap is there, none twice;
 * - kube-apiserver restarted while watching → no reconnect storm (its own rest_client_requests_total),
 *   and changes made right after the restart are reconciled;
 * - kube-apiserver frozen (SIGSTOP) past the watch inactivity limit → /readyz fails for the whole stall,
 *   then the watches recover and a new change is reconciled.
 *
 * The cache is read through behaviour and the operator's own lines: with a 2 s resync period it logs
 * "resync enqueued N keys" for the N WebApps its cache holds, and reconciles each of them — a deleted
 * WebApp lingering in the cache would get its (garbage-collected) children created again.
 * Leader election is off here: a stall longer than the renew deadline rightly ends a leader (exit 1),
 * which leader-election.test.ts and the unit tests cover.
 */
import { afterEach, beforeAll, expect, test } from "bun:test";
import { isNotFound } from "../../src/kube/errors.ts";
import { CHILD_KINDS } from "../../src/operator/child-kinds.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import {
  expectHealthy,
  isRunning,
  logEntries,
  logsSince,
  matching,
  showingLogs,
  since,
  type LogEntry,
  type LogMarker,
} from "../_faults.ts";
import { startOperator, type OperatorProcess } from "../_operator.ts";
import {
  DEPLOYMENTS,
  SERVICES,
  WEBAPPS,
  ensureCrd,
  eventually,
  getOrUndefined,
  kube,
  tempNamespace,
  webapp,
} from "../_support.ts";
import { expireResourceVersions, freezeApiServer, restartApiServer, thawApiServer } from "../cluster/control.ts";
import { usingLocalCluster } from "../cluster/env.ts";
import { describeWhen, LOCAL_CONTROL_PLANE } from "../_skip.ts";

const RESYNC_MS = 2_000;
/**
 * GETs in the 10 s after an API server restart below which there is no reconnect storm: 8 per watch (a re-list, a
 * re-watch and the refused attempts of the backoff while the API server's storage initializes), one watch per kind
 * of child plus the WebApps' and the IngressClasses'. A storm (no backoff) is hundreds. A CI run with 7 watches saw
 * 30; one whose API server was down 5.6 s saw 35, which a bound of 5 per watch failed.
 */
const STORM_BOUND = 8 * (CHILD_KINDS.length + 2);
/**
 * The only error lines a fault may cause: a reconcile that met the API server away (it is retried with
 * backoff). Once the operator has recovered, no error line at all is expected.
 */
const OUTAGE_ERRORS = [
  /^\[webapp\] reconcile of \S+ failed \(attempt \d+\); retrying in \d+ ms: .*(cannot reach the Kubernetes API server|is shutting down|before all known HTTP paths have been installed|storage is \(re\)initializing|no answer from)/s,
];
const errorsSince = (m: ReturnType<typeof since>) =>
  logsSince(m)
    .filter((e) => e.level === "error")
    .map((e) => e.msg);
const local = usingLocalCluster();

let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess | undefined;

function start(extra: string[] = []): Promise<OperatorProcess> {
  return startOperator([
    "--namespaces",
    ns.name,
    "--leader-elect=false",
    "--resync-period",
    `${RESYNC_MS}ms`,
    "--log-level",
    "debug",
    ...extra,
  ]);
}

interface DeploymentLike extends KubeObject {
  spec: { replicas: number };
}
const deployment = (name: string) => getOrUndefined<DeploymentLike>(DEPLOYMENTS, `${name}-deployment`, ns.name);
const service = (name: string) => getOrUndefined(SERVICES, `${name}-svc`, ns.name);
const createWebApp = (name: string, replicas = 1) =>
  kube.create(WEBAPPS, webapp(name, ns.name, { image: "nginx:1.25", replicas, port: 80 }));
const scale = (name: string, replicas: number) => kube.patch(WEBAPPS, name, ns.name, { spec: { replicas } }, "merge");

async function reconciled(name: string, replicas: number, timeoutMs = 30_000): Promise<void> {
  await eventually(
    async () => (await deployment(name))?.spec.replicas === replicas && (await service(name)) !== undefined,
    timeoutMs,
    `${name} reconciled to ${replicas} replica(s)`,
  );
}

const created = (entries: readonly LogEntry[], name: string) =>
  matching(entries, new RegExp(`^created (Deployment|Service) ${ns.name}/${name}-`));
/**
 * The WebApp `name`, deleted while the operator could not see it, got at most one stray child per kind after
 * `mark`, and none is left. While the caches disagree (the WebApp still cached, a child already gone) a
 * re-creation is sent beside the owner check (operator/converge.ts); the check's answer stops any more for
 * that uid, and the garbage collector removes what was sent (its owner uid does not exist).
 */
async function strayChildrenCollected(name: string, mark: LogMarker): Promise<void> {
  const entries = logsSince(mark);
  const stray = created(entries, name);
  for (const kind of ["Deployment", "Service"])
    expect(stray.filter((m) => m.startsWith(`created ${kind} `)).length).toBeLessThanOrEqual(1);
  const refused = matching(entries, new RegExp(`^WebApp \\S+/${name} is cached but gone from the API server`));
  if (stray.length > 0) expect(refused.length).toBeGreaterThanOrEqual(1);
  await eventually(
    async () => (await deployment(name)) === undefined && (await service(name)) === undefined,
    30_000,
    `no child of the deleted WebApp ${name} left`,
  );
}
const resyncCounts = (entries: readonly LogEntry[]) =>
  matching(entries, /resync enqueued \d+ keys$/).map((m) => Number(/(\d+) keys$/.exec(m)?.[1]));
const requests = async (o: OperatorProcess, method?: string) =>
  o.counter("rest_client_requests_total", method ? `method="${method}"` : undefined);

/**
 * The cache holds exactly `keys` WebApps and none of `deleted`. Once a resync reports `keys` keys, the
 * children of `deleted` are removed (standing in for the garbage collector, itself still recovering
 * from the fault): their delete events make the operator reconcile those owners, and a WebApp lingering
 * in its cache would get them created again. Then, over two more resyncs: every resync enqueues exactly
 * `keys` keys and no child of `deleted` is created.
 */
async function cacheHoldsExactly(o: OperatorProcess, keys: number, deleted: string[]): Promise<void> {
  const first = since(o);
  await eventually(
    () => resyncCounts(logsSince(first)).at(-1) === keys,
    4 * RESYNC_MS + 10_000,
    `a resync of exactly ${keys} keys`,
  ).catch((e: Error) => {
    throw new Error(
      `${e.message}; resyncs since convergence enqueued ${JSON.stringify(resyncCounts(logsSince(first)))} keys: the cache does not hold exactly the API server's ${keys} WebApps`,
    );
  });
  const mark = since(o);
  for (const name of deleted) {
    await Promise.all([
      kube.delete(DEPLOYMENTS, `${name}-deployment`, ns.name).catch(ignoreNotFound),
      kube.delete(SERVICES, `${name}-svc`, ns.name).catch(ignoreNotFound),
    ]);
  }
  await eventually(() => resyncCounts(logsSince(mark)).length >= 2, 4 * RESYNC_MS + 5_000, "two more resyncs");
  const entries = logsSince(mark);
  expect(resyncCounts(entries)).toEqual(resyncCounts(entries).map(() => keys));
  for (const name of deleted) {
    expect(created(entries, name)).toEqual([]);
    expect(await deployment(name)).toBeUndefined();
    expect(await service(name)).toBeUndefined();
  }
}

const ignoreNotFound = (e: unknown) => {
  if (!isNotFound(e)) throw e;
};

/** Each test: its own namespace (so the cache's size is known) and its own operator process. */
async function setUp(extra: string[] = []): Promise<OperatorProcess> {
  ns = await tempNamespace("watch-faults");
  op = await start(extra);
  return op;
}

beforeAll(async () => {
  if (local) await ensureCrd();
});
afterEach(async () => {
  await thawApiServer().catch(() => {});
  if (op && isRunning(op)) {
    const code = await op.stop();
    expect(code).toBe(0);
  }
  op = undefined;
  await ns?.drop();
});

describeWhen(LOCAL_CONTROL_PLANE)("the operator's watches under control-plane faults", () => {
  test(
    "resourceVersions expired while it was not looking: it re-lists, the WebApp deleted in the gap is gone, the one created in the gap is reconciled once",
    showingLogs(
      () => [op],
      async () => {
        const o = await setUp();
        await Promise.all([createWebApp("gone"), createWebApp("kept")]);
        await Promise.all([reconciled("gone", 1), reconciled("kept", 1)]);

        // Pause the operator, then cut its watches with a restart: nothing of what follows can be buffered
        // on its sockets. Change things, then expire every resourceVersion it knows.
        o.proc.kill("SIGSTOP");
        try {
          await restartApiServer();
          await kube.delete(WEBAPPS, "gone", ns.name);
          await scale("kept", 2);
          await Promise.all([createWebApp("born"), createWebApp("twin")]);
          await expireResourceVersions();
        } finally {
          o.proc.kill("SIGCONT");
        }
        const mark = since(o);

        await Promise.all([reconciled("born", 1), reconciled("twin", 1), reconciled("kept", 2)]);
        const recovered = since(o);
        const relisted = matching(logsSince(mark), /^watch of webapps\.apps\.example\.com .*resourceVersion too old/);
        expect(relisted.length).toBeGreaterThanOrEqual(1);
        expect(relisted.length).toBeLessThanOrEqual(3); // one re-list, not a loop
        await cacheHoldsExactly(o, 3, ["gone"]); // kept, born, twin (before the gap: gone, kept)
        expect(created(logEntries(o), "born")).toHaveLength(2); // once each, never twice
        expect(created(logEntries(o), "twin")).toHaveLength(2);
        expect(errorsSince(recovered)).toEqual([]);
        expect(created(logsSince(mark), "kept")).toEqual([]);
        await strayChildrenCollected("gone", mark);
        expectHealthy(o, OUTAGE_ERRORS);
      },
    ),
    90_000,
  );

  test(
    "kube-apiserver restarted while watching: no reconnect storm, and changes right after it are reconciled",
    showingLogs(
      () => [op],
      async () => {
        const o = await setUp();
        await Promise.all([createWebApp("r-kept"), createWebApp("r-gone")]);
        await Promise.all([reconciled("r-kept", 1), reconciled("r-gone", 1)]);
        await eventually(() => o.ready(), 10_000, "ready");

        const WINDOW_MS = 10_000;
        const [get0, all0] = await Promise.all([requests(o, "GET"), requests(o)]);
        const mark = since(o);
        const t0 = Date.now();
        await restartApiServer();
        const down = Date.now() - t0;
        await Promise.all([
          scale("r-kept", 2),
          createWebApp("r-new"),
          createWebApp("r-new-too"),
          kube.delete(WEBAPPS, "r-gone", ns.name),
        ]);
        await Bun.sleep(Math.max(0, t0 + WINDOW_MS - Date.now()));
        const [get1, all1] = await Promise.all([requests(o, "GET"), requests(o)]);
        console.log(
          `apiserver restart: down ${down} ms; operator requests in the ${WINDOW_MS} ms from the restart: ${get1 - get0} GET (list, watch, get), ${all1 - all0} in all`,
        );
        if (get1 - get0 >= STORM_BOUND)
          console.log(
            (await o.metricsText())
              .split("\n")
              .filter((l) => l.startsWith("rest_client_requests_total"))
              .join("\n"),
          );
        expect(get1 - get0).toBeLessThan(STORM_BOUND);

        await Promise.all([reconciled("r-kept", 2), reconciled("r-new", 1), reconciled("r-new-too", 1)]);
        await eventually(() => o.ready(), 30_000, "ready again");
        const recovered = since(o);
        await cacheHoldsExactly(o, 3, ["r-gone"]); // r-kept, r-new, r-new-too (before: r-kept, r-gone)
        await strayChildrenCollected("r-gone", mark);
        expect(errorsSince(recovered)).toEqual([]);
        expectHealthy(o, OUTAGE_ERRORS);
      },
    ),
    90_000,
  );

  test(
    "kube-apiserver frozen past the watch inactivity limit: /readyz fails for the whole stall, then the watches recover and a new change is reconciled",
    showingLogs(
      () => [op],
      async () => {
        const INACTIVITY_MS = 5_000;
        const FREEZE_MS = 15_000;
        const o = await setUp(["--watch-inactivity-timeout", `${INACTIVITY_MS}ms`]);
        await createWebApp("frozen");
        await reconciled("frozen", 1);
        await eventually(() => o.ready(), 10_000, "ready");

        const mark = since(o);
        const samples: { at: number; ready: boolean }[] = [];
        await freezeApiServer();
        const t0 = Date.now();
        try {
          while (Date.now() - t0 < FREEZE_MS) {
            samples.push({ at: Date.now() - t0, ready: await o.ready() });
            await Bun.sleep(250);
          }
        } finally {
          await thawApiServer();
        }
        const firstFailure = samples.findIndex((s) => !s.ready);
        console.log(
          `freeze: /readyz first failed ${samples[firstFailure]?.at} ms into the stall (inactivity limit ${INACTIVITY_MS} ms)`,
        );
        expect(firstFailure).toBeGreaterThanOrEqual(0);
        expect(samples[firstFailure]?.at).toBeLessThanOrEqual(INACTIVITY_MS + 1_500);
        expect(samples.slice(firstFailure).every((s) => !s.ready)).toBe(true); // failed until the thaw
        expect(
          matching(logsSince(mark), /no event or bookmark for 5000 ms|no answer to WATCH within 5000 ms/).length,
        ).toBeGreaterThanOrEqual(1);

        const t1 = Date.now();
        await eventually(() => o.ready(), 30_000, "ready after the thaw");
        console.log(`freeze: ready again ${Date.now() - t1} ms after the thaw`);
        const recovered = since(o);
        await scale("frozen", 2);
        await reconciled("frozen", 2);
        expect(errorsSince(recovered)).toEqual([]);
        expectHealthy(o, OUTAGE_ERRORS);
      },
    ),
    90_000,
  );
});
