/**
 * The production fields of a WebApp's pod template (issue #31 item 5) proven against the real kubelet, with nothing
 * pulled: the app is Debian's static busybox httpd in an image FROM scratch built here (_workloads.ts busyboxImage)
 * and imported into the node's containerd.
 * - healthCheck: the WebApp is Ready only once its path answers (the server writes it after a delay); a path that
 *   answers 404 keeps it not Ready, with the kubelet's "Readiness probe failed" event; a path that stops answering
 *   gets the container restarted by the liveness probe, within a bound computed from the probe's timings;
 * - env from a Secret and a ConfigMap (valueFrom, envFrom with a prefix) reaches the process (kubectl logs);
 * - podSecurity restricted: in a namespace enforcing Pod Security "restricted", such a WebApp's pods are admitted and
 *   Ready, and one without it gets no pods and reports the Deployment's ReplicaFailure with the PodSecurity reason.
 * The operator is the compiled devctl run beside the tests; pods reach the real node as in pod-failures.test.ts
 * (a MutatingAdmissionPolicy bound to the suite's namespaces alone). Traffic: only inside the cluster's namespace
 * (the kubelet's probes, kubectl exec/logs through the API server).
 *
 * Needs the real node; without it every test is skipped with the reason, which the runner turns into a failure on CI.
 */
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { importIntoRealNode } from "../cluster/nodes/real.ts";
import { ensurePrerequisites } from "../cluster/prereqs.ts";
import { kstatus } from "../kstatus/kstatus.ts";
import { startOperator, type OperatorProcess } from "../_operator.ts";
import {
  conditionOf,
  ensureCrd,
  eventsFor,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  NAMESPACES,
  PODS,
  tempNamespace,
  WEBAPPS,
  webapp,
  type WebAppLike,
} from "../_support.ts";
import { ctr, type PodLike, realNodeSuite } from "./_node.ts";
import { BUSYBOX, busyboxImage, routePodsToRealNode } from "./_workloads.ts";

const WITHIN_MS = 60_000;
const RUN = Math.random().toString(36).slice(2, 8);
const IMAGE = `devctl.local/busybox-httpd:${RUN}`;
const PORT = 8080;
const SERVE = `exec httpd -f -p ${PORT} -h /www`;
/** The ready app's server writes /www/healthz this long after its container starts. */
const HEALTHZ_AFTER_S = 8;
/** The liveness app: the path answers this long, then its file is removed; probes every PERIOD_S. */
const LIVE_FOR_S = 6;
const PERIOD_S = 2;
/** healthCheck failureThreshold 1: readiness fails at once, liveness after LIVENESS_FAILURE_FACTOR (3) failures. */
const LIVENESS_FAILURES = 3;
/**
 * From the liveness app's container start to its restart, at most: the path answers LIVE_FOR_S; the first probe
 * to fail comes within one period after, the third PERIOD_S * (LIVENESS_FAILURES - 1) later, each taking up to its
 * 1 s timeout; the shell traps TERM and exits at once; then the kubelet starts a new container (its first restart has
 * no back-off). 15 s of slack for a 2-core machine's kubelet and containerd.
 */
const RESTART_WITHIN_MS = (LIVE_FOR_S + PERIOD_S + PERIOD_S * (LIVENESS_FAILURES - 1) + 1 + 15) * 1000;
const RESTRICTED = {
  "pod-security.kubernetes.io/enforce": "restricted",
  "pod-security.kubernetes.io/enforce-version": "latest",
};

const { node, why: absentReason, realTest } = await realNodeSuite();

type Namespace = Awaited<ReturnType<typeof tempNamespace>>;
let ns: Namespace | undefined;
/** Enforces Pod Security "restricted". */
let restrictedNs: Namespace | undefined;
const unroute: (() => Promise<void>)[] = [];
let op: OperatorProcess | undefined;
let scratch: string | undefined;
const created: Record<string, number> = {};
const timings: Record<string, number> = {};

