/**
 * One soak, start to finish: `runSoak(options)` resolves with a report; it never throws for a failed
 * invariant (the report says which), only for a broken setup.
 *
 * Phases:
 * 1. setup: the CRD; the operator's RBAC from the install builders (src/install) in its own
 *    namespace, and a token of its ServiceAccount, so the replicas run with exactly the installed
 *    permissions; decoys; the WebApps (one of them blocked by a foreign Deployment); a few WebApps in
 *    a namespace the operator does not watch;
 * 2. two replicas with leader election; wait until every WebApp converged; fingerprint the decoys;
 * 3. chaos for `minutes`: churn workers and, one at a time, faults (faults.ts);
 * 4. churn stops; within `settleMs` every convergence invariant must hold (invariants.ts);
 * 5. quiet: for `quietMs` the replicas write nothing (no POST, no PATCH);
 * 6. decoys, the outside namespace, and the processes are checked (checks.ts); replicas stop;
 * 7. everything the soak created is deleted (unless `keep`); what the control plane's logs gained during the soak is
 *    copied to <logDir>/cluster/ (cluster-logs.ts), as the cluster's own go with it.
 * An aborted `signal` ends the soak early: the fault under way is finished, phases 4-6 are skipped, the replicas
 * stop and 7 runs; runSoak then rejects with the signal's reason (no report: nothing was checked).
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildManifests, clusterRoleName, LEASE_NAME, resourceOf } from "../../src/install/manifests.ts";
import { METRICS_READER_ROLE } from "../../src/install/rbac.ts";
import { createKubeClient } from "../../src/kube/client.ts";
import type { KubeObject } from "../../src/kube/types.ts";
import { paths } from "../cluster/state.ts";
import { adminConnection, kubeconfigYaml } from "../_identities.ts";
import { KUBECTL_CACHE_DIR, kubectl } from "../_kubectl.ts";
import { NAMESPACES, WEBAPPS, ensureCrd, kube, kubeconfig } from "../_support.ts";
import { copyLogsSince, markLogs } from "./cluster-logs.ts";
import { measureHealthy, objectWrites, processChecks, totals, type ErrorClass } from "./checks.ts";
import { appName, createChurn, randomSpec, type ChurnStats, type Population } from "./churn.ts";
import { changedDecoys, fingerprintDecoys, plantDecoys } from "./decoys.ts";
import { createFaultInjector, type FaultRecord, type LeaseTimings } from "./faults.ts";
import { convergenceChecks, outsideUntouched, writesSurvived, type CheckResult } from "./invariants.ts";
import { createFleet, type ExitCause, type ProcessRecord } from "./operators.ts";
import { createRandom } from "./random.ts";

export interface SoakOptions {
  minutes: number;
  webapps: number;
  seed: number;
  churnWorkers: number;
  churnPauseMs: [number, number];
  faultGapMs: [number, number];
  lease: LeaseTimings;
  settleMs: number;
  quietMs: number;
  keep: boolean;
  /** Stop injecting faults after this many (default: no limit; the first round of every kind always runs). */
  maxFaults?: number;
  log: (line: string) => void;
  signal?: AbortSignal;
}

export const DEFAULT_SOAK: Omit<SoakOptions, "log"> = {
  minutes: 5,
  webapps: 200,
  seed: 1,
  churnWorkers: 3,
  churnPauseMs: [20, 250],
  faultGapMs: [5_000, 20_000],
  // The shipped defaults (devctl operator run): 15 s lease, 10 s renew deadline, 2 s retry period.
  lease: { durationMs: 15_000, renewMs: 10_000, retryMs: 2_000 },
  settleMs: 180_000,
  quietMs: 15_000,
  keep: false,
};

export interface SoakReport {
  options: Omit<SoakOptions, "log" | "signal">;
  logDir: string;
  startedAt: string;
  initialConvergenceMs: number;
  chaosMs: number;
  faults: FaultRecord[];
  churn: ChurnStats;
  population: { initial: number; final: number; deletedForGood: number; created: number };
  processes: { started: number; exits: Record<ExitCause, number> };
  totals: ReturnType<typeof totals> & { errorLines: Record<ErrorClass, number> };
  settleMs?: number;
  quiet: { windowMs: number; writes: number };
  checks: CheckResult[];
  ok: boolean;
}

