/**
 * Pure builders of the objects a WebApp owns, as server-side-apply intents.
 *
 * Properties:
 * - Owned fields only: apiVersion, kind, metadata.name/namespace/labels/ownerReferences and the spec
 *   fields below. Nothing the API server defaults (strategy, clusterIP, restartPolicy, ...) is set, so
 *   applying the same intent twice is a no-op and defaults never look like drift.
 * - Deterministic: the same WebApp always gives deep-equal objects with the same key order.
 * - Names: `<name>-deployment`, `<name>-svc`, `<name>-pdb` and `<name>-ingress`; labels app=<name>,
 *   managed-by=webapp-operator on the object, the selector and the pod template.
 * - An Ingress only with spec.expose: host and path (a Prefix, / by default) to the Service's port by name, the
 *   class and a TLS entry for host only when set.
 * - A PodDisruptionBudget only while wantsDisruptionBudget (2 replicas or more, not turned off): maxUnavailable 1
 *   unless spec.disruptionBudget sets maxUnavailable or minAvailable, and unhealthyPodEvictionPolicy AlwaysAllow, so
 *   pods that are not ready (a crash loop, a bad rollout) never hold up a node drain.
 * - Controlled: one ownerReference with controller=true and blockOwnerDeletion=true, so deleting the
 *   WebApp garbage-collects both. A WebApp never stored (no uid, e.g. rendered from a file) gets none.
 * - Protocols are explicit (TCP): they are list-map keys for server-side apply of ports.
 * - imagePullPolicy is always set: spec.imagePullPolicy, else the value the API server would default
 *   (pullPolicyFor), so existing Deployments see no change and clearing the field is a change that is applied.
 * - The optional pod-template fields of issue #31 (env, resources, probes, podSecurity, ...) are built by
 *   desired-template.ts and added after the fields above, only when set: a WebApp without them gives exactly the
 *   objects of before (desired-golden.test.ts). With any of them, the Deployment also carries their digest in the
 *   TEMPLATE_FIELDS_ANNOTATION, so that removing one is a difference diff.ts sees.
 */
import type { KubeObject, OwnerReference } from "../kube/types.ts";
import {
  API_VERSION,
  DEFAULT_CPU_UTILIZATION,
  DEFAULT_MAX_UNAVAILABLE,
  DEFAULT_MIN_REPLICAS,
  DEPLOYMENT_SUFFIX,
  fixedReplicas,
  HORIZONTAL_POD_AUTOSCALER_SUFFIX,
  DISRUPTION_BUDGET_MIN_REPLICAS,
  type ImagePullPolicy,
  INGRESS_SUFFIX,
  KIND,
  leastReplicas,
  POD_DISRUPTION_BUDGET_SUFFIX,
  RESTARTED_AT_ANNOTATION,
  SERVICE_SUFFIX,
  type WebAppSpec,
  type WebApp,
} from "../api/webapp.ts";
import {
  type ContainerOptions,
  containerOptions,
  type PodOptions,
  podOptions,
  TEMPLATE_FIELDS_ANNOTATION,
  type TemplateMetadataOptions,
  shortDigest,
  templateFieldsDigest,
  templateMetadataOptions,
} from "./desired-template.ts";
import { EXPOSE_DEFAULT_PATH } from "../api/expose.ts";
import { SELECTOR_LABEL_KEYS } from "../api/pod-template.ts";

/** The selector's label keys have one home, in api (spec.podLabels may not set them). */
export const [APP_LABEL, MANAGED_BY_LABEL] = SELECTOR_LABEL_KEYS;
export const MANAGED_BY_VALUE = "webapp-operator";
export const WEBAPP_CONTAINER_NAME = "app";
export const SERVICE_PORT = 80;
export const SERVICE_PORT_NAME = "http";

export const deploymentName = (webappName: string): string => `${webappName}${DEPLOYMENT_SUFFIX}`;
export const serviceName = (webappName: string): string => `${webappName}${SERVICE_SUFFIX}`;
export const podDisruptionBudgetName = (webappName: string): string => `${webappName}${POD_DISRUPTION_BUDGET_SUFFIX}`;
export const ingressName = (webappName: string): string => `${webappName}${INGRESS_SUFFIX}`;
export const horizontalPodAutoscalerName = (webappName: string): string =>
  `${webappName}${HORIZONTAL_POD_AUTOSCALER_SUFFIX}`;

