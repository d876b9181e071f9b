import { describe, expect, test } from "bun:test";
import {
  createRuntimeMetrics,
  RECONCILE_TIME_BUCKETS,
  REST_CLIENT_DURATION_BUCKETS,
  Registry,
  WORKQUEUE_DURATION_BUCKETS,
} from "./metrics.ts";

/** The lines of one family (HELP, TYPE and series) from an exposition. */
function family(text: string, name: string): string[] {
  return text
    .split("\n")
    .filter(
      (l) =>
        l.startsWith(`# HELP ${name} `) ||
        l.startsWith(`# TYPE ${name} `) ||
        l.startsWith(`${name}{`) ||
        l.startsWith(`${name} `),
    );
}

describe("runtime metrics", () => {
  test("a fresh registry with no recorders in use exposes nothing but process metrics", () => {
    expect(createRuntimeMetrics({ process: false }).expose()).toBe("");
    const text = createRuntimeMetrics().expose();
    expect(text).toContain("# TYPE process_cpu_seconds_total counter\n");
    expect(text).toMatch(/\nprocess_resident_memory_bytes \d+\n/);
    const start = Number(/\nprocess_start_time_seconds (\S+)/.exec(text)?.[1]);
    expect(Math.abs(start - (Date.now() / 1000 - process.uptime()))).toBeLessThan(5);
  });

  test("a controller's recorder exposes controller-runtime's families, created at zero", () => {
    const m = createRuntimeMetrics({ process: false });
    const c = m.controller("webapp");
    c.maxConcurrent(4);
    c.reconciled("success", 0.02);
    c.reconciled("error", 3);
    c.error();
    const text = m.expose();
    expect(family(text, "controller_runtime_reconcile_total")).toEqual([
      "# HELP controller_runtime_reconcile_total Total number of reconciliations per controller",
      "# TYPE controller_runtime_reconcile_total counter",
      'controller_runtime_reconcile_total{controller="webapp",result="error"} 1',
      'controller_runtime_reconcile_total{controller="webapp",result="requeue"} 0',
      'controller_runtime_reconcile_total{controller="webapp",result="requeue_after"} 0',
      'controller_runtime_reconcile_total{controller="webapp",result="success"} 1',
    ]);
    expect(family(text, "controller_runtime_reconcile_errors_total").at(-1)).toBe(
      'controller_runtime_reconcile_errors_total{controller="webapp"} 1',
    );
    expect(family(text, "controller_runtime_terminal_reconcile_errors_total").at(-1)).toBe(
      'controller_runtime_terminal_reconcile_errors_total{controller="webapp"} 0',
    );
    expect(family(text, "controller_runtime_reconcile_panics_total").at(-1)).toBe(
      'controller_runtime_reconcile_panics_total{controller="webapp"} 0',
    );
    expect(family(text, "controller_runtime_max_concurrent_reconciles").at(-1)).toBe(
      'controller_runtime_max_concurrent_reconciles{controller="webapp"} 4',
    );
    expect(family(text, "controller_runtime_active_workers").at(-1)).toBe(
      'controller_runtime_active_workers{controller="webapp"} 0',
    );
    const time = text.split("\n").filter((l) => l.startsWith("controller_runtime_reconcile_time_seconds"));
    expect(time).toHaveLength(RECONCILE_TIME_BUCKETS.length + 3);
    expect(time).toContain('controller_runtime_reconcile_time_seconds_bucket{controller="webapp",le="0.025"} 1');
    expect(time).toContain('controller_runtime_reconcile_time_seconds_bucket{controller="webapp",le="3"} 2');
    expect(time.slice(-2)).toEqual([
      'controller_runtime_reconcile_time_seconds_sum{controller="webapp"} 3.02',
      'controller_runtime_reconcile_time_seconds_count{controller="webapp"} 2',
    ]);
  });

  test("a workqueue's recorder labels by name and controller and reads in-flight work at scrape time", () => {
    const m = createRuntimeMetrics({ process: false });
    const q = m.workqueue("webapp");
    q.added();
    q.depth(1);
    q.retry();
    let probe = { unfinishedSeconds: 3.5, longestRunningSeconds: 2 };
    const off = q.inFlight(() => probe);
    const l = '{controller="webapp",name="webapp"}';
    let text = m.expose();
    expect(family(text, "workqueue_depth")).toEqual([
      "# HELP workqueue_depth Current depth of workqueue",
      "# TYPE workqueue_depth gauge",
      `workqueue_depth${l} 1`,
    ]);
    expect(family(text, "workqueue_adds_total").at(-1)).toBe(`workqueue_adds_total${l} 1`);
    expect(family(text, "workqueue_retries_total").at(-1)).toBe(`workqueue_retries_total${l} 1`);
    expect(family(text, "workqueue_unfinished_work_seconds").at(-1)).toBe(`workqueue_unfinished_work_seconds${l} 3.5`);
    expect(family(text, "workqueue_longest_running_processor_seconds").at(-1)).toBe(
      `workqueue_longest_running_processor_seconds${l} 2`,
    );
    expect(text.split("\n").filter((l) => l.startsWith("workqueue_queue_duration_seconds_bucket"))).toHaveLength(
      WORKQUEUE_DURATION_BUCKETS.length + 1,
    );
    expect(text).toContain('workqueue_work_duration_seconds_bucket{controller="webapp",name="webapp",le="1e-8"} 0\n');
    probe = { unfinishedSeconds: 9, longestRunningSeconds: 9 };
    expect(m.expose()).toContain(`workqueue_unfinished_work_seconds${l} 9\n`);
    off();
    text = m.expose();
    expect(text).toContain(`workqueue_unfinished_work_seconds${l} 0\n`);
    expect(text).toContain(`workqueue_longest_running_processor_seconds${l} 0\n`);
  });

  test("request observations feed rest_client_requests_total and the latency histogram", () => {
    const m = createRuntimeMetrics({ process: false });
    m.observeRequest({ method: "GET", code: "200", host: "10.0.0.1:6443", seconds: 0.02 });
    m.observeRequest({ method: "GET", code: "200", host: "10.0.0.1:6443", seconds: 0.2 });
    m.observeRequest({ method: "PATCH", code: "<error>", host: "10.0.0.1:6443", seconds: 1 });
    const text = m.expose();
    expect(family(text, "rest_client_requests_total")).toEqual([
      "# HELP rest_client_requests_total Number of HTTP requests, partitioned by status code, method, and host.",
      "# TYPE rest_client_requests_total counter",
      'rest_client_requests_total{code="200",host="10.0.0.1:6443",method="GET"} 2',
      'rest_client_requests_total{code="<error>",host="10.0.0.1:6443",method="PATCH"} 1',
    ]);
    expect(text).toContain(
      'rest_client_request_duration_seconds_bucket{host="10.0.0.1:6443",verb="GET",le="0.025"} 1\n',
    );
    expect(text).toContain('rest_client_request_duration_seconds_count{host="10.0.0.1:6443",verb="GET"} 2\n');
  });

  test("interleaved hosts, methods and codes each count in their own series, as the registry's own series would", () => {
    const m = createRuntimeMetrics({ process: false });
    const direct = new Registry();
    const requests = direct.counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests, partitioned by status code, method, and host.",
      labelNames: ["code", "method", "host"],
    });
    const durations = direct.histogram({
      name: "rest_client_request_duration_seconds",
      help: "Request latency in seconds. Broken down by verb, and host.",
      labelNames: ["verb", "host"],
      buckets: REST_CLIENT_DURATION_BUCKETS,
    });
    const hosts = ["a:6443", "b:6443"];
    const methods = ["GET", "PATCH", "PUT"];
    const codes = ["200", "404", "409", "<error>"];
    for (let i = 0; i < 97; i++) {
      const o = { host: hosts[i % 2] as string, method: methods[i % 3] as string, code: codes[i % 4] as string };
      const seconds = (i % 7) / 10;
      m.observeRequest({ ...o, seconds });
      requests.with(o).inc();
      durations.with({ verb: o.method, host: o.host }).observe(seconds);
    }
    expect(m.expose()).toBe(direct.expose());
  });

  test("leader status is 1 while leading and 0 on standby", () => {
    const m = createRuntimeMetrics({ process: false });
    m.leaderStatus("devctl-operator", true);
    expect(family(m.expose(), "leader_election_master_status")).toEqual([
      "# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      "# TYPE leader_election_master_status gauge",
      'leader_election_master_status{name="devctl-operator"} 1',
    ]);
    m.leaderStatus("devctl-operator", false);
    expect(m.expose()).toContain('leader_election_master_status{name="devctl-operator"} 0\n');
  });
});
