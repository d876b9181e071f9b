import { describe, expect, test } from "bun:test";
import type { WebAppObject, WebAppStatus } from "../api/webapp.ts";
import { createFakeClock } from "../runtime/clock.ts";
import type { SourceEvent } from "../runtime/source.ts";
import { ECHO_TTL_MS, StatusEchoes } from "./status-echo.ts";

const ready: WebAppStatus = {
  observedGeneration: 1,
  replicas: 1,
  readyReplicas: 1,
  availableReplicas: 1,
  conditions: [
    { type: "Ready", status: "True", reason: "Ready", message: "ok", lastTransitionTime: "2026-12-01T00:00:00Z" },
  ],
};
function webapp(status?: WebAppStatus, meta: Partial<WebAppObject["metadata"]> = {}): WebAppObject {
  return {
    apiVersion: "apps.example.com/v1",
    kind: "WebApp",
    metadata: { name: "a", namespace: "ns", uid: "u1", generation: 1, labels: { team: "x" }, ...meta },
    spec: { image: "nginx:1", port: 80 },
    ...(status ? { status } : {}),
  } as WebAppObject;
}
const update = (old: WebAppObject, object: WebAppObject): SourceEvent<WebAppObject> => ({
  type: "update",
  old,
  object,
});

function writing() {
  const clock = createFakeClock();
  const echoes = new StatusEchoes(clock);
  const before = webapp();
  echoes.writing(before, ready);
  return { clock, echoes, before };
}

describe("status echoes", () => {
  test("the update that carries exactly the status just written is an echo, once", () => {
    const { echoes, before } = writing();
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(true);
    // Someone writing the same status again later is reconciled.
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(false);
  });

  test("an update with another status, another generation or other metadata is not an echo", () => {
    const { echoes, before } = writing();
    const other = { ...ready, readyReplicas: 0 };
    expect(echoes.isEcho(update(before, webapp(other)))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready, { generation: 2 })))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready, { labels: { team: "y" } })))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready, { annotations: { a: "b" } })))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready, { deletionTimestamp: "2026-12-01T00:00:01Z" })))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready, { finalizers: ["f"] })))).toBe(false);
    // None of those consumed the entry: the real echo still is one.
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(true);
  });

  test("adds, deletes and another incarnation (new uid) are never echoes", () => {
    const { echoes, before } = writing();
    expect(echoes.isEcho({ type: "add", object: webapp(ready) })).toBe(false);
    expect(echoes.isEcho({ type: "delete", object: webapp(ready) })).toBe(false);
    expect(echoes.isEcho(update(webapp(undefined, { uid: "u2" }), webapp(ready, { uid: "u2" })))).toBe(false);
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(true);
  });

  test("a write that failed is forgotten: an update carrying that status is someone else's and is reconciled", () => {
    const { echoes, before } = writing();
    echoes.failed(before);
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(false);
  });

  test("a write whose echo never came is forgotten after ECHO_TTL_MS", async () => {
    const { clock, echoes, before } = writing();
    await clock.advance(ECHO_TTL_MS + 1);
    expect(echoes.isEcho(update(before, webapp(ready)))).toBe(false);
  });
});