beforeAll(async () => {
  if (!node) return;
  if (!existsSync(BUSYBOX)) await ensurePrerequisites(["realNode"], (line) => console.error(line));
  scratch = mkdtempSync(join(tmpdir(), "devctl-busybox-"));
  const archive = busyboxImage(IMAGE, scratch);
  const imported = await importIntoRealNode(archive);
  if (!imported?.includes(IMAGE)) throw new Error(`importing ${archive} into the real node: ${imported}`);
  await ensureCrd();
  ns = await tempNamespace("realnode-prod");
  unroute.push(await routePodsToRealNode(ns.name));
  restrictedNs = await tempNamespace("realnode-restricted");
  // Enforcing first: the routing policy's check is then a dry-run pod that restricted admits once routed.
  await kube.patch(NAMESPACES, restrictedNs.name, undefined, { metadata: { labels: RESTRICTED } }, "merge");
  unroute.push(await routePodsToRealNode(restrictedNs.name));
  op = await startOperator(["--namespaces", `${ns.name},${restrictedNs.name}`, "--leader-elect=false"]);
}, 300_000);

afterAll(async () => {
  const code = await op?.stop();
  await ns?.drop();
  await restrictedNs?.drop();
  for (const drop of unroute) await drop();
  if (node) ctr(node, "images", "rm", IMAGE);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  console.error(`real-node production fields (ms): ${JSON.stringify(timings)}`);
  if (op) expect(code).toBe(0);
});

function nsOf(which: "plain" | "restricted"): string {
  const n = which === "plain" ? ns : restrictedNs;
  if (!n) throw new Error(`the real-node suite needs the local cluster's real node: ${absentReason}`);
  return n.name;
}

async function createApp(name: string, spec: Record<string, unknown>, where: "plain" | "restricted" = "plain") {
  created[name] = Date.now();
  const base = { replicas: 1, port: PORT, image: IMAGE, imagePullPolicy: "Never" };
  await kube.create(WEBAPPS, webapp(name, nsOf(where), { ...base, ...spec }));
}

type ContainerStatus = NonNullable<NonNullable<PodLike["status"]>["containerStatuses"]>[number] & {
  state?: { running?: { startedAt?: string } };
  lastState?: { terminated?: { exitCode?: number; startedAt?: string; finishedAt?: string } };
};

async function podsOfApp(name: string, where: "plain" | "restricted" = "plain"): Promise<PodLike[]> {
  return (await kube.list<PodLike>(PODS, { namespace: nsOf(where), labelSelector: `app=${name}` })).items;
}

const containerOf = (pod: PodLike | undefined) => pod?.status?.containerStatuses?.[0] as ContainerStatus | undefined;
const podReady = (pod: PodLike | undefined) => pod?.status?.conditions?.find((c) => c.type === "Ready");

/** Waits, WITHIN_MS from the app's creation, for `pick` to return something; the failure shows the app's state. */
async function within<T>(
  name: string,
  what: string,
  pick: (w: WebAppLike | undefined, pods: PodLike[]) => T | undefined | Promise<T | undefined>,
  where: "plain" | "restricted" = "plain",
): Promise<T> {
  const since = created[name] ?? Date.now();
  const state = async () => {
    const w = await getOrUndefined<WebAppLike>(WEBAPPS, name, nsOf(where));
    return { w, pods: await podsOfApp(name, where) };
  };
  return eventually(
    async () => {
      const { w, pods } = await state();
      return pick(w, pods);
    },
    Math.max(1_000, since + WITHIN_MS - Date.now()),
    `${name}: ${what} within ${WITHIN_MS / 1000} s of its creation`,
  ).catch(async (e: Error) => {
    const { w, pods } = await state();
    const events = pods.length ? await eventsFor(nsOf(where), pods[0]?.metadata.name ?? "") : [];
    throw new Error(
      `${e.message}\nconditions: ${JSON.stringify(w?.status?.conditions)}\n` +
        `pods: ${JSON.stringify(pods.map((p) => ({ node: p.spec.nodeName, status: p.status })))}\n` +
        `pod events: ${JSON.stringify(events.map((ev) => [ev.reason, ev.message]))}`,
    );
  });
}

/** The pod's first container once it runs, with the time it started (whole seconds, as the kubelet reports it). */
async function running(name: string, where: "plain" | "restricted" = "plain") {
  return within(
    name,
    "a pod with its container running",
    (_w, pods) => {
      const pod = pods.find((p) => containerOf(p)?.state?.running?.startedAt);
      const startedAt = Date.parse(containerOf(pod)?.state?.running?.startedAt ?? "");
      return pod && Number.isFinite(startedAt) ? { pod, startedAt } : undefined;
    },
    where,
  );
}

