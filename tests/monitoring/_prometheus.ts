/**
 * A real Prometheus (built from its Go module and cached, tests/_gotool.ts) for the end-to-end monitoring test.
 *
 * Contract:
 * - startPrometheus() runs it inside the local cluster's network namespace (tests/cluster/netns.ts), where pod IPs
 *   are reachable, so it discovers the operator's pods through the API server (kubernetes_sd, with the test's
 *   kubeconfig) and scrapes each one directly, as in a cluster; its HTTP API is brought to host loopback by the
 *   cluster's own forwarder binary (tests/cluster/go/forward), so nothing listens anywhere but on loopback.
 * - Resolves once /-/ready answers 200; `stop()` ends both processes and is safe to call twice.
 * - query/queryRange/alerts read Prometheus's HTTP API and throw with Prometheus's error text on a bad query.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toYaml } from "../../src/api/yaml.ts";
import { binaryPath } from "../cluster/build.ts";
import { clusterState } from "../cluster/control.ts";
import { inNetns } from "../cluster/netns.ts";
import { ensureGoTool, PROMETHEUS } from "../_gotool.ts";

export interface PromSample {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}
export interface PromAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: "pending" | "firing" | "inactive";
}
export interface RunningPrometheus {
  readonly url: string;
  query(expr: string): Promise<PromSample[]>;
  queryRange(expr: string, startSec: number, endSec: number, stepSec: number): Promise<PromSample[]>;
  alerts(): Promise<PromAlert[]>;
  stop(): Promise<void>;
}

export interface PrometheusSetup {
  /** A scratch directory for the configuration, the rules and the TSDB. */
  dir: string;
  /** The scrape job (the job the alerts select), over the pods of `namespace` with a port named `portName`. */
  job: string;
  namespace: string;
  portName: string;
  /** The bearer token Prometheus scrapes with. */
  token: string;
  /** A rule file's content (monitoring.ts ruleGroups). */
  rules: unknown;
  kubeconfig: string;
  intervalSec?: number;
}

async function freeLoopbackPort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

function config(s: PrometheusSetup): unknown {
  const every = `${s.intervalSec ?? 2}s`;
  return {
    global: { scrape_interval: every, evaluation_interval: every },
    rule_files: [join(s.dir, "rules.yaml")],
    scrape_configs: [
      {
        job_name: s.job,
        honor_labels: true,
        scheme: "https",
        authorization: { type: "Bearer", credentials_file: join(s.dir, "token") },
        tls_config: { insecure_skip_verify: true },
        kubernetes_sd_configs: [{ role: "pod", kubeconfig_file: s.kubeconfig, namespaces: { names: [s.namespace] } }],
        relabel_configs: [
          { source_labels: ["__meta_kubernetes_pod_container_port_name"], regex: s.portName, action: "keep" },
          { source_labels: ["__meta_kubernetes_namespace"], target_label: "namespace" },
          { source_labels: ["__meta_kubernetes_pod_name"], target_label: "pod" },
        ],
      },
    ],
  };
}

export async function startPrometheus(s: PrometheusSetup): Promise<RunningPrometheus> {
  const state = await clusterState();
  const netns = state?.network?.path;
  if (!state || !netns) throw new Error("the end-to-end Prometheus needs the local cluster's network namespace");
  mkdirSync(join(s.dir, "data"), { recursive: true });
  writeFileSync(join(s.dir, "token"), s.token, { mode: 0o600 });
  writeFileSync(join(s.dir, "rules.yaml"), toYaml(s.rules));
  writeFileSync(join(s.dir, "prometheus.yml"), toYaml(config(s)));
  const port = await freeLoopbackPort();
  const address = `127.0.0.1:${port}`;
  const log = Bun.file(join(s.dir, "prometheus.log"));
  const server = Bun.spawn(
    inNetns(netns, [
      ensureGoTool(PROMETHEUS),
      `--config.file=${join(s.dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(s.dir, "data")}`,
      `--web.listen-address=${address}`,
    ]),
    { stdout: log, stderr: log },
  );
  const forwarder = Bun.spawn([binaryPath(state.binDir, "forward"), `-netns=${netns}`, address], {
    stdout: "pipe",
    stderr: "pipe",
  });
  const url = `http://${address}`;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    server.kill();
    forwarder.kill();
    await Promise.all([server.exited, forwarder.exited]);
  };
  try {
    await waitReady(url, server, join(s.dir, "prometheus.log"));
  } catch (e) {
    await stop();
    throw e;
  }
  const api = async <T>(path: string, params: Record<string, string> = {}): Promise<T> => {
    const res = await fetch(`${url}${path}?${new URLSearchParams(params)}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`Prometheus ${path} ${JSON.stringify(params)}: ${body.error}`);
    return body.data;
  };
  return {
    url,
    query: async (expr) => (await api<{ result: PromSample[] }>("/api/v1/query", { query: expr })).result,
    queryRange: async (expr, start, end, step) =>
      (
        await api<{ result: PromSample[] }>("/api/v1/query_range", {
          query: expr,
          start: String(start),
          end: String(end),
          step: String(step),
        })
      ).result,
    alerts: async () => (await api<{ alerts: PromAlert[] }>("/api/v1/alerts")).alerts,
    stop,
  };
}

async function waitReady(url: string, server: Bun.Subprocess, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (server.exitCode !== null)
      throw new Error(`prometheus exited (${server.exitCode}): ${(await Bun.file(logFile).text()).slice(-2000)}`);
    const ok = await fetch(`${url}/-/ready`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) return;
    await Bun.sleep(250);
  }
  throw new Error(`prometheus at ${url} not ready within 60 s: ${(await Bun.file(logFile).text()).slice(-2000)}`);
}
