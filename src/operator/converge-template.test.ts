/**
 * Removing a pod-template field of issue #31 from a WebApp reaches its Deployment: convergeChild sees the dropped
 * field through our template-fields annotation (diff.ts), hands the create's ownership over to apply (without
 * which the apply would prune nothing the create set), and applies the intent without the field. Over the
 * in-memory API server, asserting the requests it received.
 */
import { describe, expect, test } from "bun:test";
import { parseWebApp } from "../api/parse.ts";
import { DEPLOYMENT_RESOURCE, type WebApp } from "../api/webapp.ts";
import type { KubeObject } from "../kube/types.ts";
import { realClock } from "../runtime/clock.ts";
import type { EventRecorder } from "../runtime/events.ts";
import { createFakeApiServer } from "./_fake-apiserver.ts";
import { type Child, type ConvergeContext, convergeChild } from "./converge.ts";
import { desiredDeployment } from "./desired.ts";
import { TEMPLATE_FIELDS_ANNOTATION } from "./desired-template.ts";

function app(spec: Record<string, unknown>): WebApp {
  const parsed = parseWebApp({ metadata: { name: "shop", namespace: "default", uid: "uid-1" }, spec });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.webapp;
}

const deploymentOf = (webapp: WebApp): Child => ({
  kind: "Deployment",
  rt: DEPLOYMENT_RESOURCE,
  desired: desiredDeployment(webapp),
});

function setup() {
  const api = createFakeApiServer();
  const events: string[] = [];
  const recorder: EventRecorder = {
    event: (_o, _t, reason, message) => void events.push(`${reason}: ${message}`),
    flush: async () => {},
  };
  const silent = { debug() {}, info() {}, warn() {}, error() {} };
  const ctx = (webapp: WebApp): ConvergeContext => ({
    client: api.client,
    recorder,
    logger: silent,
    clock: realClock,
    webapp,
    ownerExists: async () => true,
    confirmOwner: false,
    admitted: [],
    signal: new AbortController().signal,
  });
  const converge = (webapp: WebApp, cached: KubeObject | undefined) =>
    convergeChild(ctx(webapp), deploymentOf(webapp), cached);
  return { api, events, converge };
}

const base = { image: "shop:v3", replicas: 2, port: 8080 };
const withEnv = app({ ...base, env: [{ name: "MODE", value: "production" }], podSecurity: "restricted" });

describe("convergeChild with the pod-template fields", () => {
  test("a Deployment created with them and read back unchanged costs no write", async () => {
    const { api, converge } = setup();
    const created = await converge(withEnv, undefined);
    expect(created.kind === "converged" && created.wrote).toBe("created");
    if (created.kind !== "converged") throw new Error(created.kind);
    api.actions.length = 0;
    const again = await converge(withEnv, created.live);
    expect(again).toEqual({ kind: "converged", live: created.live, verified: true });
    expect(api.actions).toEqual([]);
  });

  test("dropping them hands the create's fields over to apply, then applies the intent without them", async () => {
    const { api, events, converge } = setup();
    const created = await converge(withEnv, undefined);
    const live = created.kind === "converged" ? created.live : undefined;
    expect(live?.metadata.annotations?.[TEMPLATE_FIELDS_ANNOTATION]).toMatch(/^[0-9a-f]{16}$/);
    api.actions.length = 0;
    const dropped = await converge(app(base), live);
    expect(dropped.kind === "converged" && dropped.wrote).toBe("updated");
    expect(api.actions.map((a) => `${a.method} ${a.contentType ?? ""}`.trim())).toEqual([
      "GET",
      "PATCH application/json-patch+json",
      "PATCH application/apply-patch+yaml",
    ]);
    const applied = api.actions[2]?.body as KubeObject;
    expect(applied.metadata).not.toHaveProperty("annotations");
    expect(JSON.stringify(applied.spec)).toBe(JSON.stringify(desiredDeployment(app(base)).spec));
    expect(events).toEqual([
      `Updated: Deployment shop-deployment updated (metadata.annotations[${TEMPLATE_FIELDS_ANNOTATION}])`,
    ]);
  });
});
