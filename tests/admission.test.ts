/**
 * An image-pinning admission policy (issue #30, 1): clusters that verify images (Kyverno verifyImages with
 * mutateDigest, Sigstore policy-controller, Connaisseur) rewrite a Deployment's `image: app:v1` into
 * `app:v1@sha256:…`, and such policies often add a label or resources too. A MutatingAdmissionPolicy (built into
 * Kubernetes 1.36) does the same here to apps/v1 Deployments of one test namespace: it pins every container's
 * image to a digest, forces imagePullPolicy Always, adds a pod-template label and injects cpu requests into
 * containers without any, each only where not already done (so it is idempotent and its reinvocation ends).
 * With the operator (the compiled executable) watching that namespace: a new WebApp is Ready within 10 s; then
 * 60 s of steady state bring no write from the operator (its own rest_client_requests_total) and no Event; a
 * `kubectl scale` of the Deployment is still reverted; a new image is still rolled out and Ready at the new
 * generation; a `kubectl set image` of the Deployment is reverted to the new image (pinned again by the policy);
 * and it is quiet again afterwards.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isNotFound } from "../src/kube/errors.ts";
import type { KubeObject, ResourceType } from "../src/kube/types.ts";
import { type OperatorProcess, startOperator } from "./_operator.ts";
import {
  conditionOf,
  DEPLOYMENTS,
  EVENTS,
  ensureCrd,
  eventsOnceSeen,
  eventually,
  getOrUndefined,
  kube,
  kubectl,
  NAMESPACES,
  tempNamespace,
  WEBAPPS,
  type WebAppLike,
  webapp,
} from "./_support.ts";
import { requestsByMethod, writesBetween } from "./_watch.ts";

const GROUP = "admissionregistration.k8s.io";
const VERIFIED_LABEL = "policy.example.com/verified";
const NAME = "pinned";
const FIRST_IMAGE = "busybox:1.36";
const SECOND_IMAGE = "busybox:1.37";
const REPLICAS = 2;
const STEADY_MS = 60_000;
const QUIET_AGAIN_MS = 10_000;

interface ContainerLike {
  name: string;
  image: string;
  imagePullPolicy?: string;
  resources?: { requests?: Record<string, string> };
}
interface DeploymentLike extends KubeObject {
  spec: {
    replicas?: number;
    selector?: unknown;
    template: { metadata?: { labels?: Record<string, string> }; spec: { containers: ContainerLike[] } };
  };
}

/**
 * The digest the policy pins `image` to: CEL cannot hash, so it is the image's bytes in hex, cut or padded with
 * zeros to 64 digits (`"%x".format([image])` in the policy) — another image, another digest.
 */
function pinned(image: string): string {
  const hex = Buffer.from(image, "utf8").toString("hex");
  return `${image}@sha256:${`${hex}${"0".repeat(64)}`.slice(0, 64)}`;
}

/** The admissionregistration version that serves MutatingAdmissionPolicies: v1 (GA in 1.36), else v1beta1. */
async function servedVersion(): Promise<string> {
  for (const version of ["v1", "v1beta1"]) {
    const list = await kube
      .raw<{ resources: { name: string }[] }>("GET", `/apis/${GROUP}/${version}`)
      .catch(() => ({ resources: [] }));
    if (list.resources.some((r) => r.name === "mutatingadmissionpolicies")) return version;
  }
  throw new Error(
    `the API server serves no MutatingAdmissionPolicy (${GROUP} v1 or v1beta1): Kubernetes ≥ 1.34 needed`,
  );
}

