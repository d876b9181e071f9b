import { expect, test } from "bun:test";
import { componentArgv, type Layout } from "./components.ts";
import { pkiFiles } from "./pki.ts";
import { COMPONENTS } from "./state.ts";

const layout: Layout = {
  binDir: "/cache/bin",
  pki: pkiFiles("/state/pki"),
  ports: { etcdClient: 1001, etcdPeer: 1002, apiServer: 1003, controllerManager: 1004, scheduler: 1005, kwok: 1006 },
  kubeconfig: "/state/pki/components.kubeconfig",
  etcdData: "/state/etcd",
  kwokStages: ["/mod/a.yaml", "/mod/b.yaml"],
};

test("every address a component listens on or advertises is on 127.0.0.1", () => {
  for (const name of COMPONENTS) {
    const argv = componentArgv(name, layout);
    expect(argv[0]).toBe(`/cache/bin/${name}`);
    const addresses = argv.filter((a) =>
      /^--(bind-address|advertise-address|server-address|listen-[a-z-]+urls|advertise-client-urls|initial-advertise-peer-urls)=/.test(
        a,
      ),
    );
    for (const a of addresses) expect(a.split("=").slice(1).join("=")).toMatch(/^(https?:\/\/)?127\.0\.0\.1(:\d+)?$/);
  }
  const kwok = componentArgv("kwok", layout);
  expect(kwok).toContain("--server-address=127.0.0.1:1006");
});

test("the API server is wired to etcd, our CA and the service-account keys", () => {
  const argv = componentArgv("kube-apiserver", layout);
  expect(argv).toContain("--etcd-servers=http://127.0.0.1:1001");
  expect(argv).toContain("--secure-port=1003");
  expect(argv).toContain("--client-ca-file=/state/pki/ca.crt");
  expect(argv).toContain("--service-account-signing-key-file=/state/pki/sa.key");
  expect(argv).toContain("--service-account-key-file=/state/pki/sa.pub");
  expect(argv).toContain("--service-cluster-ip-range=10.96.0.0/16");
});

test("kwok gets every stage file and manages only annotated nodes", () => {
  const argv = componentArgv("kwok", layout);
  expect(argv.filter((a) => a.startsWith("--config="))).toEqual(["--config=/mod/a.yaml", "--config=/mod/b.yaml"]);
  expect(argv).toContain("--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake");
});

test("in the cluster's own namespace the API server listens on the bridge too and advertises it to Services", () => {
  const argv = componentArgv("kube-apiserver", { ...layout, bridgeIp: "10.88.0.1" });
  expect(argv).toContain("--bind-address=0.0.0.0");
  expect(argv).toContain("--advertise-address=10.88.0.1");
  expect(argv).toContain("--endpoint-reconciler-type=lease");
  expect(argv).toContain("--kubelet-client-certificate=/state/pki/apiserver-kubelet-client.crt");
  expect(argv).toContain("--kubelet-client-key=/state/pki/apiserver-kubelet-client.key");
  expect(componentArgv("kube-apiserver", layout)).toContain("--endpoint-reconciler-type=none");
});

test("the API server proxies to extension API servers with the front proxy's cert, and dials their endpoints in the namespace", () => {
  const argv = componentArgv("kube-apiserver", layout);
  expect(argv).toContain("--requestheader-client-ca-file=/state/pki/front-proxy-ca.crt");
  expect(argv).toContain("--requestheader-allowed-names=front-proxy-client");
  expect(argv).toContain("--proxy-client-cert-file=/state/pki/front-proxy-client.crt");
  expect(argv).toContain("--proxy-client-key-file=/state/pki/front-proxy-client.key");
  expect(argv).not.toContain("--enable-aggregator-routing=true");
  expect(componentArgv("kube-apiserver", { ...layout, bridgeIp: "10.88.0.1" })).toContain(
    "--enable-aggregator-routing=true",
  );
});
