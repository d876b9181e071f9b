/**
 * Builds the WebApp CustomResourceDefinition from the valibot schemas in webapp.ts.
 *
 * Properties:
 * - Derived, not written: spec and status schemas come from toOpenApiSchema(WebAppSpec/WebAppStatus),
 *   and the name rules from the WebAppName pipe, so devctl and the API server enforce the same limits.
 * - Recognisable: labelled app.kubernetes.io/managed-by=devctl and annotated with
 *   devctl.dev/crd-schema-version, so `operator install` can tell its own CRD and its age.
 * - Structural (apiextensions.k8s.io/v1): unknown fields are pruned by the API server.
 * - scale subresource: `kubectl scale webapp/x --replicas=n` and HPAs work on .spec.replicas.
 * - .status defaults to UNOBSERVED_STATUS: the API server shows a WebApp the operator has not written yet with
 *   observedGeneration 0 (kstatus: InProgress), on create's response and on every get, list and watch.
 * - renderCrdYaml() is the exact text of crd/webapps.apps.example.com.yaml (crd-gen.ts writes it).
 */
import type { KubeObject } from "../kube/types.ts";
import { celRule, toOpenApiSchema, pipeActions, type CelRule, type OpenApiSchema } from "./openapi.ts";
import {
  CRD_NAME,
  GROUP,
  KIND,
  LIST_KIND,
  PLURAL,
  SHORT,
  SINGULAR,
  UNOBSERVED_STATUS,
  VERSION,
  WebAppName,
  WebAppSpec,
  WebAppStatus,
} from "./webapp.ts";
import { toYaml } from "./yaml.ts";
import * as v from "valibot";

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY_DEVCTL = "devctl";
export const SCHEMA_VERSION_ANNOTATION = "devctl.dev/crd-schema-version";
/**
 * Bump when the generated schema changes in a way installs must notice (2: spec.imagePullPolicy, .status default;
 * 3: .status.admitted; 4: the pod-template fields of issue #31, spec.env ... spec.podAnnotations;
 * 5: spec.disruptionBudget; 6: spec.expose, status.url and its -o wide column; 7: spec.autoscaling, status.autoscaling,
 * spec.replicas no longer defaulted). install/apply.ts refuses to replace
 * a CRD of a higher version: an older devctl's schema would prune the fields it does not know from every stored
 * WebApp.
 */
export const CRD_SCHEMA_VERSION = "7";

export interface CustomResourceDefinition extends KubeObject {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    group: string;
    names: { plural: string; singular: string; kind: string; listKind: string; shortNames: string[] };
    scope: "Namespaced";
    versions: CrdVersion[];
  };
}

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: OpenApiSchema };
  subresources: {
    status: Record<string, never>;
    scale: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath: string };
  };
  additionalPrinterColumns: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
}

export function buildWebAppCrd(): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: CRD_NAME,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_DEVCTL },
      annotations: { [SCHEMA_VERSION_ANNOTATION]: CRD_SCHEMA_VERSION },
    },
    spec: {
      group: GROUP,
      names: { plural: PLURAL, singular: SINGULAR, kind: KIND, listKind: LIST_KIND, shortNames: [SHORT] },
      scope: "Namespaced",
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: rootSchema() },
          subresources: {
            status: {},
            scale: {
              specReplicasPath: ".spec.replicas",
              statusReplicasPath: ".status.replicas",
              labelSelectorPath: ".status.selector",
            },
          },
          additionalPrinterColumns: [
            { name: "Image", type: "string", jsonPath: ".spec.image" },
            { name: "Desired", type: "integer", jsonPath: ".spec.replicas" },
            { name: "Available", type: "integer", jsonPath: ".status.availableReplicas" },
            { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: "Reason", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
            // kubectl get -o wide only: spec.autoscaling's range (Desired is empty then), and where spec.expose answers.
            { name: "MinPods", type: "integer", jsonPath: ".spec.autoscaling.minReplicas", priority: 1 },
            { name: "MaxPods", type: "integer", jsonPath: ".spec.autoscaling.maxReplicas", priority: 1 },
            { name: "URL", type: "string", jsonPath: ".status.url", priority: 1 },
          ],
        },
      ],
    },
  };
}

function rootSchema(): OpenApiSchema {
  return {
    description: `${KIND} runs a container image as a Deployment with a Service in front of it.`,
    type: "object",
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: toOpenApiSchema(WebAppSpec, "spec"),
      status: toOpenApiSchema(v.optional(WebAppStatus, UNOBSERVED_STATUS), "status"),
    },
    required: ["spec"],
    "x-kubernetes-validations": nameRules(),
  };
}

/**
 * A CRD may not constrain metadata in its schema, but CEL at the root can read metadata.name,
 * so every rule on WebAppName becomes a root rule. A rule without a message is refused.
 */
function nameRules(): CelRule[] {
  const rules = pipeActions(WebAppName.pipe, "metadata.name").filter(({ action }) => action.kind === "validation");
  return rules.map(({ action, celMessage }) => {
    if (celMessage === undefined)
      throw new Error(`metadata.name: rule "${action.type}" needs a cel() message to go into the CRD`);
    return { rule: celRule(action, "self.metadata.name", "metadata.name"), message: celMessage };
  });
}

export const CRD_FILE_HEADER = "# Generated by `bun run src/api/crd-gen.ts` from src/api/webapp.ts. Do not edit.\n";

/** The checked-in file's exact content. */
export function renderCrdYaml(): string {
  return CRD_FILE_HEADER + toYaml(buildWebAppCrd());
}