const containersType = "Object.spec.template.spec.containers";
/** Every mutation applies only where it was not done yet, so applying it to its own output changes nothing. */
const policySpec = {
  matchConstraints: {
    resourceRules: [
      { apiGroups: ["apps"], apiVersions: ["v1"], operations: ["CREATE", "UPDATE"], resources: ["deployments"] },
    ],
  },
  failurePolicy: "Fail",
  reinvocationPolicy: "IfNeeded",
  mutations: [
    {
      patchType: "ApplyConfiguration",
      applyConfiguration: {
        expression: `Object{
  spec: Object.spec{
    template: Object.spec.template{
      metadata: Object.spec.template.metadata{ labels: {"${VERIFIED_LABEL}": "true"} },
      spec: Object.spec.template.spec{
        containers: object.spec.template.spec.containers.map(c, ${containersType}{
          name: c.name,
          image: c.image.contains("@") ? c.image
            : c.image + "@sha256:" + ("%x".format([c.image]) + "${"0".repeat(64)}").substring(0, 64),
          imagePullPolicy: "Always"
        })
      }
    }
  }
}`,
      },
    },
    {
      patchType: "ApplyConfiguration",
      applyConfiguration: {
        expression: `Object{
  spec: Object.spec{
    template: Object.spec.template{
      spec: Object.spec.template.spec{
        containers: object.spec.template.spec.containers
          .filter(c, !has(c.resources) || !has(c.resources.requests))
          .map(c, ${containersType}{
            name: c.name,
            resources: ${containersType}.resources{ requests: {"cpu": "10m"} }
          })
      }
    }
  }
}`,
      },
    },
  ],
};

let version = "";
let policies: ResourceType;
let bindings: ResourceType;
const policyName = `devctl-test-pin-images-${Math.random().toString(36).slice(2, 8)}`;
let ns: Awaited<ReturnType<typeof tempNamespace>>;
let op: OperatorProcess;

const dep = () => getOrUndefined<DeploymentLike>(DEPLOYMENTS, `${NAME}-deployment`, ns.name);
const wa = () => getOrUndefined<WebAppLike>(WEBAPPS, NAME, ns.name);
const appContainer = (d: DeploymentLike | undefined) => d?.spec.template.spec.containers.find((c) => c.name === "app");
const requests = async () => requestsByMethod(await op.metricsText());

/** The operator's Events about the WebApp, by uid: "reason: message (xcount)". A new Event or a repeat shows. */
async function eventMarks(): Promise<Map<string, string>> {
  const events = await kube.list<
    KubeObject & { reason: string; message: string; count?: number; involvedObject: { name: string } }
  >(EVENTS, { namespace: ns.name });
  return new Map(
    events.items
      .filter((e) => e.involvedObject.name === NAME)
      .map((e) => [e.metadata.uid as string, `${e.reason}: ${e.message} (x${e.count ?? 1})`]),
  );
}

/** Waits until the operator's reconcile count has not moved for 2 s (at most 15 s: an operator that never goes
 * quiet is what the windows after this measure, not a reason to fail here). */
async function settle(): Promise<void> {
  let last = await op.counter("controller_runtime_reconcile_total");
  let still = 0;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline && still < 2; ) {
    await Bun.sleep(1000);
    const now = await op.counter("controller_runtime_reconcile_total");
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/** Over `ms`: the operator's writes per method and the Events about the WebApp that are new or repeated. */
async function quietFor(ms: number): Promise<{ writes: Record<string, number>; events: string[] }> {
  const [before, marks] = [await requests(), await eventMarks()];
  await Bun.sleep(ms);
  const writes = writesBetween(before, await requests());
  const events = [...(await eventMarks())].filter(([uid, mark]) => marks.get(uid) !== mark).map(([, mark]) => mark);
  return { writes, events };
}

beforeAll(async () => {
  await ensureCrd();
  version = await servedVersion();
  policies = {
    group: GROUP,
    version,
    plural: "mutatingadmissionpolicies",
    kind: "MutatingAdmissionPolicy",
    namespaced: false,
  };
  bindings = {
    group: GROUP,
    version,
    plural: "mutatingadmissionpolicybindings",
    kind: "MutatingAdmissionPolicyBinding",
    namespaced: false,
  };
  ns = await tempNamespace("admission");
  await kube.patch(
    NAMESPACES,
    ns.name,
    undefined,
    { metadata: { labels: { "devctl-test/pin-images": policyName } } },
    "merge",
  );
  await kube.create(policies, {
    apiVersion: `${GROUP}/${version}`,
    kind: "MutatingAdmissionPolicy",
    metadata: { name: policyName },
    spec: policySpec,
  });
  await kube.create(bindings, {
    apiVersion: `${GROUP}/${version}`,
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name: policyName },
    spec: {
      policyName,
      matchResources: { namespaceSelector: { matchLabels: { "devctl-test/pin-images": policyName } } },
    },
  });
  // The API server picks policies up from its informers: wait until a dry-run create comes back mutated.
  await eventually(
    async () => {
      const probe = await kube.create<DeploymentLike>(
        DEPLOYMENTS,
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "probe", namespace: ns.name },
          spec: {
            selector: { matchLabels: { app: "probe" } },
            template: {
              metadata: { labels: { app: "probe" } },
              spec: { containers: [{ name: "app", image: FIRST_IMAGE }] },
            },
          },
        },
        { dryRun: true },
      );
      const c = appContainer(probe);
      return c?.image === pinned(FIRST_IMAGE) && c.resources?.requests?.cpu === "10m";
    },
    30_000,
    `the policy ${policyName} to mutate a dry-run Deployment in ${ns.name}`,
  );
  op = await startOperator(["--namespaces", ns.name, "--leader-elect=false"]);
});

