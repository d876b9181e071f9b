/**
 * What the real-node pod-failure suite needs besides the operator: pods of WebApps scheduled onto the real node,
 * and an image that is on the node but whose entrypoint fails.
 *
 * Contract:
 * - routePodsToRealNode(namespace): a MutatingAdmissionPolicy and its binding, matching pods created in that one
 *   namespace, that add the real node's label as nodeSelector and a toleration of exactly its taint. No node is
 *   changed. Resolves once the API server mutates a dry-run pod there; the returned function deletes both.
 * - imageWithEntrypoint(archive, ref, entrypoint): an OCI archive next to `archive` holding the same layers
 *   with a new config (that entrypoint, no Cmd), manifest and index naming `ref`; nothing is pulled or rebuilt.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject, ResourceType } from "../../src/kube/types.ts";
import { NODE_LABEL, NODE_TAINT } from "../cluster/nodes/real-config.ts";
import { eventually, kube, kubectl, sh } from "../_support.ts";

const ADMISSION = { group: "admissionregistration.k8s.io", version: "v1", namespaced: false } as const;
const POLICIES: ResourceType = { ...ADMISSION, plural: "mutatingadmissionpolicies", kind: "MutatingAdmissionPolicy" };
const BINDINGS: ResourceType = {
  ...ADMISSION,
  plural: "mutatingadmissionpolicybindings",
  kind: "MutatingAdmissionPolicyBinding",
};

/** JSON patches in CEL: a nodeSelector for the real node, and its toleration appended (pods get default ones). */
const TOLERATION = JSON.stringify({ ...NODE_TAINT, operator: "Equal" });
const PATCHES = `[
  JSONPatch{op: "add", path: "/spec/nodeSelector", value: ${JSON.stringify({ [NODE_LABEL.key]: NODE_LABEL.value })}},
  has(object.spec.tolerations)
    ? JSONPatch{op: "add", path: "/spec/tolerations/-", value: ${TOLERATION}}
    : JSONPatch{op: "add", path: "/spec/tolerations", value: [${TOLERATION}]}
]`;

export async function routePodsToRealNode(namespace: string): Promise<() => Promise<void>> {
  const name = `${namespace}-to-real-node`;
  const policy: KubeObject = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicy",
    metadata: { name },
    spec: {
      matchConstraints: {
        resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
      },
      failurePolicy: "Fail",
      reinvocationPolicy: "Never",
      mutations: [{ patchType: "JSONPatch", jsonPatch: { expression: PATCHES } }],
    },
  };
  const binding: KubeObject = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name },
    spec: {
      policyName: name,
      matchResources: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } } },
    },
  };
  await kube.create(POLICIES, policy);
  await kube.create(BINDINGS, binding);
  const drop = async () => {
    for (const rt of [BINDINGS, POLICIES]) await kube.delete(rt, name).catch(() => undefined);
  };
  // The API server compiles policies from its informers: wait until a pod created there would be routed.
  await eventually(
    () => {
      const r = kubectl(["run", "probe", "-n", namespace, "--image=x:1", "--dry-run=server", "-o", "json"]);
      const pod = r.code === 0 ? (JSON.parse(r.stdout) as { spec?: { nodeSelector?: object } }) : undefined;
      return pod?.spec?.nodeSelector ? true : undefined;
    },
    30_000,
    `the admission policy ${name} to route pods of ${namespace} to the real node`,
  ).catch(async (e) => {
    await drop();
    throw e;
  });
  return drop;
}

const sha256 = (data: string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

export function imageWithEntrypoint(archive: string, ref: string, entrypoint: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), "devctl-image-"));
  try {
    const untar = sh(["tar", "-xf", archive, "-C", dir]);
    if (untar.code !== 0) throw new Error(`tar -xf ${archive}: ${untar.stderr}`);
    const blob = (digest: string) => join(dir, "blobs", ...digest.split(":"));
    type Index = { manifests: { digest: string }[] };
    type Manifest = { config: { digest: string; size: number } };
    const index = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as Index;
    const manifestDigest = index.manifests[0]?.digest;
    if (!manifestDigest) throw new Error(`${archive} has no manifest`);
    const manifest = JSON.parse(readFileSync(blob(manifestDigest), "utf8")) as Manifest;
    const config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8")) as { config: object };
    const write = (text: string) => {
      const digest = sha256(text);
      writeFileSync(blob(digest), text);
      return { digest, size: Buffer.byteLength(text) };
    };
    const newConfig = write(
      JSON.stringify({ ...config, config: { ...config.config, Entrypoint: entrypoint, Cmd: [] } }),
    );
    const newManifest = write(JSON.stringify({ ...manifest, config: { ...manifest.config, ...newConfig } }));
    const entry = {
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      ...newManifest,
      annotations: { "org.opencontainers.image.ref.name": ref },
    };
    writeFileSync(join(dir, "index.json"), JSON.stringify({ schemaVersion: 2, manifests: [entry] }));
    const out = archive.replace(/\.tar$/, `-${ref.replace(/[^A-Za-z0-9.-]/g, "_")}.tar`);
    const tar = sh(["tar", "-cf", out, "-C", dir, "oci-layout", "index.json", "blobs"]);
    if (tar.code !== 0) throw new Error(`tar -cf ${out}: ${tar.stderr}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
