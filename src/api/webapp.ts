/**
 * The WebApp API (apps.example.com/v1): names, resource types, and the valibot schemas that are the
 * single source of truth for devctl's checks and for the generated CRD (crd.ts).
 *
 * Properties:
 * - The seed's example (image myregistry/myapp:v2.1.0, replicas 5, port 8080) is valid unchanged.
 * - Every limit is a named constant used by both the schema and its messages.
 * - A WebApp named N owns a Deployment "N-deployment" and a Service "N-svc"; N is restricted so that
 *   both names are always valid (see NAME_MAX_LENGTH).
 * - The fields that shape the pod template (env, resources, probes, podSecurity, ...) are all optional and live
 *   in pod-template.ts; the two rules between them and the rest of the spec (healthCheck or the probes) are here.
 * - Pure: no I/O. Parsing lives in parse.ts.
 */
import * as v from "valibot";
import type { ObjectMeta, ResourceType } from "../kube/types.ts";
import { atLeast, atMost, wholeNumber } from "./_messages.ts";
import { cel, openapi, transitionRule } from "./openapi.ts";
import { ExposeField } from "./expose.ts";
import { healthCheckAlone, POD_TEMPLATE_FIELDS, whole } from "./pod-template.ts";
import { HISTORY_LIMIT, RolloutRecord } from "./rollout-history.ts";
import { RolloutPolicy } from "./rollout-policy.ts";

export const GROUP = "apps.example.com";
export const VERSION = "v1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "WebApp";
export const LIST_KIND = "WebAppList";
export const PLURAL = "webapps";
export const SINGULAR = "webapp";
export const SHORT = "wa";
export const CRD_NAME = `${PLURAL}.${GROUP}`;

/**
 * On a WebApp: when a restart of its pods was asked for (`devctl webapp rollout restart`, or `kubectl annotate`).
 * The operator carries the value into the pod template's annotation of the same name, so each new value rolls the
 * pods once, as kubectl's kubectl.kubernetes.io/restartedAt does on a Deployment. A WebApp without it has a pod
 * template without it (no rollout on upgrade); dropping it rolls the pods once more, as any template change does.
 */
export const RESTARTED_AT_ANNOTATION = `${GROUP}/restartedAt`;

export const WEBAPP_RESOURCE: ResourceType = {
  group: GROUP,
  version: VERSION,
  plural: PLURAL,
  kind: KIND,
  namespaced: true,
};
/** The built-in resources a WebApp's operator touches; identities live in kube/resources.ts (pure data). */
export {
  CRDS as CRD_RESOURCE,
  DEPLOYMENTS as DEPLOYMENT_RESOURCE,
  EVENTS as EVENT_RESOURCE,
  LEASES as LEASE_RESOURCE,
  HORIZONTAL_POD_AUTOSCALERS as HORIZONTAL_POD_AUTOSCALER_RESOURCE,
  INGRESSES as INGRESS_RESOURCE,
  POD_DISRUPTION_BUDGETS as POD_DISRUPTION_BUDGET_RESOURCE,
  SERVICES as SERVICE_RESOURCE,
} from "../kube/resources.ts";
import {
  DEPLOYMENTS,
  HORIZONTAL_POD_AUTOSCALERS,
  INGRESSES,
  POD_DISRUPTION_BUDGETS,
  SERVICES,
} from "../kube/resources.ts";

/**
 * The resources of a WebApp's children, the workload first: what the install's RBAC grants and the uninstall
 * lists. operator/child-kinds.ts describes each kind in full; a test keeps the two equal.
 */
export const CHILD_RESOURCES: readonly ResourceType[] = [
  DEPLOYMENTS,
  SERVICES,
  POD_DISRUPTION_BUDGETS,
  INGRESSES,
  HORIZONTAL_POD_AUTOSCALERS,
];

/** Suffixes of the owned objects' names. */
export const DEPLOYMENT_SUFFIX = "-deployment";
export const SERVICE_SUFFIX = "-svc";
export const POD_DISRUPTION_BUDGET_SUFFIX = "-pdb";
export const INGRESS_SUFFIX = "-ingress";
export const HORIZONTAL_POD_AUTOSCALER_SUFFIX = "-hpa";
/**
 * Service names are DNS-1035 labels of at most 63 characters, and the Service is named
 * `<name>-svc`, so a WebApp name may have at most 63 - 4 = 59 characters (`<name>-pdb` fits too).
 */
