/**
 * A new WebApp shows a status at once (issue #30, 3): on an idle operator every new WebApp carries a status within
 * 1 s of its creation — observedGeneration ≥ 1, status.selector (which an HPA reads through the scale subresource),
 * and, as kstatus has it, Ready True or Reconciling/Stalled True, with a reason and a message — and its first Event
 * is visible within 1 s. Two WebApps: one in a namespace whose LimitRange gives every container a request for 100k
 * CPUs, so its pods stay Pending (unschedulable) and it is never Ready; and an ordinary one with ORDINARY_REPLICAS
 * pods, which the KWOK node runs within seconds. Times are measured locally, from just before the create to the
 * watch event that showed the status or the Event.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { KubeObject } from "../src/kube/types.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import {
  conditionOf,
  ensureCrd,
  EVENTS,
  eventually,
  kube,
  PODS,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";
import { type EventWatch, type Seen, watchEvents } from "./_watch.ts";

const WITHIN_MS = 1_000;
/** How long the test waits for a status or an Event at all (to report how late they were). */
const REPORT_MS = 20_000;
/** Enough pods that the KWOK node takes a few seconds to run them all: a first status cannot wait for Ready. */
const ORDINARY_REPLICAS = 100;
const LIMIT_RANGES = { group: "", version: "v1", plural: "limitranges", kind: "LimitRange", namespaced: true };

type Status = NonNullable<WebAppLike["status"]> & { selector?: string };
interface EventLike extends KubeObject {
  reason: string;
  message: string;
  involvedObject: { name: string };
}

let plain: Awaited<ReturnType<typeof tempNamespace>>;
let pending: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;
const watches: EventWatch[] = [];
/** By "namespace/name": when the first status that shows the operator at work arrived, and that status. */
const firstStatus = new Map<string, { at: number; status: Status }>();
/** By "namespace/name": the last status seen, and when (to tell what a late WebApp showed meanwhile). */
const lastStatus = new Map<string, { at: number; status: Status | undefined }>();
/** By "namespace/name" of the involved object: when its first Event arrived, and the Event. */
const firstEvent = new Map<string, { at: number; event: EventLike }>();

/**
 * A status of the operator's: for the generation, with the selector, and saying what holds as kstatus does — Ready
 * True, or Reconciling or Stalled True — with a reason and a message.
 */
function shows(status: Status | undefined): boolean {
  if (!status || (status.observedGeneration ?? 0) < 1 || !status.selector) return false;
  const wa = { status } as WebAppLike;
  const on = ["Ready", "Reconciling", "Stalled"].map((t) => conditionOf(wa, t)).find((c) => c?.status === "True");
  return !!on?.reason && !!on.message;
}

function onWebApp(e: Seen<WebAppLike>): void {
  const key = `${e.object.metadata.namespace}/${e.object.metadata.name}`;
  lastStatus.set(key, { at: e.at, status: e.object.status as Status | undefined });
  if (e.type !== "DELETED" && !firstStatus.has(key) && shows(e.object.status as Status))
    firstStatus.set(key, { at: e.at, status: e.object.status as Status });
}

function onEvent(e: Seen<EventLike>): void {
  const key = `${e.object.metadata.namespace}/${e.object.involvedObject.name}`;
  if (e.type === "ADDED" && !firstEvent.has(key)) firstEvent.set(key, { at: e.at, event: e.object });
}

/** Waits until the operator's reconcile count has not moved for 1 s: an idle operator. */
async function idle(): Promise<void> {
  let last = await op.counter("controller_runtime_reconcile_total");
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    await Bun.sleep(1000);
    const now = await op.counter("controller_runtime_reconcile_total");
    if (now === last) return;
    last = now;
  }
  throw new Error("the operator kept reconciling for 20 s with nothing changing");
}

beforeAll(async () => {
  await ensureCrd();
  plain = await tempNamespace("first-status");
  pending = await tempNamespace("first-status-pending");
  await kube.create(LIMIT_RANGES, {
    apiVersion: "v1",
    kind: "LimitRange",
    metadata: { name: "unschedulable", namespace: pending.name },
    spec: { limits: [{ type: "Container", defaultRequest: { cpu: "100k" }, default: { cpu: "100k" } }] },
  });
  for (const n of [plain.name, pending.name]) {
    watches.push(await watchEvents<WebAppLike>(WEBAPPS, n, onWebApp));
    watches.push(await watchEvents<EventLike>(EVENTS, n, onEvent));
  }
  op = await startOperator(["--namespaces", `${plain.name},${pending.name}`, "--leader-elect=false"]);
});

