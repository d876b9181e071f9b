/**
 * The cluster's own network namespace: every component and pod network lives in it.
 *
 * Contract:
 * - createNetwork(name): `ip netns add` (path /run/netns/<name>), lo up, and a bridge BRIDGE with
 *   BRIDGE_IP/24 that exists only inside the namespace (API server advertise address, node IP, pod
 *   gateway), plus a route for the Service range via the bridge so processes in the namespace reach
 *   Service IPs once kube-proxy has rules. No default route and no link to the host: nothing leaves.
 * - inNetns(path, argv): the command line that runs argv in the namespace with `nsenter --net`, which
 *   (unlike `ip netns exec`) leaves /sys and so the cgroup v1 mounts alone.
 * - deleteNetwork(name): `ip netns delete`; unmounts /run/netns when no namespace is left in it
 *   (`ip netns add` mounts it and never unmounts it). Idempotent.
 * - networkName(clusterDir): a short, stable name per cluster directory, so clusters of several clones
 *   never share a namespace.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { SERVICE_CIDR } from "./components.ts";
import { run } from "./processes.ts";

export const BRIDGE = "cni0";
export const BRIDGE_IP = "10.88.0.1";
/** The pod network of the real node (host-local IPAM hands out addresses from it). */
export const NODE_POD_CIDR = "10.88.0.0/24";
const NETNS_DIR = "/run/netns";

export interface Network {
  name: string;
  /** /run/netns/<name>: what nsenter --net and the forwarder open. */
  path: string;
  bridgeIp: string;
}

export function networkName(clusterDir: string): string {
  return `devctl-${createHash("sha256").update(clusterDir).digest("hex").slice(0, 10)}`;
}

export function inNetns(netnsPath: string, argv: string[]): string[] {
  return ["nsenter", `--net=${netnsPath}`, "--", ...argv];
}

export async function createNetwork(name: string): Promise<Network> {
  const path = `${NETNS_DIR}/${name}`;
  if (existsSync(path)) await deleteNetwork(name);
  await run(["ip", "netns", "add", name]);
  const ip = (...args: string[]) => run(inNetns(path, ["ip", ...args]));
  await ip("link", "set", "lo", "up");
  await ip("link", "add", BRIDGE, "type", "bridge");
  await ip("addr", "add", `${BRIDGE_IP}/24`, "dev", BRIDGE);
  await ip("link", "set", BRIDGE, "up");
  await ip("route", "add", SERVICE_CIDR, "dev", BRIDGE, "src", BRIDGE_IP);
  return { name, path, bridgeIp: BRIDGE_IP };
}

export async function deleteNetwork(name: string): Promise<void> {
  if (existsSync(`${NETNS_DIR}/${name}`)) await run(["ip", "netns", "delete", name]);
  const mounted = readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .some((l) => l.split(" ")[4] === NETNS_DIR);
  if (mounted && existsSync(NETNS_DIR) && readdirSync(NETNS_DIR).length === 0) {
    await run(["umount", NETNS_DIR]).catch(() => undefined); // busy: another namespace appeared meanwhile
  }
}
