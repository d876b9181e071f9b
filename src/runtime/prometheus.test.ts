import { describe, expect, test } from "bun:test";
import { Registry } from "./prometheus.ts";

describe("Registry exposition (text format 0.0.4)", () => {
  test("counters and gauges print HELP, TYPE and sorted series with sorted label pairs", () => {
    const r = new Registry();
    const c = r.counter({ name: "jobs_total", help: "Jobs done.", labelNames: ["queue", "result"] });
    c.with({ result: "ok", queue: "b" }).inc();
    c.with({ result: "ok", queue: "a" }).inc(2);
    c.with({ result: "error", queue: "a" }).inc();
    r.gauge({ name: "temperature", help: "Degrees." }).with().set(-1.5);
    expect(r.expose()).toBe(
      [
        "# HELP jobs_total Jobs done.",
        "# TYPE jobs_total counter",
        'jobs_total{queue="a",result="error"} 1',
        'jobs_total{queue="a",result="ok"} 2',
        'jobs_total{queue="b",result="ok"} 1',
        "# HELP temperature Degrees.",
        "# TYPE temperature gauge",
        "temperature -1.5",
        "",
      ].join("\n"),
    );
  });

  test("histograms print cumulative buckets with le last, then _sum and _count", () => {
    const r = new Registry();
    const h = r.histogram({ name: "latency_seconds", help: "Latency.", labelNames: ["op"], buckets: [0.1, 1] });
    const get = h.with({ op: "get" });
    get.observe(0.05);
    get.observe(0.1);
    get.observe(0.5);
    get.observe(7);
    expect(r.expose()).toBe(
      [
        "# HELP latency_seconds Latency.",
        "# TYPE latency_seconds histogram",
        'latency_seconds_bucket{op="get",le="0.1"} 2',
        'latency_seconds_bucket{op="get",le="1"} 3',
        'latency_seconds_bucket{op="get",le="+Inf"} 4',
        'latency_seconds_sum{op="get"} 7.65',
        'latency_seconds_count{op="get"} 4',
        "",
      ].join("\n"),
    );
  });

  test("label values escape backslash, quote and newline; HELP escapes backslash and newline", () => {
    const r = new Registry();
    r.counter({ name: "odd_total", help: 'a \\ b\n"c"', labelNames: ["v"] })
      .with({ v: 'x\\y"z\nw' })
      .inc();
    expect(r.expose()).toBe(
      ['# HELP odd_total a \\\\ b\\n"c"', "# TYPE odd_total counter", 'odd_total{v="x\\\\y\\"z\\nw"} 1', ""].join("\n"),
    );
  });

  test("unlabelled families show 0 from registration; labelled ones only once touched", () => {
    const r = new Registry();
    r.counter({ name: "a_total", help: "A." });
    r.counter({ name: "b_total", help: "B.", labelNames: ["x"] });
    expect(r.expose()).toBe("# HELP a_total A.\n# TYPE a_total counter\na_total 0\n");
  });

  test("special values print as Prometheus spells them", () => {
    const r = new Registry();
    const g = r.gauge({ name: "g", help: "G.", labelNames: ["k"] });
    g.with({ k: "a" }).set(Number.NaN);
    g.with({ k: "b" }).set(Number.POSITIVE_INFINITY);
    g.with({ k: "c" }).set(Number.NEGATIVE_INFINITY);
    expect(r.expose().split("\n").slice(2, 5)).toEqual(['g{k="a"} NaN', 'g{k="b"} +Inf', 'g{k="c"} -Inf']);
  });

  test("scrape hooks run before each exposition and can be removed", () => {
    const r = new Registry();
    const g = r.gauge({ name: "now", help: "Now." }).with();
    let n = 0;
    const off = r.onScrape(() => g.set(++n));
    expect(r.expose()).toContain("now 1\n");
    expect(r.expose()).toContain("now 2\n");
    off();
    expect(r.expose()).toContain("now 2\n");
  });

  test("a collected family prints what its collector emits at each scrape, and nothing once it emits none", () => {
    const r = new Registry();
    let apps = ["b", "a"];
    r.collected({ name: "app_info", help: "One per app.", labelNames: ["name", "image"] }, () =>
      apps.map((a) => [{ image: `img:${a}`, name: a }, 1] as const),
    );
    expect(r.expose()).toBe(
      '# HELP app_info One per app.\n# TYPE app_info gauge\napp_info{image="img:b",name="b"} 1\napp_info{image="img:a",name="a"} 1\n',
    );
    apps = [];
    expect(r.expose()).toBe("");
    apps = ["c"];
    expect(r.expose()).toContain('app_info{image="img:c",name="c"} 1');
    r.collected({ name: "wrong", help: "x", labelNames: ["a"] }, () => [[{ b: "1" }, 1]]);
    expect(() => r.expose()).toThrow(/takes labels \[a\]/);
  });

  test("only the families asked for; a collected family left out is not computed", () => {
    const r = new Registry();
    r.counter({ name: "a_total", help: "A." });
    r.gauge({ name: "b", help: "B." });
    let collected = 0;
    r.collected({ name: "c", help: "C.", labelNames: ["i"] }, () => {
      collected++;
      return [[{ i: "1" }, 1]];
    });
    const text = [...r.exposeChunks(new Set(["b"]))].join("");
    expect(text).toBe("# HELP b B.\n# TYPE b gauge\nb 0\n");
    expect(collected).toBe(0);
  });

  test("the exposition comes in chunks of whole lines, a large collected family in several", () => {
    const r = new Registry();
    r.counter({ name: "c_total", help: "C." });
    r.collected({ name: "many", help: "Many.", labelNames: ["i"] }, function* () {
      for (let i = 0; i < 2500; i++) yield [{ i: String(i) }, i];
    });
    const chunks = [...r.exposeChunks()];
    expect(chunks.length).toBe(4); // c_total, then 2 + 2500 lines of "many" in pieces of 1000
    expect(chunks.every((c) => c.endsWith("\n"))).toBe(true);
    expect(chunks.join("")).toBe(r.expose());
    expect(
      r
        .expose()
        .split("\n")
        .filter((l) => l.startsWith("many{")).length,
    ).toBe(2500);
  });

  test("misuse throws: wrong labels, duplicate names, decreasing counters, bad buckets", () => {
    const r = new Registry();
    const c = r.counter({ name: "c_total", help: "C.", labelNames: ["a"] });
    expect(() => c.with({ b: "1" })).toThrow(/takes labels \[a\]/);
    expect(() => c.with({ a: "1", b: "2" })).toThrow(RangeError);
    expect(() => c.with({ a: "1" }).inc(-1)).toThrow(/cannot decrease/);
    expect(() => r.counter({ name: "c_total", help: "again" })).toThrow(/already registered/);
    expect(() => r.gauge({ name: "bad-name", help: "x" })).toThrow(/invalid metric name/);
    expect(() => r.histogram({ name: "h", help: "x", buckets: [1, 1] })).toThrow(/strictly increasing/);
    expect(() => r.histogram({ name: "h2", help: "x", labelNames: ["le"], buckets: [1] })).toThrow(/reserved/);
  });
});