export const NAME_MAX_LENGTH = 63 - SERVICE_SUFFIX.length;
/** DNS-1035 label: lower-case letters, digits and '-', starting with a letter, not ending with '-'. */
export const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Upper bound on spec.replicas. A guard against typos (5000 for 500, an extra zero) that would
 * flood a cluster with pods: 1000 is far above what one web app's Deployment needs (the usual
 * limit is 110 pods per node) yet low enough to stop such mistakes. Raise it here if needed;
 * the CRD follows on regeneration.
 */
export const WEBAPP_MAX_REPLICAS = 1000;
/**
 * The pods a WebApp runs when it sets neither spec.replicas nor spec.autoscaling (fixedReplicas). Not a CRD default
 * (CRD schema version 6 and earlier had it so): a stored default would make spec.replicas present beside
 * spec.autoscaling, which the CRD refuses. WebApps stored under those versions carry replicas: 1, the same count.
 * Not the operator's own replica count, which install chooses (install/manifests.ts OPERATOR_DEFAULT_REPLICAS).
 */
export const WEBAPP_DEFAULT_REPLICAS = 1;
/**
 * Upper bound on spec.image: a repository name is at most 255 characters, a tag 128, a sha512
 * digest 135, a registry host 253 + port. 1024 holds any valid reference and bounds the cost the
 * API server estimates for the CEL rules on this field.
 */
export const IMAGE_MAX_LENGTH = 1024;

/** Kubernetes' image pull policies (core/v1 PullPolicy). */
export const IMAGE_PULL_POLICIES = ["Always", "IfNotPresent", "Never"] as const;
export type ImagePullPolicy = (typeof IMAGE_PULL_POLICIES)[number];

const IMAGE_EMPTY = "must not be empty: set it to a container image such as nginx:1.25";

/** metadata.name of a WebApp. The CRD enforces these at its root as CEL rules (crd.ts). */
export const WebAppName = v.pipe(
  v.string(),
  v.maxLength(
    NAME_MAX_LENGTH,
    (i) =>
      `must be at most ${NAME_MAX_LENGTH} characters (got ${i.input.length}): ` +
      `the Service is named "<name>${SERVICE_SUFFIX}" and Service names are limited to 63 characters`,
  ),
  cel(
    `metadata.name must be at most ${NAME_MAX_LENGTH} characters: ` +
      `the operator creates a Service named <name>${SERVICE_SUFFIX}, and Service names are limited to 63 characters`,
  ),
  v.regex(
    DNS1035_LABEL,
    (i) =>
      "must be a DNS-1035 label: lower-case letters, digits and '-', starting with a letter and ending with a " +
      `letter or digit (got ${JSON.stringify(i.input)}), because the Service "<name>${SERVICE_SUFFIX}" must be one`,
  ),
  cel(
    "metadata.name must consist of lower-case letters, digits and '-', start with a letter and end with a letter " +
      `or digit (a DNS-1035 label), because the operator creates a Service named <name>${SERVICE_SUFFIX}`,
  ),
);

/** What spec.disruptionBudget sets when it sets neither maxUnavailable nor minAvailable: one pod down at a time. */
export const DEFAULT_MAX_UNAVAILABLE = 1;
/** The fewest replicas a WebApp needs before the operator keeps a PodDisruptionBudget for it. */
export const DISRUPTION_BUDGET_MIN_REPLICAS = 2;

const budgetCount = (what: string, min: number) => whole(what, min, WEBAPP_MAX_REPLICAS);

const ONE_BOUND_MESSAGE =
  "maxUnavailable and minAvailable cannot both be set (a PodDisruptionBudget takes one): remove one of them";
const DISABLED_ALONE_MESSAGE =
  "enabled: false means no PodDisruptionBudget: remove maxUnavailable and minAvailable, or enabled";

type DisruptionBudgetFields = { enabled?: boolean; maxUnavailable?: number; minAvailable?: number };

