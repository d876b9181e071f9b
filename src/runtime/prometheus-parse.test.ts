/**
 * Our exposition read back by a parser from the ecosystem (parse-prometheus-text-format, a port of the Go
 * client's text parser): every family keeps its type, help and series, label values with quotes, backslashes and
 * newlines come back unchanged, and histograms come back as cumulative buckets with their sum and count.
 */
import { describe, expect, test } from "bun:test";
import parse from "parse-prometheus-text-format";
import { createRuntimeMetrics } from "./metrics.ts";
import { Registry } from "./prometheus.ts";

describe("the text exposition, parsed by parse-prometheus-text-format", () => {
  test("every family of the runtime metrics comes back with its type and help", () => {
    const m = createRuntimeMetrics();
    m.controller("webapp").reconciled("success", 0.2);
    m.workqueue("webapp").added();
    m.observeRequest({ code: "200", method: "GET", host: "127.0.0.1:6443", seconds: 0.004 });
    m.leaderStatus("webapp-operator-lock", true);
    const text = m.expose();
    const declared = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [
      name ?? "",
      (type ?? "").toUpperCase(),
    ]);
    const families = parse(text);
    expect(families.map((f) => [f.name, f.type])).toEqual(declared);
    for (const f of families) expect(f.help.length).toBeGreaterThan(0);
    const byName = new Map(families.map((f) => [f.name, f]));
    expect(byName.get("leader_election_master_status")?.metrics).toEqual([
      { value: "1", labels: { name: "webapp-operator-lock" } },
    ]);
    expect(byName.get("rest_client_requests_total")?.metrics).toEqual([
      { value: "1", labels: { code: "200", host: "127.0.0.1:6443", method: "GET" } },
    ]);
    const reconciles = byName.get("controller_runtime_reconcile_total")?.metrics ?? [];
    expect(reconciles.find((s) => s.labels?.result === "success")).toEqual({
      value: "1",
      labels: { controller: "webapp", result: "success" },
    });
  });

  test("label values with quotes, backslashes and newlines, and histograms, round-trip", () => {
    const r = new Registry();
    const tricky = 'a "quoted" C:\\path\nsecond line';
    r.counter({ name: "odd_total", help: "Help with a \\ backslash\nand a newline.", labelNames: ["v"] })
      .with({ v: tricky })
      .inc(3);
    const h = r.histogram({ name: "lat_seconds", help: "Latency.", buckets: [0.1, 1] }).with();
    for (const v of [0.05, 0.5, 5]) h.observe(v);
    // A labelled histogram's buckets (this parser keeps only the buckets of a labelled histogram's series).
    const byOp = r.histogram({ name: "op_seconds", help: "Per op.", labelNames: ["op"], buckets: [1] });
    byOp.with({ op: "get" }).observe(2);
    const [lat, odd, op] = parse(r.expose());
    expect(odd).toEqual({
      name: "odd_total",
      help: "Help with a \\ backslash\nand a newline.",
      type: "COUNTER",
      metrics: [{ value: "3", labels: { v: tricky } }],
    });
    expect(lat).toEqual({
      name: "lat_seconds",
      help: "Latency.",
      type: "HISTOGRAM",
      metrics: [{ buckets: { "0.1": "1", "1": "2", "+Inf": "3" }, sum: "5.55", count: "3" }],
    });
    expect(op?.metrics).toEqual([{ buckets: { "1": "0", "+Inf": "1" } }]);
  });
});
