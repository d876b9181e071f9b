/**
 * The real node's configuration files and command lines (pure: layout in, text and argv out).
 *
 * Properties:
 * - containerd (CRI): state, root and socket under the cluster dir; the locally built pause image as
 *   sandbox; restrict_oom_score_adj (CAP_SYS_RESOURCE is missing here); pod netns mounts under the
 *   state dir; every registry host, and the default for any other, served by a closed loopback port,
 *   so a pull attempt fails locally at once.
 * - CNI: one bridge network on BRIDGE with host-local addresses from NODE_POD_CIDR, gateway BRIDGE_IP.
 * - kubelet: cgroupfs under its own cgroup root; failCgroupV1 false; registered with NODE_TAINT and
 *   NODE_LABEL so only pods that select and tolerate it land here; webhook authn/authz (the API
 *   server has a kubelet client cert); no image GC or disk eviction (images are imported, not pulled);
 *   pod logs and every other file under the cluster dir; a resolv.conf that points nowhere.
 * - kube-proxy: iptables mode, conntrack left alone (maxPerCore 0), Services of the whole cluster.
 */
import { BRIDGE, BRIDGE_IP, NODE_POD_CIDR } from "../netns.ts";

/** Label and taint of the real node: pods land there only when they ask for it. */
export const NODE_LABEL = { key: "node.devctl.dev/kind", value: "real" } as const;
export const NODE_TAINT = { key: NODE_LABEL.key, value: NODE_LABEL.value, effect: "NoSchedule" } as const;
/** Built from the kubernetes module's pause.c (pause.ts); never pulled. */
export const PAUSE_IMAGE = "devctl.local/pause:3.10";
/** Nothing listens here: a pull of any image from any registry is refused on loopback. */
export const CLOSED_REGISTRY = "http://127.0.0.1:1";
/** Registry hosts given an explicit closed mirror (`_default` covers every other host). */
export const GUARDED_REGISTRIES = ["docker.io", "ghcr.io", "registry.k8s.io", "quay.io", "gcr.io", "devctl.local"];
export const CNI_BIN_DIR = "/usr/lib/cni";
export const KUBELET_PORT = 10250;

export interface NodeLayout {
  /** Node name and address: the bridge IP (a real hostname would make the API server query DNS). */
  nodeName: string;
  dir: string;
  containerdSocket: string;
  cgroupRoot: string;
  kubeconfig: string;
  caCert: string;
  binDir: string;
}

export const nodeFiles = (dir: string) => ({
  containerdConfig: `${dir}/containerd/config.toml`,
  containerdRoot: `${dir}/containerd/root`,
  containerdState: `${dir}/containerd/state`,
  registryHosts: `${dir}/containerd/certs.d`,
  cniConf: `${dir}/cni`,
  kubeletConfig: `${dir}/kubelet/config.yaml`,
  kubeletRoot: `${dir}/kubelet/root`,
  podLogs: `${dir}/kubelet/pod-logs`,
  resolvConf: `${dir}/kubelet/resolv.conf`,
  kubeProxyConfig: `${dir}/kube-proxy.yaml`,
});

export function containerdConfig(l: NodeLayout): string {
  const f = nodeFiles(l.dir);
  const cri = `plugins."io.containerd.grpc.v1.cri"`;
  return `version = 2
root = "${f.containerdRoot}"
state = "${f.containerdState}"

[grpc]
  address = "${l.containerdSocket}"

[${cri}]
  sandbox_image = "${PAUSE_IMAGE}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  enable_selinux = false

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${f.cniConf}"

[${cri}.registry]
  config_path = "${f.registryHosts}"
`;
}

/** hosts.toml for one registry directory (`_default` or a host name): the closed port is the only upstream. */
export function registryHostsToml(): string {
  return `server = "${CLOSED_REGISTRY}"\n\n[host."${CLOSED_REGISTRY}"]\n  capabilities = ["pull", "resolve"]\n`;
}

export function cniConfList(): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "devctl",
      plugins: [
        {
          type: "bridge",
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: "host-local",
            ranges: [[{ subnet: NODE_POD_CIDR, gateway: BRIDGE_IP, rangeStart: "10.88.0.10" }]],
            routes: [{ dst: "0.0.0.0/0" }],
          },
        },
        { type: "portmap", capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig(l: NodeLayout): string {
  const f = nodeFiles(l.dir);
  const config = {
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    failCgroupV1: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: `/${l.cgroupRoot}`,
    containerRuntimeEndpoint: `unix://${l.containerdSocket}`,
    address: BRIDGE_IP,
    port: KUBELET_PORT,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true, cacheTTL: "10s" },
      x509: { clientCAFile: l.caCert },
    },
    authorization: { mode: "Webhook", webhook: { cacheAuthorizedTTL: "10s", cacheUnauthorizedTTL: "5s" } },
    registerWithTaints: [NODE_TAINT],
    resolvConf: f.resolvConf,
    podLogsDir: f.podLogs,
    failSwapOn: false,
    maxPods: 30,
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: { "memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    nodeStatusUpdateFrequency: "4s",
    serializeImagePulls: true,
    rotateCertificates: false,
    serverTLSBootstrap: false,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function kubeletArgv(l: NodeLayout): string[] {
  const f = nodeFiles(l.dir);
  return [
    `${l.binDir}/kubelet`,
    `--config=${f.kubeletConfig}`,
    `--kubeconfig=${l.kubeconfig}`,
    `--root-dir=${f.kubeletRoot}`,
    `--cert-dir=${f.kubeletRoot}/pki`,
    `--hostname-override=${l.nodeName}`,
    `--node-ip=${BRIDGE_IP}`,
    `--node-labels=${NODE_LABEL.key}=${NODE_LABEL.value}`,
    "--v=1",
  ];
}

export function kubeProxyConfig(l: NodeLayout): string {
  const config = {
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clientConnection: { kubeconfig: l.kubeconfig },
    hostnameOverride: l.nodeName,
    clusterCIDR: NODE_POD_CIDR,
    bindAddress: "127.0.0.1",
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    conntrack: { maxPerCore: 0, min: 0 },
    iptables: { minSyncPeriod: "1s", syncPeriod: "30s" },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function kubeProxyArgv(l: NodeLayout): string[] {
  return [`${l.binDir}/kube-proxy`, `--config=${nodeFiles(l.dir).kubeProxyConfig}`, "--v=1"];
}

export function containerdArgv(l: NodeLayout): string[] {
  return ["/usr/bin/containerd", "--config", nodeFiles(l.dir).containerdConfig];
}