export const DisruptionBudget = v.pipe(
  v.object({
    enabled: v.optional(
      v.pipe(v.boolean(), v.description("false: no PodDisruptionBudget for this WebApp. Default true.")),
    ),
    maxUnavailable: budgetCount(
      `Pods that a voluntary disruption (a node drain) may take down at once. Default ${DEFAULT_MAX_UNAVAILABLE}.`,
      0,
    ),
    minAvailable: budgetCount(
      "Pods that must stay available during a voluntary disruption, instead of maxUnavailable.",
      1,
    ),
  }),
  v.description(
    `The PodDisruptionBudget the operator keeps while the WebApp runs ${DISRUPTION_BUDGET_MIN_REPLICAS} replicas or ` +
      `more (maxUnavailable ${DEFAULT_MAX_UNAVAILABLE} unless set here), so that a node drain never evicts every ` +
      "pod at once; pods that are not ready may always be evicted. Removed when the WebApp runs fewer, or with " +
      "enabled: false.",
  ),
  v.check(
    (b: DisruptionBudgetFields) => b.maxUnavailable === undefined || b.minAvailable === undefined,
    ONE_BOUND_MESSAGE,
  ),
  cel<DisruptionBudgetFields>(ONE_BOUND_MESSAGE, { rule: "!has(self.maxUnavailable) || !has(self.minAvailable)" }),
  v.check(
    (b: DisruptionBudgetFields) =>
      b.enabled !== false || (b.maxUnavailable === undefined && b.minAvailable === undefined),
    DISABLED_ALONE_MESSAGE,
  ),
  cel<DisruptionBudgetFields>(DISABLED_ALONE_MESSAGE, {
    rule: "!has(self.enabled) || self.enabled || (!has(self.maxUnavailable) && !has(self.minAvailable))",
  }),
);
export type DisruptionBudget = v.InferOutput<typeof DisruptionBudget>;

/** minReplicas when spec.autoscaling leaves it out (the HorizontalPodAutoscaler's own default). */
export const DEFAULT_MIN_REPLICAS = 1;
/** targetCPUUtilizationPercentage when spec.autoscaling leaves it out (the HorizontalPodAutoscaler's own default). */
export const DEFAULT_CPU_UTILIZATION = 80;
/** Upper bound on a utilization target: a target above the request (100%) is legitimate, 10x is a typo. */
export const UTILIZATION_MAX = 1000;

const MIN_MAX_MESSAGE = "minReplicas must be at most maxReplicas: lower minReplicas or raise maxReplicas";
type AutoscalingFields = {
  minReplicas?: number;
  maxReplicas: number;
  targetCPUUtilizationPercentage?: number;
  targetMemoryUtilizationPercentage?: number;
};

export const Autoscaling = v.pipe(
  v.object({
    minReplicas: whole("Fewest pods the autoscaler keeps. Default 1.", 1, WEBAPP_MAX_REPLICAS),
    maxReplicas: v.pipe(
      v.number(),
      v.description(`Most pods the autoscaler may run, at most ${WEBAPP_MAX_REPLICAS}.`),
      v.integer(wholeNumber),
      v.minValue(1, atLeast(1)),
      v.maxValue(WEBAPP_MAX_REPLICAS, atMost(WEBAPP_MAX_REPLICAS)),
    ),
    targetCPUUtilizationPercentage: whole(
      "Average CPU use the autoscaler aims at, in percent of spec.resources.requests.cpu. " +
        `Default ${DEFAULT_CPU_UTILIZATION}.`,
      1,
      UTILIZATION_MAX,
    ),
    targetMemoryUtilizationPercentage: whole(
      "Average memory use the autoscaler also aims at, in percent of spec.resources.requests.memory (needs it). " +
        "Left out: CPU only.",
      1,
      UTILIZATION_MAX,
    ),
  }),
  v.description(
    "Run between minReplicas and maxReplicas pods, as a HorizontalPodAutoscaler (autoscaling/v2) that the operator " +
      "keeps for the Deployment decides from CPU (and memory) use. The operator leaves the Deployment's replica " +
      "count to it and never reverts its scaling. Needs spec.resources.requests.cpu; excludes spec.replicas.",
  ),
  v.forward<AutoscalingFields, v.CheckIssue<AutoscalingFields>, ["minReplicas"]>(
    v.check((a: AutoscalingFields) => (a.minReplicas ?? DEFAULT_MIN_REPLICAS) <= a.maxReplicas, MIN_MAX_MESSAGE),
    ["minReplicas"],
  ),
  cel<AutoscalingFields>(MIN_MAX_MESSAGE, {
    rule: "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
    fieldPath: ".minReplicas",
  }),
);
export type Autoscaling = v.InferOutput<typeof Autoscaling>;