afterAll(async () => {
  const code = await op?.stop();
  for (const [rt, what] of [
    [bindings, "binding"],
    [policies, "policy"],
  ] as const) {
    if (rt) await kube.delete(rt, policyName).catch((e) => (isNotFound(e) ? undefined : console.error(what, e)));
  }
  await ns?.drop();
  expect(code).toBe(0);
});

describe("an image-pinning admission policy", () => {
  test(`a new WebApp is Ready within 10 s, its Deployment as the policy made it (${FIRST_IMAGE} pinned, label, cpu requests)`, async () => {
    const start = performance.now();
    await kube.create(WEBAPPS, webapp(NAME, ns.name, { image: FIRST_IMAGE, replicas: REPLICAS, port: 8080 }));
    let last: WebAppLike | undefined;
    const ready = await eventually(
      async () => {
        last = await wa();
        return conditionOf(last, "Ready")?.status === "True" ? performance.now() - start : undefined;
      },
      10_000,
      `${NAME} to be Ready=True`,
    ).catch((e) => {
      throw new Error(
        `${e.message}; conditions then: ${JSON.stringify(last?.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`))}`,
      );
    });
    console.error(`[admission] ${NAME} Ready=True ${Math.round(ready)} ms after its creation`);
    const d = await dep();
    const c = appContainer(d);
    expect({
      image: c?.image,
      pullPolicy: c?.imagePullPolicy,
      cpu: c?.resources?.requests?.cpu,
      label: d?.spec.template.metadata?.labels?.[VERIFIED_LABEL],
      replicas: d?.spec.replicas,
    }).toEqual({ image: pinned(FIRST_IMAGE), pullPolicy: "Always", cpu: "10m", label: "true", replicas: REPLICAS });
    const w = await wa();
    expect(w?.status?.observedGeneration).toBe(w?.metadata.generation);
    expect(w?.status?.readyReplicas).toBe(REPLICAS);
  });

  test(
    `then ${STEADY_MS / 1000} s of steady state: no write by the operator, no Event about the WebApp`,
    async () => {
      await eventsOnceSeen(ns.name, NAME, (e) => e.reason === "Created", "the Created event");
      await settle();
      const generation = (await dep())?.metadata.generation;
      const { writes, events } = await quietFor(STEADY_MS);
      console.error(
        `[admission] steady ${STEADY_MS / 1000} s: writes ${JSON.stringify(writes)}, events ${JSON.stringify(events)}`,
      );
      const w = await wa();
      expect({
        writes,
        events,
        ready: conditionOf(w, "Ready")?.status,
        generation: (await dep())?.metadata.generation,
      }).toEqual({
        writes: {},
        events: [],
        ready: "True",
        generation,
      });
    },
    STEADY_MS + 60_000,
  );

  test("kubectl scale of the Deployment to 5 is reverted within 5 s, and the WebApp is Ready again", async () => {
    const r = kubectl(["scale", `deployment/${NAME}-deployment`, "-n", ns.name, "--replicas=5"]);
    expect(r.stderr).toBe("");
    const start = performance.now();
    const reverted = await eventually(
      async () => ((await dep())?.spec.replicas === REPLICAS ? performance.now() - start : undefined),
      5_000,
      `${NAME}-deployment back at ${REPLICAS} replicas`,
    );
    console.error(`[admission] kubectl scale reverted in ${Math.round(reverted)} ms`);
    await eventually(
      async () => {
        const w = await wa();
        return conditionOf(w, "Ready")?.status === "True" && w?.status?.readyReplicas === REPLICAS;
      },
      20_000,
      `${NAME} Ready again with ${REPLICAS} ready replicas`,
    );
    expect(appContainer(await dep())?.image).toBe(pinned(FIRST_IMAGE));
  });

  test(`a new image (${SECOND_IMAGE}) is rolled out, pinned, and the WebApp is Ready at its new generation`, async () => {
    const start = performance.now();
    const patched = await kube.patch<WebAppLike>(WEBAPPS, NAME, ns.name, { spec: { image: SECOND_IMAGE } }, "merge");
    let last: WebAppLike | undefined;
    await eventually(
      async () => appContainer(await dep())?.image === pinned(SECOND_IMAGE),
      10_000,
      `${NAME}-deployment to carry ${pinned(SECOND_IMAGE)}`,
    );
    const ready = await eventually(
      async () => {
        last = await wa();
        return conditionOf(last, "Ready")?.status === "True" &&
          last?.status?.observedGeneration === patched.metadata.generation
          ? performance.now() - start
          : undefined;
      },
      30_000,
      `${NAME} Ready=True at generation ${patched.metadata.generation}`,
    ).catch((e) => {
      throw new Error(`${e.message}; status then: ${JSON.stringify(last?.status)}`);
    });
    console.error(`[admission] ${SECOND_IMAGE} Ready ${Math.round(ready)} ms after the spec change`);
    expect(last?.metadata.generation).toBe(patched.metadata.generation);
  });

  test("kubectl set image on the Deployment is reverted within 5 s, to the pinned WebApp image, and it is Ready again", async () => {
    const r = kubectl(["set", "image", `deployment/${NAME}-deployment`, "-n", ns.name, "app=evil:latest"]);
    expect(r.stderr).toBe("");
    const start = performance.now();
    const reverted = await eventually(
      async () => (appContainer(await dep())?.image === pinned(SECOND_IMAGE) ? performance.now() - start : undefined),
      5_000,
      `${NAME}-deployment back at ${pinned(SECOND_IMAGE)}`,
    );
    console.error(`[admission] kubectl set image reverted in ${Math.round(reverted)} ms`);
    let last: WebAppLike | undefined;
    await eventually(
      async () => {
        last = await wa();
        return (
          conditionOf(last, "Ready")?.status === "True" &&
          last?.status?.readyReplicas === REPLICAS &&
          last.status.observedGeneration === last.metadata.generation
        );
      },
      20_000,
      `${NAME} Ready again`,
    ).catch((e) => {
      throw new Error(`${e.message}; status then: ${JSON.stringify(last?.status)}`);
    });
  });

  test(`and quiet again: no write, no Event over ${QUIET_AGAIN_MS / 1000} s`, async () => {
    await settle();
    const { writes, events } = await quietFor(QUIET_AGAIN_MS);
    console.error(
      `[admission] quiet again ${QUIET_AGAIN_MS / 1000} s: writes ${JSON.stringify(writes)}, events ${JSON.stringify(events)}`,
    );
    expect({ writes, events }).toEqual({ writes: {}, events: [] });
  });
});
