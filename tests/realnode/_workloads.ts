/**
 * What the real-node pod-failure suite needs besides the operator: pods of WebApps scheduled onto the real node,
 * and an image that is on the node but whose entrypoint fails.
 *
 * Contract:
 * - routePodsToRealNode(namespace): a MutatingAdmissionPolicy and its binding, matching pods created in that one
 *   namespace, that add the real node's label as nodeSelector and a toleration of exactly its taint. No node is
 *   changed. Resolves once the API server mutates a dry-run pod there (one that Pod Security "restricted" admits, so
 *   a namespace enforcing it can be routed too); the returned function deletes both.
 * - imageWithEntrypoint(archive, ref, entrypoint): an OCI archive next to `archive` holding the same layers
 *   with a new config (that entrypoint, no Cmd), manifest and index naming `ref`; nothing is pulled or rebuilt.
 * - busyboxImage(ref, dir): an OCI archive in `dir` of an image FROM scratch holding only the machine's static busybox
 *   (Debian's busybox-static, a prerequisite of the real node): /bin/busybox, a link per applet in /bin (sh, httpd,
 *   sleep...), an empty world-writable /www (httpd's document root) and /tmp; User 65535:65535 (numeric, non-root:
 *   what Pod Security's "restricted" runAsNonRoot needs when nothing sets runAsUser), entrypoint
 *   `httpd -f -p 8080 -h /www`. Refuses a dynamically linked /bin/busybox (Debian's `busybox` package).
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KubeObject, ResourceType } from "../../src/kube/types.ts";
import { ociArchive } from "../cluster/nodes/pause.ts";
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

/** The dry-run pod's fields that Pod Security "restricted" asks for (what podSecurity: restricted sets, plus a user). */
const RESTRICTED_PROBE = `--overrides=${JSON.stringify({
  spec: {
    securityContext: { runAsNonRoot: true, runAsUser: 65535, seccompProfile: { type: "RuntimeDefault" } },
    containers: [
      {
        name: "probe",
        image: "x:1",
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
      },
    ],
  },
})}`;

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
      const r = kubectl([
        "run",
        "probe",
        "-n",
        namespace,
        "--image=x:1",
        "--dry-run=server",
        "-o",
        "json",
        RESTRICTED_PROBE,
      ]);
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

export const BUSYBOX = "/bin/busybox";

export function busyboxImage(ref: string, dir: string): string {
  const ldd = sh(["ldd", BUSYBOX]);
  if (!`${ldd.stdout}${ldd.stderr}`.includes("not a dynamic executable")) {
    throw new Error(`${BUSYBOX} is not statically linked (apt-get install busybox-static): ${ldd.stdout}`);
  }
  const applets = sh([BUSYBOX, "--list"])
    .stdout.split("\n")
    .filter((a) => /^[a-z][\w.[-]*$/.test(a));
  if (!applets.includes("httpd")) throw new Error(`${BUSYBOX} has no httpd applet`);
  const root = join(dir, "rootfs");
  mkdirSync(join(root, "bin"), { recursive: true });
  copyFileSync(BUSYBOX, join(root, "bin", "busybox"));
  chmodSync(join(root, "bin", "busybox"), 0o755);
  for (const applet of applets) if (applet !== "busybox") symlinkSync("busybox", join(root, "bin", applet));
  for (const d of ["www", "tmp"]) {
    mkdirSync(join(root, d));
    chmodSync(join(root, d), 0o1777);
  }
  const layer = join(dir, "layer.tar");
  const tar = sh(["tar", "--owner=0", "--group=0", "--numeric-owner", "-C", root, "-cf", layer, "bin", "www", "tmp"]);
  if (tar.code !== 0) throw new Error(`tar -cf ${layer}: ${tar.stderr}`);
  const layout = join(dir, "layout");
  for (const [path, bytes] of ociArchive(readFileSync(layer), ref, ["/bin/httpd", "-f", "-p", "8080", "-h", "/www"])) {
    mkdirSync(join(layout, path, ".."), { recursive: true });
    writeFileSync(join(layout, path), bytes);
  }
  const archive = join(dir, "busybox.oci.tar");
  const pack = sh(["tar", "--owner=0", "--group=0", "--numeric-owner", "-C", layout, "-cf", archive, "."]);
  if (pack.code !== 0) throw new Error(`tar -cf ${archive}: ${pack.stderr}`);
  return archive;
}
