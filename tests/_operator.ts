/**
 * Runs the compiled operator (`dist/devctl operator run`) as a child process for end-to-end suites,
 * on free loopback ports, and reads its /metrics: API writes are counted from its own
 * rest_client_requests_total, so "zero writes" is measured where it happens.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { DEVCTL, ensureCrd, eventually, kubeconfig, tempNamespace } from "./_support.ts";

export interface OperatorProcess {
  proc: ReturnType<typeof Bun.spawn>;
  metricsUrl: string;
  /** Everything the operator logged so far (JSON lines). */
  logs(): string;
  metricsText(): Promise<string>;
  /** Sum of rest_client_requests_total over methods other than GET. */
  writes(): Promise<number>;
  /** Sum of a counter family, optionally filtered by a label substring. */
  counter(name: string, labelFilter?: string): Promise<number>;
  ready(): Promise<boolean>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export async function freePort(): Promise<number> {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

const knowsFlag = new Map<string, boolean>();
/** Whether this build of `devctl operator run` has --metrics-secure (its help says so). */
function knowsMetricsSecure(binary: string): boolean {
  let known = knowsFlag.get(binary);
  if (known === undefined) {
    const help = Bun.spawnSync([binary, "operator", "run", "--help"], { stdout: "pipe", stderr: "pipe" });
    known = help.stdout.toString().includes("--metrics-secure");
    knowsFlag.set(binary, known);
  }
  return known;
}

export async function startOperator(
  args: string[],
  opts: { env?: Record<string, string>; waitReady?: boolean; binary?: string } = {},
): Promise<OperatorProcess> {
  const port = await freePort();
  const metricsUrl = `http://127.0.0.1:${port}`;
  let out = "";
  const proc = Bun.spawn(
    [
      opts.binary ?? DEVCTL,
      "operator",
      "run",
      "--kubeconfig",
      kubeconfig,
      "--metrics-bind-address",
      `127.0.0.1:${port}`,
      "--health-probe-bind-address",
      `127.0.0.1:${port}`,
      // Plain HTTP on loopback, probes and scrapes on one port: these suites measure the operator, not its auth.
      // A release from before secure metrics (upgrade.test.ts) has no such flag and serves plain HTTP anyway.
      ...(knowsMetricsSecure(opts.binary ?? DEVCTL) ? ["--metrics-secure=false"] : []),
      "--log-format",
      "json",
      ...args,
    ],
    { stdout: "pipe", stderr: "pipe", env: { ...process.env, ...opts.env } },
  );
  const drain = async (s: ReadableStream<Uint8Array>) => {
    const d = new TextDecoder();
    for await (const c of s) out += d.decode(c, { stream: true });
  };
  void drain(proc.stdout as ReadableStream<Uint8Array>);
  void drain(proc.stderr as ReadableStream<Uint8Array>);
  const metricsText = async () => (await fetch(`${metricsUrl}/metrics`)).text();
  const counter = async (name: string, labelFilter?: string) => {
    let sum = 0;
    for (const line of (await metricsText()).split("\n")) {
      if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
      if (labelFilter && !line.includes(labelFilter)) continue;
      sum += Number(line.split(" ").at(-1));
    }
    return sum;
  };
  const op: OperatorProcess = {
    proc,
    metricsUrl,
    logs: () => out,
    metricsText,
    counter,
    async writes() {
      let sum = 0;
      for (const line of (await metricsText()).split("\n")) {
        if (line.startsWith("rest_client_requests_total{") && !line.includes('method="GET"'))
          sum += Number(line.split(" ").at(-1));
      }
      return sum;
    },
    async ready() {
      try {
        return (await fetch(`${metricsUrl}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return proc.exited;
    },
  };
  if (opts.waitReady !== false) {
    await eventually(
      async () => {
        if (proc.exitCode !== null) throw new Error(`operator exited with ${proc.exitCode}: ${out}`);
        return op.ready();
      },
      60_000,
      "the operator to be ready",
    );
  }
  return op;
}

/**
 * The usual set-up of a test file: the CRD installed, a new namespace and an operator watching only it (no leader
 * election), both gone after the file's tests, the operator's exit code checked (0 on SIGTERM). Returns the
 * namespace, whose name is known once the tests run.
 */
export function operatorForFile(prefix: string): { readonly name: string } {
  let ns: Awaited<ReturnType<typeof tempNamespace>> | undefined;
  let op: OperatorProcess | undefined;
  beforeAll(async () => {
    await ensureCrd();
    ns = await tempNamespace(prefix);
    op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
  });
  afterAll(async () => {
    const code = await op?.stop();
    await ns?.drop();
    expect(code).toBe(0);
  });
  return {
    get name() {
      if (!ns) throw new Error(`operatorForFile("${prefix}"): its namespace exists once the file's tests run`);
      return ns.name;
    },
  };
}