type AutoscaledFields = {
  replicas?: number;
  autoscaling?: { targetMemoryUtilizationPercentage?: number };
  resources?: { requests?: { cpu?: string; memory?: string } };
};

const REPLICAS_AND_AUTOSCALING =
  "spec.replicas and spec.autoscaling cannot both be set: the autoscaler decides the number of pods; " +
  "remove spec.replicas, or remove spec.autoscaling to choose it yourself";
const needsRequest = (r: "cpu" | "memory", target: string) =>
  `spec.autoscaling${target} needs spec.resources.requests.${r}: the autoscaler measures ${r === "cpu" ? "CPU" : r} ` +
  `use in percent of it; set it (e.g. ${r === "cpu" ? '"100m"' : '"128Mi"'})`;
const AUTOSCALING_REMOVED =
  "spec.autoscaling was removed without spec.replicas: set spec.replicas to the number of pods to run from now on " +
  "(status.autoscaling.currentReplicas is how many the autoscaler runs now), so that they do not drop to 1";

/**
 * The rules between spec.autoscaling and the rest of the spec: not with spec.replicas; a request for each resource
 * it measures; and, on an update, its removal names the replicas to keep (a rule on the stored object too, which
 * only the API server sees: devctl's own parse has no previous spec).
 */
function autoscalingRules<T extends AutoscaledFields>() {
  const requested = (s: T, r: "cpu" | "memory") => s.resources?.requests?.[r] !== undefined;
  const celRequested = (r: string) =>
    `has(self.resources) && has(self.resources.requests) && has(self.resources.requests.${r})`;
  return [
    v.forward<T, v.CheckIssue<T>, ["replicas"]>(
      v.check((s: T) => s.replicas === undefined || s.autoscaling === undefined, REPLICAS_AND_AUTOSCALING),
      ["replicas"] as never,
    ),
    cel<T>(REPLICAS_AND_AUTOSCALING, { rule: "!has(self.replicas) || !has(self.autoscaling)", fieldPath: ".replicas" }),
    v.forward<T, v.CheckIssue<T>, ["autoscaling"]>(
      v.check((s: T) => s.autoscaling === undefined || requested(s, "cpu"), needsRequest("cpu", "")),
      ["autoscaling"] as never,
    ),
    cel<T>(needsRequest("cpu", ""), {
      rule: `!has(self.autoscaling) || (${celRequested("cpu")})`,
      fieldPath: ".autoscaling",
    }),
    v.forward<T, v.CheckIssue<T>, ["autoscaling"]>(
      v.check(
        (s: T) => s.autoscaling?.targetMemoryUtilizationPercentage === undefined || requested(s, "memory"),
        needsRequest("memory", ".targetMemoryUtilizationPercentage"),
      ),
      ["autoscaling"] as never,
    ),
    cel<T>(needsRequest("memory", ".targetMemoryUtilizationPercentage"), {
      rule: `!has(self.autoscaling) || !has(self.autoscaling.targetMemoryUtilizationPercentage) || (${celRequested("memory")})`,
      fieldPath: ".autoscaling",
    }),
    transitionRule<T>(AUTOSCALING_REMOVED, {
      rule: "has(self.replicas) || has(self.autoscaling) || !has(oldSelf.autoscaling)",
      fieldPath: ".replicas",
    }),
  ] as const;
}