afterAll(async () => {
  for (const w of watches) w.stop();
  const code = await op?.stop();
  await plain?.drop();
  await pending?.drop();
  expect(code).toBe(0);
});

/** Creates the WebApp on an idle operator; how long until its first status and its first Event (ms, or undefined). */
async function timesToFirst(namespace: string, name: string, replicas: number) {
  await idle();
  const key = `${namespace}/${name}`;
  const start = performance.now();
  await kube.create(WEBAPPS, webapp(name, namespace, { image: "nginx:1.25", replicas, port: 80 }));
  const within = (m: Map<string, { at: number }>) =>
    eventually(() => m.get(key), REPORT_MS, `${key}: ${m === firstStatus ? "a status" : "an Event"}`).then(
      (f) => Math.round(f.at - start),
      () => undefined,
    );
  const [statusMs, eventMs] = await Promise.all([within(firstStatus), within(firstEvent)]);
  const s = firstStatus.get(key)?.status;
  const e = firstEvent.get(key)?.event;
  const said = (s?.conditions ?? [])
    .filter((c) => ["Ready", "Reconciling", "Stalled"].includes(c.type))
    .map((c) => `${c.type}=${c.status} ${c.reason}: "${c.message}"`)
    .join(", ");
  console.error(
    `[first-status] ${key} (${replicas} replicas): first status after ${statusMs ?? `> ${REPORT_MS}`} ms (${said}); ` +
      `first Event after ${eventMs ?? `> ${REPORT_MS}`} ms (${e?.reason}: ${e?.message})`,
  );
  if (statusMs === undefined) {
    const last = lastStatus.get(key);
    console.error(
      `[first-status] ${key}: last status seen (${Math.round((last?.at ?? start) - start)} ms): ${JSON.stringify(last?.status)}`,
    );
  }
  return { statusMs, eventMs, status: s };
}

describe("a new WebApp shows a status at once", () => {
  test(`one whose pods cannot be scheduled: a status saying it is not Ready yet, and its first Event, within ${WITHIN_MS} ms`, async () => {
    const { statusMs, eventMs, status } = await timesToFirst(pending.name, "unschedulable", 5);
    expect({
      statusInTime: statusMs !== undefined && statusMs <= WITHIN_MS,
      eventInTime: eventMs !== undefined && eventMs <= WITHIN_MS,
      ready: conditionOf({ status } as WebAppLike, "Ready")?.status,
      inProgress: ["Reconciling", "Stalled"].some((t) => conditionOf({ status } as WebAppLike, t)?.status === "True"),
      selector: status?.selector,
    }).toEqual({
      statusInTime: true,
      eventInTime: true,
      ready: "False",
      inProgress: true,
      selector: "app=unschedulable,managed-by=webapp-operator",
    });
  });

  test("(its pods really are unschedulable: Pending, and the WebApp is not Ready)", async () => {
    const pods = await eventually(
      async () => {
        const list = await kube.list<KubeObject & { status?: { phase?: string } }>(PODS, {
          namespace: pending.name,
          labelSelector: "app=unschedulable",
        });
        return list.items.length === 5 ? list.items : undefined;
      },
      10_000,
      "the 5 pods of unschedulable",
    );
    expect(pods.map((p) => p.status?.phase)).toEqual(Array(5).fill("Pending"));
    const w = await kube.get<WebAppLike>(WEBAPPS, "unschedulable", pending.name);
    expect(conditionOf(w, "Ready")?.status).toBe("False");
  });

  test(`an ordinary one of ${ORDINARY_REPLICAS} replicas: a status and its first Event within ${WITHIN_MS} ms`, async () => {
    const { statusMs, eventMs, status } = await timesToFirst(plain.name, "ordinary", ORDINARY_REPLICAS);
    expect({
      statusInTime: statusMs !== undefined && statusMs <= WITHIN_MS,
      eventInTime: eventMs !== undefined && eventMs <= WITHIN_MS,
      selector: status?.selector,
    }).toEqual({ statusInTime: true, eventInTime: true, selector: "app=ordinary,managed-by=webapp-operator" });
  });
});
