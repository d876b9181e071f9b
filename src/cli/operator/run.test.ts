import { describe, expect, test } from "bun:test";
import run, { metricsSecurity } from "./run.ts";

const defaults = {
  "metrics-secure": true,
  "enable-http2": false,
  "metrics-bind-address": ":8443",
  "health-probe-bind-address": ":8081",
};

describe("operator run's metrics flags", () => {
  test("by default /metrics is secure on :8443, HTTP/1.1 only, with a self-signed certificate", () => {
    const args = run.args as Record<string, { default?: unknown }>;
    expect([args["metrics-bind-address"]?.default, args["metrics-secure"]?.default]).toEqual([":8443", true]);
    expect(args["enable-http2"]?.default).toBe(false);
    expect(metricsSecurity(defaults)).toEqual({ metricsSecurity: { http2: false } });
  });

  test("--metrics-cert-dir and --enable-http2 are passed on", () => {
    expect(metricsSecurity({ ...defaults, "metrics-cert-dir": "/certs", "enable-http2": true })).toEqual({
      metricsSecurity: { certDir: "/certs", http2: true },
    });
  });

  test("--metrics-secure=false is plain HTTP, and refuses the flags only HTTPS uses", () => {
    const plain = { ...defaults, "metrics-secure": false };
    expect(metricsSecurity(plain)).toEqual({});
    expect(() => metricsSecurity({ ...plain, "metrics-cert-dir": "/certs" })).toThrow(
      "--metrics-cert-dir needs --metrics-secure",
    );
    expect(() => metricsSecurity({ ...plain, "enable-http2": true })).toThrow("--enable-http2 needs --metrics-secure");
  });

  test("secure metrics cannot share the probes' address; port 0 (any free port) can be given to both", () => {
    const same = { ...defaults, "metrics-bind-address": ":9000", "health-probe-bind-address": ":9000" };
    expect(() => metricsSecurity(same)).toThrow(/both :9000: secure metrics \(HTTPS\) and the plain-HTTP probes/);
    expect(metricsSecurity({ ...same, "metrics-secure": false })).toEqual({});
    const anyPort = { ...defaults, "metrics-bind-address": "127.0.0.1:0", "health-probe-bind-address": "127.0.0.1:0" };
    expect(metricsSecurity(anyPort)).toEqual({ metricsSecurity: { http2: false } });
  });
});