const WebAppSpecFields = v.object({
  image: v.pipe(
    v.string(),
    v.description("Container image to run, e.g. myregistry/myapp:v2.1.0."),
    v.nonEmpty(IMAGE_EMPTY),
    cel(IMAGE_EMPTY),
    v.regex(/^\S*$/, (i) => `must not contain whitespace (got ${JSON.stringify(i.input)})`),
    cel("must not contain whitespace: an image reference looks like registry/name:tag"),
    v.maxLength(IMAGE_MAX_LENGTH, (i) => `must be at most ${IMAGE_MAX_LENGTH} characters (got ${i.input.length})`),
  ),
  replicas: v.optional(
    v.pipe(
      v.number(),
      v.description(
        `Number of pods to run, 1 to ${WEBAPP_MAX_REPLICAS}. Left out: ${WEBAPP_DEFAULT_REPLICAS}, or what the ` +
          "autoscaler decides with spec.autoscaling (then it must be left out).",
      ),
      v.integer(wholeNumber),
      v.minValue(1, atLeast(1)),
      v.maxValue(WEBAPP_MAX_REPLICAS, atMost(WEBAPP_MAX_REPLICAS)),
    ),
  ),
  port: v.pipe(
    v.number(),
    v.description("Port the container listens on; the Service sends its port 80 there."),
    v.integer(wholeNumber),
    v.minValue(1, atLeast(1)),
    v.maxValue(65535, atMost(65535)),
  ),
  imagePullPolicy: v.optional(
    v.pipe(
      v.picklist(
        IMAGE_PULL_POLICIES,
        (i) => `must be one of ${IMAGE_PULL_POLICIES.join(", ")} (got ${JSON.stringify(i.input)})`,
      ),
      v.description(
        "When the nodes pull spec.image: Always, IfNotPresent, or Never (the image must already be on the node). " +
          "Left out, Kubernetes' rule: Always for a :latest or untagged image, else IfNotPresent.",
      ),
    ),
  ),
  ...POD_TEMPLATE_FIELDS,
  autoscaling: v.optional(Autoscaling),
  disruptionBudget: v.optional(DisruptionBudget),
  expose: v.optional(ExposeField),
  rollout: v.optional(RolloutPolicy),
});
type WebAppSpecFields = v.InferOutput<typeof WebAppSpecFields>;

export const WebAppSpec = v.pipe(
  WebAppSpecFields,
  v.description(
    "Desired state: which image (and when to pull it), how many replicas, which port; optionally the container's " +
      "environment, command, resources, health checks and security, and the pods' labels and annotations.",
  ),
  ...healthCheckAlone<WebAppSpecFields>("readinessProbe"),
  ...healthCheckAlone<WebAppSpecFields>("livenessProbe"),
  ...autoscalingRules<WebAppSpecFields>(),
);
/** A validated spec, defaults applied. */
export type WebAppSpec = v.InferOutput<typeof WebAppSpec>;

/** The pods the operator runs itself: spec.replicas, 1 when left out; undefined when the autoscaler decides. */
export function fixedReplicas(spec: Pick<WebAppSpec, "replicas" | "autoscaling">): number | undefined {
  return spec.autoscaling ? undefined : (spec.replicas ?? WEBAPP_DEFAULT_REPLICAS);
}

/** The fewest pods the WebApp runs: its fixed count, or the autoscaler's minimum. */
export function leastReplicas(spec: Pick<WebAppSpec, "replicas" | "autoscaling">): number {
  return fixedReplicas(spec) ?? spec.autoscaling?.minReplicas ?? DEFAULT_MIN_REPLICAS;
}

export const CONDITION_STATUSES = ["True", "False", "Unknown"] as const;
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** metav1.Condition, with the same limits the Kubernetes API types declare. */
export const Condition = v.object({
  type: v.pipe(
    v.string(),
    v.description("Type of condition in CamelCase."),
    v.maxLength(316),
    v.regex(
      /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
    ),
  ),
  status: v.pipe(v.picklist(CONDITION_STATUSES), v.description("Status of the condition: True, False or Unknown.")),
  reason: v.pipe(
    v.string(),
    v.description("Programmatic identifier of the reason for the last transition, in CamelCase."),
    v.minLength(1),
    v.maxLength(1024),
    v.regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/),
  ),
  message: v.pipe(v.string(), v.description("Human-readable message about the transition."), v.maxLength(32768)),
  lastTransitionTime: v.pipe(v.string(), v.description("When the condition last changed status."), v.isoTimestamp()),
  observedGeneration: v.optional(
    v.pipe(v.number(), v.description("metadata.generation the condition was set for."), v.integer(), v.minValue(0)),
  ),
});
export type Condition = v.InferOutput<typeof Condition>;