const COLLISION = "taken";

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const o = options;
  const t0 = Date.now();
  const log = (line: string) => o.log(`[chaos ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  const random = createRandom(o.seed);
  const id = `${o.seed.toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const ns = `chaos-${id}`;
  const installNs = `chaos-${id}-system`;
  const outsideNs = `chaos-${id}-outside`;
  const logDir = join(tmpdir(), `devctl-chaos-${new Date().toISOString().replace(/[:.]/g, "-")}`);
  mkdirSync(logDir, { recursive: true });
  const clusterLogs = markLogs(paths.logs);
  log(`seed ${o.seed}, ${o.webapps} WebApps in ${ns}, ${o.minutes} min of chaos; operator logs in ${logDir}`);

  // 1. setup
  await ensureCrd();
  for (const obj of buildManifests({ namespace: installNs, image: "unused", replicas: 1 })) {
    if (["CustomResourceDefinition", "Deployment"].includes(obj.kind ?? "")) continue;
    await kube.apply(resourceOf(obj), obj, { fieldManager: "devctl-chaos" });
  }
  for (const name of [ns, outsideNs])
    await kube.create(NAMESPACES, { apiVersion: "v1", kind: "Namespace", metadata: { name } });
  const token = kubectl([
    "create",
    "token",
    "webapp-operator",
    "-n",
    installNs,
    `--duration=${Math.ceil(o.minutes * 60 + 3600)}s`,
  ]);
  if (token.code !== 0) throw new Error(`kubectl create token: ${token.stderr}`);
  const saKubeconfig = join(logDir, "operator.kubeconfig");
  const admin = adminConnection();
  await Bun.write(
    saKubeconfig,
    kubeconfigYaml(admin.server, "webapp-operator", { ca: admin.ca, token: token.stdout.trim() }),
  );

  const decoys = await plantDecoys(kube, ns, COLLISION);
  const create = (name: string, namespace: string) =>
    kube.create(WEBAPPS, {
      apiVersion: "apps.example.com/v1",
      kind: "WebApp",
      metadata: { name, namespace },
      spec: randomSpec(random),
    } as KubeObject);
  await create(COLLISION, ns);
  const names = Array.from({ length: o.webapps }, (_, i) => appName(i));
  await pool(names, 16, (n) => create(n, ns));
  for (const n of ["outside-a", "outside-b", "outside-c"]) await create(n, outsideNs);
  const population: Population = {
    live: new Set(names),
    deleted: new Set(),
    protectedNames: new Set([COLLISION]),
    next: o.webapps,
    min: Math.floor(o.webapps * 0.8),
    max: Math.ceil(o.webapps * 1.1),
  };

  // 2. replicas
  const faultsRef: { explain: (rec: ProcessRecord, cause: ExitCause, at: number) => string | undefined } = {
    explain: () => undefined,
  };
  const fleet = createFleet({
    replicas: 2,
    args: [
      "--kubeconfig",
      saKubeconfig,
      "--namespaces",
      ns,
      "--lease-namespace",
      installNs,
      "--lease-name",
      LEASE_NAME,
      "--lease-duration",
      `${o.lease.durationMs}ms`,
      "--renew-deadline",
      `${o.lease.renewMs}ms`,
      "--retry-period",
      `${o.lease.retryMs}ms`,
      "--log-format",
      "json",
      "--log-level",
      "debug",
    ],
    logDir,
    leaseNamespace: installNs,
    leaseName: LEASE_NAME,
    client: kube,
    log,
    explainExit: (rec, cause, at) => faultsRef.explain(rec, cause, at),
  });
  const faults = createFaultInjector({ fleet, random, lease: o.lease, stableTimeoutMs: 120_000, log });
  faultsRef.explain = (rec, cause, at) => faults.explainExit(rec, cause, at);
  const churnClient = createKubeClient({ kubeconfig, timeoutMs: 5_000 });
  const churn = createChurn({
    client: churnClient,
    namespace: ns,
    kubeconfig,
    kubectlCacheDir: KUBECTL_CACHE_DIR,
    population,
    random,
  });
  const checks: CheckResult[] = [];
  let initialConvergenceMs = 0;
  let chaosMs = 0;
  let settleMs: number | undefined;
  const quiet = { windowMs: o.quietMs, writes: -1 };
  try {
    await fleet.start();
    await untilAborted(fleet.waitStable(120_000), o.signal);
    const converging = Date.now();
    const decoyUids = new Set(decoys.map((d) => d.uid));
    const initial = await settle(
      () => convergenceChecks(kube, ns, COLLISION, [], decoyUids),
      Math.max(120_000, o.webapps * 1000),
      o.signal,
    );
    if (!initial.ok)
      throw new Error(`the WebApps did not converge before the chaos started:\n${describe(initial.checks)}`);
    initialConvergenceMs = Date.now() - converging;
    log(`${o.webapps} WebApps converged in ${(initialConvergenceMs / 1000).toFixed(1)} s`);
    await fingerprintDecoys(kube, ns, decoys);

    // 3. chaos
    const started = Date.now();
    const deadline = started + o.minutes * 60_000;
    const stopChurn = new AbortController();
    o.signal?.addEventListener("abort", () => stopChurn.abort(), { once: true });
    const churning = churn.run(stopChurn.signal, o.churnWorkers, o.churnPauseMs);
    const faulting = faults.run(deadline, o.faultGapMs, stopChurn.signal, o.maxFaults);
    const progress = setInterval(
      () =>
        log(
          `churn: ${Object.values(churn.stats.ops).reduce((n, s) => n + s.ok + s.failed, 0)} operations; faults: ${faults.records.length}; live WebApps ~${population.live.size}`,
        ),
      30_000,
    );
    await Promise.race([
      Bun.sleep(Math.max(0, deadline - Date.now())),
      new Promise((r) => o.signal?.addEventListener("abort", r, { once: true })),
    ]);
    await faulting;
    stopChurn.abort();
    await churning;
    clearInterval(progress);
    o.signal?.throwIfAborted(); // stopped early: nothing to check
    chaosMs = Date.now() - started;
    log(
      `chaos over after ${(chaosMs / 1000).toFixed(0)} s: ${faults.records.length} faults, ${Object.values(churn.stats.ops).reduce((n, s) => n + s.ok, 0)} churn operations; waiting for convergence`,
    );

    // 4. settle
    await fleet.waitStable(120_000).catch((e: Error) => log(e.message));
    const settling = Date.now();
    const endState = async () => [
      ...(await convergenceChecks(kube, ns, COLLISION, population.deleted, decoyUids)),
      await writesSurvived(kube, ns, churn.written),
    ];
    const final = await settle(endState, o.settleMs);
    checks.push(
      ...final.checks.map((c) => ({
        ...c,
        name: `${c.name} — within ${(o.settleMs / 1000).toFixed(0)} s of the end of churn`,
      })),
    );
    if (final.ok) settleMs = Date.now() - settling;
    measureHealthy(fleet.readiness, faults.records, Date.now());
    log(
      final.ok
        ? `converged ${(settleMs! / 1000).toFixed(1)} s after churn stopped`
        : `NOT converged after ${(o.settleMs / 1000).toFixed(0)} s`,
    );

    const existing = new Set((await kube.listAll(WEBAPPS, { namespace: ns })).items.map((w) => w.metadata.name));
    for (const n of population.deleted) if (existing.has(n)) population.deleted.delete(n); // its delete timed out, yet it exists
    for (const n of existing) if (n && n !== COLLISION) population.live.add(n);
    for (const n of population.live) if (!existing.has(n)) population.live.delete(n);

    // 5. quiet
    await Bun.sleep(2000); // the last status writes and events land
    const before = objectWrites(fleet);
    await Bun.sleep(o.quietMs);
    quiet.writes = objectWrites(fleet) - before;
    // Still converged after the quiet spell: nothing was undone behind the first check's back (checked
    // whatever the first check found, so one broken invariant cannot hide another).
    const still = (await endState()).filter((c) => !c.ok).flatMap((c) => c.problems);
    const quietProblems = [
      ...(quiet.writes === 0 ? [] : [`${quiet.writes} writes`]),
      ...still.map((p) => `after the quiet spell: ${p}`),
    ];
    checks.push({
      name: `quiet once converged: no object writes (POST/PATCH) by the replicas for ${(o.quietMs / 1000).toFixed(0)} s, and still converged after it`,
      ok: quietProblems.length === 0,
      checked: 1,
      problems: quietProblems,
    });

    // 6. the rest
    const decoyProblems = await changedDecoys(kube, ns, decoys);
    checks.push({
      name: "decoys unchanged: generation, spec, labels, annotations, owners, managedFields (foreign same-named Deployment, unrelated Deployment and Service, impostors labelled as ours)",
      ok: decoyProblems.length === 0,
      checked: decoys.length,
      problems: decoyProblems,
    });
    checks.push(await outsideUntouched(kube, outsideNs));
  } finally {
    const codes = await fleet.stop();
    log(`replicas stopped (exit codes ${codes.join(", ") || "none running"})`);
    if (!o.keep) await cleanup(ns, installNs, outsideNs).catch((e: Error) => log(`cleanup failed: ${e.message}`));
    try {
      const copied = copyLogsSince(clusterLogs, join(logDir, "cluster"));
      log(
        `the control plane's logs of the soak: ${copied.map((c) => c.name).join(", ") || "none"} in ${logDir}/cluster`,
      );
    } catch (e) {
      log(`could not copy the control plane's logs: ${(e as Error).message}`);
    }
  }
  const proc = processChecks(fleet, faults.records);
  checks.push(...proc.checks);
  const exits = { killed: 0, handover: 0, stopped: 0, "lease-lost": 0, "start-failed": 0, crash: 0 } as Record<
    ExitCause,
    number
  >;
  for (const p of fleet.history) if (p.exit) exits[p.exit.cause]++;
  const report: SoakReport = {
    options: { ...o, log: undefined, signal: undefined } as unknown as SoakReport["options"],
    logDir,
    startedAt: new Date(t0).toISOString(),
    initialConvergenceMs,
    chaosMs,
    faults: faults.records,
    churn: churn.stats,
    population: {
      initial: o.webapps,
      final: population.live.size,
      deletedForGood: population.deleted.size,
      created: population.next - o.webapps,
    },
    processes: { started: fleet.history.length, exits },
    totals: { ...totals(fleet), errorLines: proc.errorLines },
    ...(settleMs !== undefined ? { settleMs } : {}),
    quiet,
    checks,
    ok: checks.length > 0 && checks.every((c) => c.ok),
  };
  await Bun.write(
    join(logDir, "report.json"),
    JSON.stringify(
      { ...report, churn: { ...report.churn, failures: Object.fromEntries(report.churn.failures) } },
      null,
      2,
    ),
  );
  return report;
}

/** `p`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    }),
  ]);
}

/** Polls `fn` every 2 s until every check holds or `timeoutMs` passed; returns the last checks. Rejects on `signal`. */
async function settle(
  fn: () => Promise<CheckResult[]>,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ ok: boolean; checks: CheckResult[] }> {
  const deadline = Date.now() + timeoutMs;
  let checks: CheckResult[] = [];
  for (;;) {
    signal?.throwIfAborted();
    try {
      checks = await fn();
      if (checks.every((c) => c.ok)) return { ok: true, checks };
    } catch (e) {
      checks = [{ name: "reading the namespace", ok: false, checked: 0, problems: [(e as Error).message] }];
    }
    if (Date.now() > deadline) return { ok: false, checks };
    await Bun.sleep(2000);
  }
}

export function describe(checks: CheckResult[]): string {
  return checks
    .filter((c) => !c.ok)
    .map(
      (c) =>
        `  ${c.name}:\n    ${c.problems.slice(0, 10).join("\n    ")}${c.problems.length > 10 ? `\n    ... and ${c.problems.length - 10} more` : ""}`,
    )
    .join("\n");
}

async function pool<T>(items: T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

async function cleanup(ns: string, installNs: string, outsideNs: string): Promise<void> {
  for (const name of [ns, outsideNs, installNs]) await kube.delete(NAMESPACES, name).catch(() => {});
  const rbac = "rbac.authorization.k8s.io";
  await kube
    .delete(
      { group: rbac, version: "v1", plural: "clusterrolebindings", kind: "ClusterRoleBinding", namespaced: false },
      clusterRoleName(installNs),
    )
    .catch(() => {});
  for (const role of [clusterRoleName(installNs), METRICS_READER_ROLE])
    await kube
      .delete({ group: rbac, version: "v1", plural: "clusterroles", kind: "ClusterRole", namespaced: false }, role)
      .catch(() => {});
}