/** Labels on the owned objects and their pods; also the pod selector. */
export function webAppLabels(webappName: string): Record<string, string> {
  return { [APP_LABEL]: webappName, [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
}

/** "app=<name>,managed-by=webapp-operator", as a label selector string. */
export function webAppSelector(webappName: string): string {
  return Object.entries(webAppLabels(webappName))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
}

/** The controller reference to put on owned objects; undefined for a WebApp never stored. */
export function controllerReference(webapp: WebApp): OwnerReference | undefined {
  const { uid, name } = webapp.metadata;
  if (!uid) return undefined;
  return { apiVersion: API_VERSION, kind: KIND, name, uid, controller: true, blockOwnerDeletion: true };
}

function ownedMetadata(webapp: WebApp, name: string): KubeObject["metadata"] {
  const ref = controllerReference(webapp);
  return {
    name,
    namespace: webapp.metadata.namespace,
    labels: webAppLabels(webapp.metadata.name),
    ...(ref ? { ownerReferences: [ref] } : {}),
  };
}

export interface DeploymentIntent extends KubeObject {
  apiVersion: "apps/v1";
  kind: "Deployment";
  spec: {
    /** Absent with spec.autoscaling: the HorizontalPodAutoscaler's to set (converge.ts hands it over). */
    replicas?: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> } & Omit<TemplateMetadataOptions, "labels">;
      spec: { containers: DeploymentContainer[] } & PodOptions;
    };
  };
}

interface DeploymentContainer extends ContainerOptions {
  name: string;
  image: string;
  imagePullPolicy: ImagePullPolicy;
  ports: { containerPort: number; protocol: "TCP" }[];
}

/**
 * The pull policy Kubernetes defaults a container to (core/v1 SetDefaults_Container): Always when the image's
 * tag is "latest" or it has neither tag nor digest, else IfNotPresent.
 */
export function pullPolicyFor(image: string): ImagePullPolicy {
  const at = image.indexOf("@");
  const name = at >= 0 ? image.slice(0, at) : image;
  const colon = name.lastIndexOf(":");
  const tag = colon > name.lastIndexOf("/") ? name.slice(colon + 1) : "";
  if (tag === "latest" || (tag === "" && at < 0)) return "Always";
  return "IfNotPresent";
}

export function desiredDeployment(webapp: WebApp): DeploymentIntent {
  const labels = webAppLabels(webapp.metadata.name);
  const container = containerOptions(webapp.spec);
  const pod = podOptions(webapp.spec);
  const templateMetadata = templateMetadataOptions(webapp.spec, webapp.metadata.annotations?.[RESTARTED_AT_ANNOTATION]);
  const { labels: podLabels, ...templateAnnotations } = templateMetadata;
  const digest = templateFieldsDigest({ container, pod, metadata: templateMetadata });
  const metadata = ownedMetadata(webapp, deploymentName(webapp.metadata.name));
  const replicas = fixedReplicas(webapp.spec);
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: digest ? { ...metadata, annotations: { [TEMPLATE_FIELDS_ANNOTATION]: digest } } : metadata,
    spec: {
      ...(replicas !== undefined ? { replicas } : {}),
      selector: { matchLabels: { ...labels } },
      template: {
        metadata: { labels: { ...labels, ...podLabels }, ...templateAnnotations },
        spec: {
          containers: [
            {
              name: WEBAPP_CONTAINER_NAME,
              image: webapp.spec.image,
              imagePullPolicy: webapp.spec.imagePullPolicy ?? pullPolicyFor(webapp.spec.image),
              ports: [{ containerPort: webapp.spec.port, protocol: "TCP" }],
              ...container,
            },
          ],
          ...pod,
        },
      },
    },
  };
}

/**
 * The revision identity of a spec's pod template (status.rollouts[].digest): a short sha256 of the template
 * desiredDeployment builds for it, without the restart annotation (a restart is a revision of the same digest).
 * Depends on the spec and the name only, so `devctl webapp rollout undo` computes the same from the CLI.
 */
export function podTemplateDigest(webapp: WebApp): string {
  const annotations = webapp.metadata.annotations;
  const unrestarted =
    annotations?.[RESTARTED_AT_ANNOTATION] === undefined
      ? webapp
      : { ...webapp, metadata: { ...webapp.metadata, annotations: withoutKey(annotations, RESTARTED_AT_ANNOTATION) } };
  const template = desiredDeployment(unrestarted).spec.template;
  return shortDigest(template);
}

function withoutKey(record: Record<string, string>, key: string): Record<string, string> {
  const { [key]: _, ...rest } = record;
  return rest;
}

export interface ServiceIntent extends KubeObject {
  apiVersion: "v1";
  kind: "Service";
  spec: {
    selector: Record<string, string>;
    ports: { name: string; port: number; targetPort: number; protocol: "TCP" }[];
  };
}

export function desiredService(webapp: WebApp): ServiceIntent {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: ownedMetadata(webapp, serviceName(webapp.metadata.name)),
    spec: {
      selector: webAppLabels(webapp.metadata.name),
      ports: [{ name: SERVICE_PORT_NAME, port: SERVICE_PORT, targetPort: webapp.spec.port, protocol: "TCP" }],
    },
  };
}

