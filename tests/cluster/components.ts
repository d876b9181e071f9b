/**
 * Command lines of the five control-plane components (pure: paths and ports in, argv out).
 *
 * Contract:
 * - Everything listens on 127.0.0.1 only, on the ports given (chosen free by the caller); with a
 *   bridge address (the cluster's own network namespace) the API server also listens on the bridge.
 * - etcd: single member, no fsync (test data is disposable).
 * - kube-apiserver: client-cert auth against our CA, Node+RBAC authorization, service-account
 *   issuer and keys (TokenRequest works), service range 10.96.0.0/16, network flags per
 *   apiServerNetworkFlags; the aggregation layer's identity (front-proxy client cert, requestheader CA and
 *   headers, as kubeadm sets them), so an extension API server (metrics-server) can be registered; a graceful
 *   stop takes seconds, not a minute.
 * - kube-controller-manager: all default controllers (`*`), no leader election, its own credentials.
 * - kube-scheduler: no leader election.
 * - kwok: plays the kubelet for nodes annotated `kwok.x-k8s.io/node=fake`, with the fast stages
 *   (nodes Ready at once, pods Running/Ready at once, deleted pods removed) and lease heartbeats.
 * - Client QPS of controllers is raised so thousands of pods are not throttled client-side.
 */
import { binaryPath } from "./build.ts";
import { FRONT_PROXY_CLIENT_CN, type PkiFiles } from "./pki.ts";
import type { ComponentName, Ports } from "./state.ts";

/** 65k Service IPs: benchmarks create thousands of Services (a /24 fills up at 254). */
export const SERVICE_CIDR = "10.96.0.0/16";
/** Fictional pod IPs handed out by KWOK; never routed anywhere. */
export const POD_CIDR = "10.244.0.0/16";
export const FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node";

export interface Layout {
  binDir: string;
  pki: PkiFiles;
  ports: Ports;
  /** Admin kubeconfig the components use. */
  kubeconfig: string;
  etcdData: string;
  kwokStages: string[];
  /** Set when the cluster runs in its own network namespace (with the real node): the bridge address. */
  bridgeIp?: string;
}

const LOCALHOST = "127.0.0.1";
const CLIENT_QPS = ["--kube-api-qps=200", "--kube-api-burst=400"];

export function componentArgv(name: ComponentName, l: Layout): string[] {
  const bin = binaryPath(l.binDir, name);
  const { pki, ports } = l;
  switch (name) {
    case "etcd": {
      const client = `http://${LOCALHOST}:${ports.etcdClient}`;
      const peer = `http://${LOCALHOST}:${ports.etcdPeer}`;
      return [
        bin,
        "--name=n0",
        `--data-dir=${l.etcdData}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=n0=${peer}`,
        "--unsafe-no-fsync=true",
        "--quota-backend-bytes=4294967296",
      ];
    }
    case "kube-apiserver":
      return [
        bin,
        `--etcd-servers=http://${LOCALHOST}:${ports.etcdClient}`,
        ...apiServerNetworkFlags(l),
        `--secure-port=${ports.apiServer}`,
        `--tls-cert-file=${pki.serverCert}`,
        `--tls-private-key-file=${pki.serverKey}`,
        `--client-ca-file=${pki.caCert}`,
        "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
        `--service-account-key-file=${pki.saPub}`,
        `--service-account-signing-key-file=${pki.saKey}`,
        `--service-cluster-ip-range=${SERVICE_CIDR}`,
        "--authorization-mode=Node,RBAC",
        "--allow-privileged=true",
        ...aggregationFlags(pki),
        // Graceful stop in ~2 s: without it the HTTP server waits up to 60 s for open watches to end.
        "--shutdown-send-retry-after=true",
      ];
    case "kube-controller-manager":
      return [
        bin,
        `--kubeconfig=${l.kubeconfig}`,
        "--controllers=*",
        "--leader-elect=false",
        "--use-service-account-credentials=false",
        `--root-ca-file=${pki.caCert}`,
        `--service-account-private-key-file=${pki.saKey}`,
        `--bind-address=${LOCALHOST}`,
        `--secure-port=${ports.controllerManager}`,
        ...CLIENT_QPS,
      ];
    case "kube-scheduler":
      return [
        bin,
        `--kubeconfig=${l.kubeconfig}`,
        "--leader-elect=false",
        `--bind-address=${LOCALHOST}`,
        `--secure-port=${ports.scheduler}`,
        ...CLIENT_QPS,
      ];
    case "kwok":
      return [
        bin,
        `--kubeconfig=${l.kubeconfig}`,
        ...l.kwokStages.map((s) => `--config=${s}`),
        `--manage-nodes-with-annotation-selector=${FAKE_NODE_ANNOTATION}=fake`,
        "--node-lease-duration-seconds=40",
        `--cidr=${POD_CIDR}`,
        `--node-ip=${LOCALHOST}`,
        `--server-address=${LOCALHOST}:${ports.kwok}`,
      ];
  }
}

/**
 * On host loopback: bound to 127.0.0.1, no endpoint reconciler (loopback is not a valid endpoint).
 * In the cluster's namespace: all of its addresses (lo + the bridge), advertised on the bridge so the
 * lease reconciler gives the `kubernetes` Service a real endpoint, and a client cert for kubelets.
 */
function apiServerNetworkFlags(l: Layout): string[] {
  if (!l.bridgeIp) {
    return [`--bind-address=${LOCALHOST}`, `--advertise-address=${LOCALHOST}`, "--endpoint-reconciler-type=none"];
  }
  return [
    "--bind-address=0.0.0.0",
    `--advertise-address=${l.bridgeIp}`,
    "--endpoint-reconciler-type=lease",
    `--kubelet-client-certificate=${l.pki.kubeletClientCert}`,
    `--kubelet-client-key=${l.pki.kubeletClientKey}`,
    "--kubelet-preferred-address-types=InternalIP",
    // An APIService's Service is resolved to its endpoint and dialled directly (no kube-proxy hop).
    "--enable-aggregator-routing=true",
  ];
}

/** How the API server proxies to extension API servers and what it tells them to trust (kubeadm's flags). */
function aggregationFlags(pki: PkiFiles): string[] {
  return [
    `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
    `--requestheader-allowed-names=${FRONT_PROXY_CLIENT_CN}`,
    "--requestheader-username-headers=X-Remote-User",
    "--requestheader-group-headers=X-Remote-Group",
    "--requestheader-extra-headers-prefix=X-Remote-Extra-",
    `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
    `--proxy-client-key-file=${pki.frontProxyClientKey}`,
  ];
}

/** URL that answers 200 once the component serves (TLS ones use self-signed certs). */
export function healthUrl(name: ComponentName, ports: Ports): string {
  switch (name) {
    case "etcd":
      return `http://${LOCALHOST}:${ports.etcdClient}/health`;
    case "kube-apiserver":
      return `https://${LOCALHOST}:${ports.apiServer}/readyz`;
    case "kube-controller-manager":
      return `https://${LOCALHOST}:${ports.controllerManager}/healthz`;
    case "kube-scheduler":
      return `https://${LOCALHOST}:${ports.scheduler}/healthz`;
    case "kwok":
      return `http://${LOCALHOST}:${ports.kwok}/healthz`;
  }
}
