/**
 * The metric families of devctl's runtime, named exactly as controller-runtime and client-go name
 * them, so existing dashboards and alerts work unchanged.
 *
 * Contract:
 * - `createRuntimeMetrics()` makes a fresh registry holding every family below; parts record into it
 *   through narrow recorders: `workqueue(name)`, `controller(name)`, `observeRequest(obs)`,
 *   `leaderStatus(name, leading)`. Getting a recorder creates its series at 0, as the Go libraries do.
 * - Workqueue families carry labels `name` and `controller` (both the queue's name, as
 *   controller-runtime >= 0.20 does); controller families carry `controller`.
 * - Values that only mean something "now" (unfinished work, longest running processor, process
 *   memory and CPU) are computed at scrape time, not by a background loop.
 */
import type { RequestObservation } from "../kube/types.ts";
import { type CounterSeries, type Family, type GaugeSeries, type HistogramSeries, Registry } from "./prometheus.ts";

export { Registry } from "./prometheus.ts";
export type { CounterSeries, Family, GaugeSeries, HistogramSeries, Labels } from "./prometheus.ts";

/** controller-runtime's buckets for controller_runtime_reconcile_time_seconds. */
export const RECONCILE_TIME_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** ExponentialBuckets(10e-9, 10, 12): 10 ns to 1000 s, as client-go's workqueue histograms. */
export const WORKQUEUE_DURATION_BUCKETS: readonly number[] = [
  1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000,
];
/** component-base's buckets for rest_client_request_duration_seconds. */
export const REST_CLIENT_DURATION_BUCKETS: readonly number[] = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60];

export type ReconcileResult = "success" | "error" | "requeue" | "requeue_after";
const RESULTS: readonly ReconcileResult[] = ["success", "error", "requeue", "requeue_after"];

/** What a work queue reports. Times in seconds. */
export interface WorkqueueMetrics {
  /** workqueue_depth: keys waiting to be handed out. */
  depth(n: number): void;
  /** workqueue_adds_total. */
  added(): void;
  /** workqueue_queue_duration_seconds: from add to get. */
  queueLatency(seconds: number): void;
  /** workqueue_work_duration_seconds: from get to done. */
  workDuration(seconds: number): void;
  /** workqueue_retries_total: every delayed add. */
  retry(): void;
  /** Read at scrape time for unfinished_work / longest_running_processor; returns its unregister. */
  inFlight(probe: () => InFlightWork): () => void;
}
export interface InFlightWork {
  /** Sum over keys being processed of how long each has been processed. */
  unfinishedSeconds: number;
  /** The longest of those. */
  longestRunningSeconds: number;
}

/** What a controller reports. */
export interface ControllerMetrics {
  /** controller_runtime_reconcile_total{result} and controller_runtime_reconcile_time_seconds. */
  reconciled(result: ReconcileResult, seconds: number): void;
  /** controller_runtime_reconcile_errors_total (terminal errors count here too, as in controller-runtime). */
  error(): void;
  /** controller_runtime_terminal_reconcile_errors_total. */
  terminalError(): void;
  /** controller_runtime_reconcile_panics_total. */
  panic(): void;
  /** controller_runtime_max_concurrent_reconciles. */
  maxConcurrent(n: number): void;
  /** controller_runtime_active_workers. */
  activeWorkers(n: number): void;
}

export interface RuntimeMetrics {
  readonly registry: Registry;
  workqueue(name: string): WorkqueueMetrics;
  controller(name: string): ControllerMetrics;
  /** rest_client_requests_total{code,method,host} and rest_client_request_duration_seconds{verb,host}. */
  observeRequest(obs: RequestObservation): void;
  /** leader_election_master_status{name}: 1 when leading, 0 on standby. */
  leaderStatus(name: string, leading: boolean): void;
  /** The text exposition (format 0.0.4). */
  expose(): string;
  /** The same in chunks of whole lines, for a server that streams it; `only` those families (Registry.exposeChunks). */
  exposeChunks(only?: ReadonlySet<string>): Iterable<string>;
}

