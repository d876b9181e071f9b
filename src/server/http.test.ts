import { afterEach, describe, expect, test } from "bun:test";
import type { RunningServer } from "./http.ts";
import { startServer } from "./http.ts";

let running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.stop()));
  running = [];
});

function start(overrides: Partial<Parameters<typeof startServer>[0]> = {}): RunningServer {
  const s = startServer({
    hostname: "127.0.0.1",
    port: 0,
    healthz: () => true,
    readyz: () => true,
    metrics: () => "# HELP up Up.\n# TYPE up gauge\nup 1\n",
    ...overrides,
  });
  running.push(s);
  return s;
}

describe("http server", () => {
  test("port 0 picks a free port and the url names it", () => {
    const s = start();
    expect(s.port).toBeGreaterThan(0);
    expect(s.url).toBe(`http://127.0.0.1:${s.port}`);
  });

  test("healthz and readyz answer 200 ok when their probes pass", async () => {
    const s = start();
    for (const path of ["/healthz", "/readyz"]) {
      const res = await fetch(`${s.url}${path}`);
      expect([res.status, await res.text()]).toEqual([200, "ok"]);
    }
  });

  test("readyz answers 500 with the reason while not ready, then 200 once ready", async () => {
    let reason: true | string = "informer for webapps has not synced";
    const s = start({ readyz: () => reason });
    let res = await fetch(`${s.url}/readyz`);
    expect([res.status, await res.text()]).toEqual([500, "informer for webapps has not synced"]);
    reason = true;
    res = await fetch(`${s.url}/readyz`);
    expect(res.status).toBe(200);
  });

  test("a probe that throws answers 500 with its message", async () => {
    const s = start({
      healthz: () => {
        throw new Error("watch loop is dead");
      },
    });
    const res = await fetch(`${s.url}/healthz`);
    expect([res.status, await res.text()]).toEqual([500, "healthz check failed: watch loop is dead"]);
  });

  test("metrics are served in the Prometheus text format 0.0.4", async () => {
    let scrapes = 0;
    const s = start({ metrics: () => `up ${++scrapes}\n` });
    const res = await fetch(`${s.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(await res.text()).toBe("up 1\n");
    expect(await (await fetch(`${s.url}/metrics`)).text()).toBe("up 2\n");
  });

  test("an exposition in chunks is streamed whole; a collector that fails at once is a 500 with its message", async () => {
    const s = start({
      metrics: function* () {
        for (let i = 0; i < 3000; i++) yield `series{i="${i}"} ${i}\n`;
      },
    });
    const text = await (await fetch(`${s.url}/metrics`)).text();
    expect(text.split("\n").filter(Boolean).length).toBe(3000);
    expect(text.endsWith('series{i="2999"} 2999\n')).toBe(true);
    const failing = start({
      metrics: function* () {
        const lines: string[] = [];
        if (lines.length === 0) throw new Error("cache gone");
        yield* lines;
      },
    });
    const res = await fetch(`${failing.url}/metrics`);
    expect([res.status, await res.text()]).toEqual([500, "collecting metrics failed: cache gone"]);
  });

  test("a long exposition lets timers and I/O run between its chunks", async () => {
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const s = start({
      metrics: function* () {
        for (let i = 0; i < 40; i++) {
          busy(3); // a chunk of a large cache's series
          yield `series{i="${i}"} ${i}\n`;
        }
      },
    });
    let last = performance.now();
    let longest = 0;
    const ticks = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    try {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      expect(text.split("\n").filter(Boolean).length).toBe(40);
    } finally {
      clearInterval(ticks);
    }
    expect(longest).toBeLessThan(40); // 120 ms of chunks in one go before each chunk waited its turn
  });

  test("name[] asks for only those families; without it every one", async () => {
    const asked: (string[] | undefined)[] = [];
    const s = start({
      metrics: (only) => {
        asked.push(only ? [...only].sort() : undefined);
        return "up 1\n";
      },
    });
    await fetch(`${s.url}/metrics?name[]=workqueue_depth&name[]=controller_runtime_reconcile_total`);
    await fetch(`${s.url}/metrics`);
    expect(asked).toEqual([["controller_runtime_reconcile_total", "workqueue_depth"], undefined]);
  });

  test("unknown paths get 404, other methods 405, HEAD no body", async () => {
    const s = start();
    expect((await fetch(`${s.url}/nope`)).status).toBe(404);
    const post = await fetch(`${s.url}/healthz`, { method: "POST" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    const head = await fetch(`${s.url}/readyz`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  test("a port already in use is reported with what to do", () => {
    const s = start();
    expect(() =>
      startServer({ hostname: "127.0.0.1", port: s.port, healthz: () => true, readyz: () => true, metrics: () => "" }),
    ).toThrow(/cannot listen on 127\.0\.0\.1:\d+ .*choose a free port/);
  });

  test("stop closes the listener", async () => {
    const s = start();
    await s.stop();
    running = [];
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
  });
});

test("without a metrics callback /metrics is 404 and says where metrics are", async () => {
  const s = startServer({ hostname: "127.0.0.1", port: 0, healthz: () => true, readyz: () => true });
  try {
    const res = await fetch(`${s.url}/metrics`);
    expect([res.status, await res.text()]).toEqual([
      404,
      "not found: /metrics is served over HTTPS on the metrics address\n",
    ]);
    expect(await (await fetch(`${s.url}/nope`)).text()).toBe("not found; try /healthz, /readyz\n");
  } finally {
    await s.stop();
  }
});