/**
 * A field of a child that admission (a mutating webhook or policy: image pinning, injected labels) stored
 * otherwise than devctl's own last write of that child set it. Not drift: while the intent there is still `sent`
 * and the child still holds `stored`, devctl writes nothing (operator/admission.ts). Values are JSON text.
 */
export const AdmittedField = v.object({
  kind: v.pipe(v.string(), v.description("Kind of the child: Deployment or Service."), v.maxLength(63)),
  path: v.pipe(
    v.string(),
    v.description("The field, e.g. spec.template.spec.containers[app].image."),
    v.maxLength(1024),
  ),
  sent: v.pipe(v.string(), v.description("What devctl's write set there (JSON)."), v.maxLength(4096)),
  stored: v.pipe(
    v.string(),
    v.description("What the API server stored after admission (JSON; null: removed)."),
    v.maxLength(4096),
  ),
});
export type AdmittedField = v.InferOutput<typeof AdmittedField>;

const count = (what: string) => v.optional(v.pipe(v.number(), v.description(what), v.integer(), v.minValue(0)));

export const WebAppStatus = v.pipe(
  v.object({
    replicas: count("Pods of the Deployment (the scale subresource reads this)."),
    readyReplicas: count("Pods that are ready."),
    availableReplicas: count("Pods that are available."),
    observedGeneration: count("metadata.generation this status was computed for."),
    selector: v.optional(v.pipe(v.string(), v.description("Label selector of the pods, for the scale subresource."))),
    autoscaling: v.optional(
      v.pipe(
        v.object({
          currentReplicas: count("Pods the autoscaler last saw running."),
          desiredReplicas: count("Pods the autoscaler last decided on."),
        }),
        v.description("With spec.autoscaling: what its HorizontalPodAutoscaler reports."),
      ),
    ),
    url: v.optional(
      v.pipe(
        v.string(),
        v.description(
          "Where spec.expose answers, once its Ingress has an address: https://host/path (http without TLS).",
        ),
        v.maxLength(2300),
      ),
    ),
    conditions: v.optional(
      v.pipe(
        v.array(Condition),
        v.description(
          "Ready, then Reconciling or Stalled while True (kstatus: Ready is True only when nothing is in progress " +
            "or failing; Stalled means someone must act), then Available, Progressing and Degraded.",
        ),
        openapi({ "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"] }),
      ),
    ),
    rollouts: v.optional(
      v.pipe(
        v.array(RolloutRecord),
        v.description(
          `The last ${HISTORY_LIMIT} pod templates the operator rolled out, oldest first: image, digest, when each ` +
            "started, and when it became Ready or how it failed (devctl webapp rollout history).",
        ),
        v.maxLength(HISTORY_LIMIT),
      ),
    ),
    lastReadyRevision: count("The revision in status.rollouts that last became Ready."),
    admitted: v.optional(
      v.pipe(
        v.array(AdmittedField),
        v.description(
          "Fields of the children that admission (a mutating webhook or policy) stored otherwise than the " +
            "operator's last write set them: not drift, so not written again while the spec is unchanged.",
        ),
        v.maxLength(64),
      ),
    ),
  }),
  v.description("Observed state, written by the operator."),
);
export type WebAppStatus = v.InferOutput<typeof WebAppStatus>;
/**
 * The status a WebApp reads with until the operator first writes one (the CRD's default for .status, applied by
 * the API server on every read): generation 0 observed, below metadata.generation (1 on create), so kstatus and
 * the tools built on it (Flux, Helm --wait, kpt) read InProgress instead of Current for a WebApp nobody looked at.
 */
export const UNOBSERVED_STATUS = { observedGeneration: 0 } as const satisfies WebAppStatus;

/** A WebApp as read from the API server: nothing about spec is known until parsed. */
export interface WebAppObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: WebAppStatus;
}

/** A WebApp whose name and spec passed parseWebApp. `uid` is absent only for objects never stored. */
export interface WebApp extends WebAppObject {
  metadata: ObjectMeta & { name: string; namespace: string };
  spec: WebAppSpec;
}