const exec = (pod: PodLike, where: "plain" | "restricted", ...argv: string[]) =>
  kubectl(["exec", "-n", nsOf(where), pod.metadata.name ?? "", "--", ...argv]);

const podEvents = async (pod: PodLike, where: "plain" | "restricted" = "plain") =>
  eventsFor(nsOf(where), pod.metadata.name ?? "");

describe("a WebApp's production fields on the real node", () => {
  realTest("healthCheck: Ready (kstatus Current) only once its path answers, not before", async () => {
    await createApp("ready", {
      healthCheck: { path: "/healthz" },
      command: ["/bin/sh", "-c", `sleep ${HEALTHZ_AFTER_S}; echo ok > /www/healthz; ${SERVE}`],
    });
    const { pod, startedAt } = await running("ready");
    expect(pod.spec.nodeName).toBe(node?.name);
    // startedAt is truncated to the second: the file appears at startedAt + HEALTHZ_AFTER_S at the earliest.
    const fileAt = startedAt + HEALTHZ_AFTER_S * 1000;
    if (Date.now() < fileAt - 2_000) expect(exec(pod, "plain", "test", "-e", "/www/healthz").code).not.toBe(0);
    const seen = new Set<string>();
    while (Date.now() < fileAt - 500) {
      const w = await getOrUndefined<WebAppLike>(WEBAPPS, "ready", nsOf("plain"));
      seen.add(`${conditionOf(w, "Ready")?.status}/${w ? (await kstatus([w]))[0]?.status : "absent"}`);
      await Bun.sleep(500);
    }
    expect([...seen].filter((s) => s.startsWith("True/") || s.endsWith("/Current"))).toEqual([]);
    expect(seen.size).toBeGreaterThan(0);
    const w = await within("ready", "Ready", (w) => (conditionOf(w, "Ready")?.status === "True" ? w : undefined));
    timings.readyAfterStart = Date.now() - startedAt;
    expect((await kstatus([w]))[0]?.status).toBe("Current");
    expect(w.status?.readyReplicas).toBe(1);
    const [now] = await podsOfApp("ready");
    const readySince = Date.parse(podReady(now)?.lastTransitionTime ?? "");
    expect(podReady(now)?.status).toBe("True");
    expect(readySince).toBeGreaterThanOrEqual(fileAt);
    // The path answers, from inside the pod's own network namespace.
    const get = exec(now ?? pod, "plain", "wget", "-qO-", `http://127.0.0.1:${PORT}/healthz`);
    expect(get.stdout.trim()).toBe("ok");
    expect(containerOf(now)?.restartCount).toBe(0);
    const events = await podEvents(now ?? pod);
    expect(events.filter((e) => e.reason === "Pulling")).toEqual([]);
  });

  realTest("healthCheck on a path that answers 404: Ready False within 60 s, pod running but not ready", async () => {
    await createApp("notfound", { healthCheck: { path: "/healthz" } }); // the image's httpd, /www empty
    const unhealthy = await within("notfound", "the kubelet's Unhealthy event for its pod", async (_w, pods) => {
      const pod = pods.find((p) => p.status?.phase === "Running");
      const events = pod ? await podEvents(pod) : [];
      // The first may be "connection refused", from before httpd listens: wait for the one that tells the 404.
      return events.find(
        (e) => e.reason === "Unhealthy" && e.message.startsWith("Readiness probe failed:") && e.message.includes("404"),
      );
    });
    timings.notfoundUnhealthyEvent = Date.now() - (created.notfound ?? 0);
    expect(unhealthy.type).toBe("Warning");
    expect(unhealthy.message).toContain("HTTP probe failed with statuscode: 404");
    const w = await within("notfound", "Ready False", (w) =>
      conditionOf(w, "Ready")?.status === "False" ? w : undefined,
    );
    expect(w.status?.readyReplicas ?? 0).toBe(0);
    expect((await kstatus([w]))[0]?.status).not.toBe("Current");
    const [pod] = await podsOfApp("notfound");
    expect(pod?.spec.nodeName).toBe(node?.name);
    expect(pod?.status?.phase).toBe("Running");
    expect(containerOf(pod)?.ready).toBe(false);
    expect(podReady(pod)?.status).toBe("False");
    console.error(`notfound conditions: ${JSON.stringify(w.status?.conditions)}`);
  });

  // The operator reads the kubelet's newest Unhealthy event of a pod its probe keeps unready (pod-failures.ts).
  realTest(
    "healthCheck on a path that answers 404: the WebApp's Ready or Degraded message names the failing readiness probe",
    async () => {
      if (!created.notfound) await createApp("notfound", { healthCheck: { path: "/healthz" } });
      // Its first failure may be "connection refused" (before httpd listens); the status follows the newest.
      const message = await within("notfound", 'Ready or Degraded saying "Readiness probe failed ... 404"', (w) =>
        ["Ready", "Degraded"]
          .map((t) => conditionOf(w, t)?.message ?? "")
          .find((m) => m.includes("Readiness probe failed") && m.includes("404")),
      );
      expect(message).toContain("container app: Readiness probe failed: HTTP probe failed with statuscode: 404");
    },
  );

  realTest("healthCheck liveness: a path that stops answering gets the container restarted in time", async () => {
    await createApp("liveness", {
      healthCheck: { path: "/healthz", periodSeconds: PERIOD_S, failureThreshold: 1 },
      command: [
        "/bin/sh",
        "-c",
        `trap 'exit 0' TERM; echo ok > /www/healthz; httpd -f -p ${PORT} -h /www & ` +
          `(sleep ${LIVE_FOR_S}; rm /www/healthz) & wait`,
      ],
    });
    const { pod, startedAt } = await running("liveness");
    expect(pod.spec.nodeName).toBe(node?.name);
    const restarted = await eventually(
      async () => {
        const [p] = await podsOfApp("liveness");
        return (containerOf(p)?.restartCount ?? 0) >= 1 ? p : undefined;
      },
      Math.max(1_000, startedAt + RESTART_WITHIN_MS - Date.now()),
      `liveness: a restart within ${RESTART_WITHIN_MS / 1000} s of its container's start`,
    );
    timings.livenessRestartAfterStart = Date.now() - startedAt;
    // Killed after the path stopped answering and LIVENESS_FAILURES probes failed, not before.
    const last = containerOf(restarted)?.lastState?.terminated;
    const ranMs = Date.parse(last?.finishedAt ?? "") - Date.parse(last?.startedAt ?? "");
    expect(ranMs).toBeGreaterThanOrEqual((LIVE_FOR_S + PERIOD_S * (LIVENESS_FAILURES - 1) - 1) * 1000);
    expect(last?.exitCode).toBe(0); // the shell's TERM trap: stopped by the kubelet, not crashed
    const events = await podEvents(restarted);
    expect(events.map((e) => e.message)).toContainEqual(
      expect.stringContaining("failed liveness probe, will be restarted"),
    );
    expect(events.map((e) => e.message)).toContainEqual(
      expect.stringMatching(/^Liveness probe failed: HTTP probe failed with statuscode: 404/),
    );
  });

  realTest("env from a Secret, a ConfigMap and envFrom with a prefix reaches the process", async () => {
    const secret = `s3cr3t-${RUN}`;
    const where = ["-n", nsOf("plain")];
    expect(
      kubectl(["create", "secret", "generic", "app-secret", ...where, `--from-literal=token=${secret}`]).code,
    ).toBe(0);
    expect(
      kubectl([
        "create",
        "configmap",
        "app-config",
        ...where,
        "--from-literal=greeting=hello",
        "--from-literal=MODE=prod",
      ]).code,
    ).toBe(0);
    await createApp("env", {
      env: [
        { name: "TOKEN", valueFrom: { secretKeyRef: { name: "app-secret", key: "token" } } },
        { name: "GREETING", valueFrom: { configMapKeyRef: { name: "app-config", key: "greeting" } } },
        { name: "PLAIN", value: "plain-value" },
      ],
      envFrom: [{ configMapRef: { name: "app-config" }, prefix: "CFG_" }],
      command: ["/bin/sh", "-c"],
      args: [`echo "TOKEN=$TOKEN GREETING=$GREETING PLAIN=$PLAIN CFG_MODE=$CFG_MODE"; ${SERVE}`],
    });
    await within("env", "Ready", (w) => (conditionOf(w, "Ready")?.status === "True" ? w : undefined));
    const [pod] = await podsOfApp("env");
    expect(pod?.spec.nodeName).toBe(node?.name);
    const logs = await eventually(
      () => {
        const r = kubectl(["logs", ...where, pod?.metadata.name ?? ""]);
        return r.code === 0 && r.stdout.includes("TOKEN=") ? r.stdout : undefined;
      },
      10_000,
      "the env app's log line",
    );
    expect(logs).toContain(`TOKEN=${secret} GREETING=hello PLAIN=plain-value CFG_MODE=prod`);
  });

  realTest(
    "env from a Secret that does not exist: Stalled CreateContainerConfigError naming it, with a Warning",
    async () => {
      await createApp("nosecret", {
        env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "missing-secret", key: "token" } } }],
      });
      const w = await within("nosecret", "Stalled CreateContainerConfigError", (w) =>
        conditionOf(w, "Stalled")?.reason === "CreateContainerConfigError" ? w : undefined,
      );
      expect(conditionOf(w, "Stalled")?.message).toContain('secret "missing-secret" not found');
      expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: "CreateContainerConfigError" });
      const events = await eventsOnceSeen(
        nsOf("plain"),
        "nosecret",
        (e) => e.type === "Warning" && e.reason === "CreateContainerConfigError",
        "the operator's Warning",
      );
      expect(events.some((e) => e.message.includes("missing-secret"))).toBe(true);
      // Created since: the kubelet starts the container, and the WebApp turns Ready.
      const where = ["-n", nsOf("plain")];
      expect(kubectl(["create", "secret", "generic", "missing-secret", ...where, "--from-literal=token=x"]).code).toBe(
        0,
      );
      created.nosecret = Date.now(); // within 60 s of the Secret's creation
      await within("nosecret", "Ready once the Secret exists", (w) =>
        conditionOf(w, "Ready")?.status === "True" ? w : undefined,
      );
    },
  );

  realTest("podSecurity restricted: admitted and Ready where Pod Security enforces restricted", async () => {
    await createApp(
      "locked",
      {
        podSecurity: "restricted",
        healthCheck: { path: "/healthz" },
        command: ["/bin/sh", "-c", `echo ok > /www/healthz; ${SERVE}`],
      },
      "restricted",
    );
    const w = await within(
      "locked",
      "Ready",
      (w) => (conditionOf(w, "Ready")?.status === "True" ? w : undefined),
      "restricted",
    );
    timings.lockedReady = Date.now() - (created.locked ?? 0);
    expect((await kstatus([w]))[0]?.status).toBe("Current");
    const [pod] = await podsOfApp("locked", "restricted");
    expect(pod?.spec.nodeName).toBe(node?.name);
    const spec = pod?.spec as PodLike["spec"] & { securityContext?: Record<string, unknown> };
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } });
    expect(spec.containers[0]?.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    // The image's numeric non-root user is what satisfies runAsNonRoot (nothing sets runAsUser).
    expect(exec(pod as PodLike, "restricted", "id", "-u").stdout.trim()).toBe("65535");
  });

  realTest(
    "without podSecurity there: no pods, and the WebApp reports ReplicaFailure with the PodSecurity reason",
    async () => {
      await createApp("open", { command: ["/bin/sh", "-c", SERVE] }, "restricted");
      const w = await within(
        "open",
        "Stalled ReplicaFailure",
        (w) => (conditionOf(w, "Stalled")?.reason === "ReplicaFailure" ? w : undefined),
        "restricted",
      );
      timings.openReplicaFailure = Date.now() - (created.open ?? 0);
      const message = conditionOf(w, "Stalled")?.message ?? "";
      expect(message).toStartWith("Deployment open-deployment cannot create pods: ");
      expect(message).toContain('violates PodSecurity "restricted:latest"');
      expect(message).toContain("allowPrivilegeEscalation != false");
      expect(message).toContain("runAsNonRoot != true");
      expect(conditionOf(w, "Ready")).toMatchObject({ status: "False", reason: "ReplicaFailure" });
      expect(conditionOf(w, "Degraded")).toMatchObject({ status: "True", reason: "ReplicaFailure" });
      expect((await kstatus([w]))[0]?.status).toBe("Failed");
      expect(await podsOfApp("open", "restricted")).toEqual([]);
    },
  );
});