export interface RuntimeMetricsOptions {
  /** Add process_* metrics (default true). */
  process?: boolean;
}

export function createRuntimeMetrics(opts: RuntimeMetricsOptions = {}): RuntimeMetrics {
  const r = new Registry();
  const controller = registerControllerMetrics(r);
  const workqueue = registerWorkqueueMetrics(r);
  const observeRequest = registerRestClientMetrics(r);
  const leader = r.gauge({
    name: "leader_election_master_status",
    help:
      "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. " +
      "'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ["name"],
  });
  if (opts.process ?? true) registerProcessMetrics(r);
  return {
    registry: r,
    workqueue,
    controller,
    observeRequest,
    leaderStatus: (name, leading) => leader.with({ name }).set(leading ? 1 : 0),
    expose: () => r.expose(),
    exposeChunks: (only) => r.exposeChunks(only),
  };
}

/** controller_runtime_* families; the recorder of one controller. */
function registerControllerMetrics(r: Registry): (name: string) => ControllerMetrics {
  const c = ["controller"];
  const reconcileTotal = r.counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"],
  });
  const counter = (name: string, help: string) => r.counter({ name, help, labelNames: c });
  const gauge = (name: string, help: string) => r.gauge({ name, help, labelNames: c });
  const families = {
    errors: counter(
      "controller_runtime_reconcile_errors_total",
      "Total number of reconciliation errors per controller",
    ),
    terminal: counter(
      "controller_runtime_terminal_reconcile_errors_total",
      "Total number of terminal reconciliation errors per controller",
    ),
    panics: counter(
      "controller_runtime_reconcile_panics_total",
      "Total number of reconciliation panics per controller",
    ),
    time: r.histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller",
      labelNames: c,
      buckets: RECONCILE_TIME_BUCKETS,
    }),
    max: gauge(
      "controller_runtime_max_concurrent_reconciles",
      "Maximum number of concurrent reconciles per controller",
    ),
    active: gauge("controller_runtime_active_workers", "Number of currently used workers per controller"),
  };
  return (name) => {
    const l = { controller: name };
    const totals = new Map(RESULTS.map((res) => [res, reconcileTotal.with({ controller: name, result: res })]));
    const s = {
      errors: families.errors.with(l),
      terminal: families.terminal.with(l),
      panics: families.panics.with(l),
      time: families.time.with(l),
      max: families.max.with(l),
      active: families.active.with(l),
    };
    return {
      reconciled(result, seconds) {
        totals.get(result)?.inc();
        s.time.observe(seconds);
      },
      error: () => s.errors.inc(),
      terminalError: () => s.terminal.inc(),
      panic: () => s.panics.inc(),
      maxConcurrent: (n) => s.max.set(n),
      activeWorkers: (n) => s.active.set(n),
    };
  };
}

/** workqueue_* families (labels name and controller, both the queue's name); the recorder of one queue. */
function registerWorkqueueMetrics(r: Registry): (name: string) => WorkqueueMetrics {
  const q = ["name", "controller"];
  const durations = (name: string, help: string) =>
    r.histogram({ name, help, labelNames: q, buckets: WORKQUEUE_DURATION_BUCKETS });
  const families = {
    depth: r.gauge({ name: "workqueue_depth", help: "Current depth of workqueue", labelNames: q }),
    adds: r.counter({ name: "workqueue_adds_total", help: "Total number of adds handled by workqueue", labelNames: q }),
    latency: durations(
      "workqueue_queue_duration_seconds",
      "How long in seconds an item stays in workqueue before being requested",
    ),
    work: durations("workqueue_work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
    unfinished: r.gauge({
      name: "workqueue_unfinished_work_seconds",
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at " +
        "which this increases.",
      labelNames: q,
    }),
    longest: r.gauge({
      name: "workqueue_longest_running_processor_seconds",
      help: "How many seconds has the longest running processor for workqueue been running.",
      labelNames: q,
    }),
    retries: r.counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: q,
    }),
  };
  const probes = inFlightProbes(r, families.unfinished, families.longest);
  return (name) => {
    const l = { name, controller: name };
    // Created at 0 now, as the Go libraries do; set at scrape time by the probes.
    families.unfinished.with(l);
    families.longest.with(l);
    const s = {
      depth: families.depth.with(l),
      adds: families.adds.with(l),
      latency: families.latency.with(l),
      work: families.work.with(l),
      retries: families.retries.with(l),
    };
    return {
      depth: (n) => s.depth.set(n),
      added: () => s.adds.inc(),
      queueLatency: (sec) => s.latency.observe(sec),
      workDuration: (sec) => s.work.observe(sec),
      retry: () => s.retries.inc(),
      inFlight: (probe) => probes(name, probe),
    };
  };
}