export interface PodDisruptionBudgetIntent extends KubeObject {
  apiVersion: "policy/v1";
  kind: "PodDisruptionBudget";
  spec: {
    selector: { matchLabels: Record<string, string> };
    maxUnavailable?: number;
    minAvailable?: number;
    unhealthyPodEvictionPolicy: "AlwaysAllow";
  };
}

/**
 * The WebApp runs DISRUPTION_BUDGET_MIN_REPLICAS pods or more (spec.replicas, or the autoscaler's minimum) and its spec
 * does not turn the budget off.
 */
export function wantsDisruptionBudget(spec: WebAppSpec): boolean {
  return spec.disruptionBudget?.enabled !== false && leastReplicas(spec) >= DISRUPTION_BUDGET_MIN_REPLICAS;
}

export function desiredPodDisruptionBudget(webapp: WebApp): PodDisruptionBudgetIntent {
  const { maxUnavailable, minAvailable } = webapp.spec.disruptionBudget ?? {};
  const bound =
    minAvailable !== undefined ? { minAvailable } : { maxUnavailable: maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE };
  return {
    apiVersion: "policy/v1",
    kind: "PodDisruptionBudget",
    metadata: ownedMetadata(webapp, podDisruptionBudgetName(webapp.metadata.name)),
    spec: {
      selector: { matchLabels: webAppLabels(webapp.metadata.name) },
      ...bound,
      unhealthyPodEvictionPolicy: "AlwaysAllow",
    },
  };
}

export interface IngressIntent extends KubeObject {
  apiVersion: "networking.k8s.io/v1";
  kind: "Ingress";
  spec: {
    ingressClassName?: string;
    tls?: { hosts: string[]; secretName: string }[];
    rules: {
      host: string;
      http: {
        paths: { path: string; pathType: "Prefix"; backend: { service: { name: string; port: { name: string } } } }[];
      };
    }[];
  };
}

/** The WebApp asks for an address outside the cluster (spec.expose). */
export const wantsIngress = (spec: WebAppSpec): boolean => spec.expose !== undefined;

/** The Ingress of spec.expose; call only when wantsIngress. */
export function desiredIngress(webapp: WebApp): IngressIntent {
  const { host, path = EXPOSE_DEFAULT_PATH, ingressClassName, tlsSecretName } = webapp.spec.expose ?? { host: "" };
  const backend = { service: { name: serviceName(webapp.metadata.name), port: { name: SERVICE_PORT_NAME } } };
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: ownedMetadata(webapp, ingressName(webapp.metadata.name)),
    spec: {
      ...(ingressClassName ? { ingressClassName } : {}),
      ...(tlsSecretName ? { tls: [{ hosts: [host], secretName: tlsSecretName }] } : {}),
      rules: [{ host, http: { paths: [{ path, pathType: "Prefix", backend }] } }],
    },
  };
}

export interface HorizontalPodAutoscalerIntent extends KubeObject {
  apiVersion: "autoscaling/v2";
  kind: "HorizontalPodAutoscaler";
  spec: {
    scaleTargetRef: { apiVersion: "apps/v1"; kind: "Deployment"; name: string };
    minReplicas: number;
    maxReplicas: number;
    metrics: ResourceMetric[];
  };
}

interface ResourceMetric {
  type: "Resource";
  resource: { name: "cpu" | "memory"; target: { type: "Utilization"; averageUtilization: number } };
}

/** The WebApp asks for autoscaling (spec.autoscaling). */
export const wantsAutoscaler = (spec: WebAppSpec): boolean => spec.autoscaling !== undefined;

const utilization = (name: "cpu" | "memory", averageUtilization: number): ResourceMetric => ({
  type: "Resource",
  resource: { name, target: { type: "Utilization", averageUtilization } },
});

/**
 * The HorizontalPodAutoscaler of spec.autoscaling, for the WebApp's Deployment; call only when wantsAutoscaler. Every
 * field it has a default for is set (minReplicas 1, CPU at 80%), so that a value removed from the spec is a
 * difference diff.ts sees, and goes back to the default.
 */
export function desiredHorizontalPodAutoscaler(webapp: WebApp): HorizontalPodAutoscalerIntent {
  const a = webapp.spec.autoscaling ?? { maxReplicas: 1 };
  const memory = a.targetMemoryUtilizationPercentage;
  return {
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: ownedMetadata(webapp, horizontalPodAutoscalerName(webapp.metadata.name)),
    spec: {
      scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: deploymentName(webapp.metadata.name) },
      minReplicas: a.minReplicas ?? DEFAULT_MIN_REPLICAS,
      maxReplicas: a.maxReplicas,
      metrics: [
        utilization("cpu", a.targetCPUUtilizationPercentage ?? DEFAULT_CPU_UTILIZATION),
        ...(memory !== undefined ? [utilization("memory", memory)] : []),
      ],
    },
  };
}
