import { describe, expect, test } from "bun:test";
import { mountsUnder } from "../mounts.ts";
import { inNetns } from "../netns.ts";
import { ociArchive } from "./pause.ts";
import { cgroupMounts } from "./real.ts";
import {
  CLOSED_REGISTRY,
  containerdConfig,
  kubeletConfig,
  kubeProxyConfig,
  NODE_TAINT,
  type NodeLayout,
  registryHostsToml,
} from "./real-config.ts";
import { installSteps, SCHEDULING_FLAGS } from "./schedule.ts";

const layout: NodeLayout = {
  nodeName: "10.88.0.1",
  dir: "/c/node",
  containerdSocket: "/c/node/containerd.sock",
  cgroupRoot: "devctl-abc",
  kubeconfig: "/c/pki/components.kubeconfig",
  caCert: "/c/pki/ca.crt",
  binDir: "/bin",
};

describe("the real node's configuration", () => {
  test("containerd keeps everything under the node dir and never lowers oom_score_adj", () => {
    const toml = containerdConfig(layout);
    expect(toml).toContain('root = "/c/node/containerd/root"');
    expect(toml).toContain('state = "/c/node/containerd/state"');
    expect(toml).toContain('address = "/c/node/containerd.sock"');
    expect(toml).toContain("restrict_oom_score_adj = true");
    expect(toml).toContain("netns_mounts_under_state_dir = true");
    expect(toml).toContain('sandbox_image = "devctl.local/pause:3.10"');
    expect(toml).toContain('config_path = "/c/node/containerd/certs.d"');
  });

  test("every registry is served by a closed loopback port only", () => {
    expect(registryHostsToml()).toStartWith(`server = "${CLOSED_REGISTRY}"`);
    expect(CLOSED_REGISTRY).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  test("the kubelet registers tainted, runs on cgroup v1 and authorizes every caller with the API server", () => {
    const c = JSON.parse(kubeletConfig(layout));
    expect(c.registerWithTaints).toEqual([NODE_TAINT]);
    expect(c.failCgroupV1).toBe(false);
    expect(c.cgroupRoot).toBe("/devctl-abc");
    expect(c.authentication.anonymous.enabled).toBe(false);
    expect(c.authentication.webhook.enabled).toBe(true);
    expect(c.authorization.mode).toBe("Webhook");
    expect(c.readOnlyPort).toBe(0);
    expect(c.podLogsDir).toStartWith("/c/node/");
  });

  test("kube-proxy leaves the host's conntrack settings alone", () => {
    const c = JSON.parse(kubeProxyConfig(layout));
    expect(c.mode).toBe("iptables");
    expect(c.conntrack.maxPerCore).toBe(0);
    expect(c.hostnameOverride).toBe("10.88.0.1");
  });

  test("the operator is scheduled with the node's exact taint, never a blanket toleration", () => {
    expect(SCHEDULING_FLAGS).toContain(`${NODE_TAINT.key}=${NODE_TAINT.value}:${NODE_TAINT.effect}`);
    const steps = installSteps({ image: "i", namespace: "n", wait: true, deployment: "d" }, false);
    expect(steps.map((s) => s.tool)).toEqual(["devctl", "kubectl", "devctl"]);
    const patch = JSON.parse(steps[1]?.args.at(-1) ?? "{}");
    expect(patch.spec.template.spec.tolerations).toEqual([{ ...NODE_TAINT, operator: "Equal" }]);
    expect(installSteps({ image: "i", namespace: "n", wait: false, deployment: "d" }, true)).toEqual([
      { tool: "devctl", args: ["operator", "install", "-n", "n", "--image", "i", ...SCHEDULING_FLAGS] },
    ]);
  });
});

describe("host plumbing", () => {
  test("components enter the namespace with nsenter --net, not ip netns exec (which remounts /sys)", () => {
    expect(inNetns("/run/netns/x", ["kubelet", "--v=1"])).toEqual([
      "nsenter",
      "--net=/run/netns/x",
      "--",
      "kubelet",
      "--v=1",
    ]);
  });

  const MOUNTINFO = [
    "30 1 0:26 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
    "31 1 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw",
    "40 1 8:1 /c/node/kubelet/root /c/node/kubelet/root rw - ext4 /dev/vda rw",
    "41 40 0:50 / /c/node/kubelet/root/pods/u/volumes/x rw - tmpfs tmpfs rw",
    "42 1 0:51 / /c/nodes-other rw - tmpfs tmpfs rw",
  ].join("\n");

  test("mounts under the node dir are found deepest first, a sibling with the same prefix is not", () => {
    expect(mountsUnder("/c/node", MOUNTINFO)).toEqual([
      "/c/node/kubelet/root/pods/u/volumes/x",
      "/c/node/kubelet/root",
    ]);
  });

  test("every cgroup hierarchy is found, v1 and v2", () => {
    expect(cgroupMounts(MOUNTINFO)).toEqual(["/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified"]);
  });

  test("the pause image's index, manifest and config point at each other by digest", async () => {
    const files = ociArchive(new Uint8Array([1, 2, 3]), "devctl.local/pause:3.10", ["/pause"]);
    const index = JSON.parse(new TextDecoder().decode(files.get("index.json")));
    expect(index.manifests[0].annotations["io.containerd.image.name"]).toBe("devctl.local/pause:3.10");
    const manifestDigest = index.manifests[0].digest.replace("sha256:", "");
    const manifest = JSON.parse(new TextDecoder().decode(files.get(`blobs/sha256/${manifestDigest}`)));
    expect(files.has(`blobs/sha256/${manifest.config.digest.replace("sha256:", "")}`)).toBe(true);
    expect(files.get(`blobs/sha256/${manifest.layers[0].digest.replace("sha256:", "")}`)).toEqual(
      new Uint8Array([1, 2, 3]),
    );
  });
});