/**
 * In-flight probes per queue name; a name's unfinished/longest gauges are their sum / max at scrape time, and drop
 * to 0 when its last probe unregisters. Returns `register(name, probe)`, which returns the unregister function.
 */
function inFlightProbes(
  r: Registry,
  unfinished: Family<GaugeSeries>,
  longest: Family<GaugeSeries>,
): (name: string, probe: () => InFlightWork) => () => void {
  const probes = new Map<string, Set<() => InFlightWork>>();
  r.onScrape(() => {
    for (const [name, set] of probes) {
      let sum = 0;
      let max = 0;
      for (const p of set) {
        const w = p();
        sum += w.unfinishedSeconds;
        max = Math.max(max, w.longestRunningSeconds);
      }
      unfinished.with({ name, controller: name }).set(sum);
      longest.with({ name, controller: name }).set(max);
    }
  });
  return (name, probe) => {
    const set = probes.get(name) ?? new Set();
    probes.set(name, set.add(probe));
    return () => {
      set.delete(probe);
      if (set.size > 0) return;
      probes.delete(name);
      unfinished.with({ name, controller: name }).set(0);
      longest.with({ name, controller: name }).set(0);
    };
  };
}

/**
 * rest_client_* families; the observer every API request reports to. The series of each (host, method, code)
 * are looked up once and kept in nested maps, so a request builds no label object or key string.
 */
function registerRestClientMetrics(r: Registry): (o: RequestObservation) => void {
  const requests = r.counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host.",
    labelNames: ["code", "method", "host"],
  });
  const requestDuration = r.histogram({
    name: "rest_client_request_duration_seconds",
    help: "Request latency in seconds. Broken down by verb, and host.",
    labelNames: ["verb", "host"],
    buckets: REST_CLIENT_DURATION_BUCKETS,
  });
  interface ByMethod {
    duration: HistogramSeries;
    byCode: Map<string, CounterSeries>;
  }
  /** host -> method -> its duration series and its request counters by code. */
  const cache = new Map<string, Map<string, ByMethod>>();
  return (o) => {
    let byHost = cache.get(o.host);
    if (!byHost) cache.set(o.host, (byHost = new Map()));
    let m = byHost.get(o.method);
    if (!m) {
      m = { duration: requestDuration.with({ verb: o.method, host: o.host }), byCode: new Map() };
      byHost.set(o.method, m);
    }
    let count = m.byCode.get(o.code);
    if (!count) m.byCode.set(o.code, (count = requests.with({ code: o.code, method: o.method, host: o.host })));
    count.inc();
    m.duration.observe(o.seconds);
  };
}

/** process_* metrics of the Go client's process collector, read at scrape time. */
function registerProcessMetrics(r: Registry): void {
  const cpu = r
    .counter({ name: "process_cpu_seconds_total", help: "Total user and system CPU time spent in seconds." })
    .with();
  const rss = r.gauge({ name: "process_resident_memory_bytes", help: "Resident memory size in bytes." }).with();
  const start = r
    .gauge({ name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds." })
    .with();
  start.set(Math.round(Date.now() - process.uptime() * 1000) / 1000);
  r.onScrape(() => {
    const u = process.cpuUsage();
    const seconds = (u.user + u.system) / 1e6;
    if (seconds > cpu.value()) cpu.inc(seconds - cpu.value());
    rss.set(process.memoryUsage.rss());
  });
}
