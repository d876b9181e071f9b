/**
 * The README's main job (`npm start`) against the test cluster: builds, runs the operator, applies the
 * seed's example and shows it converged. With the local cluster's real node the operator runs there
 * from the image (`npm run image` + `operator install --image … --wait`) and stays installed (this
 * suite uninstalls it); without one it runs from dist/devctl and stops cleanly at the end (exit 0).
 */
import { afterAll, expect, test } from "bun:test";
import { clusterState } from "./cluster/control.ts";
import { devctl, kube, kubeconfig, sh, WEBAPPS } from "./_support.ts";

const state = await clusterState();
const node = state?.node;

afterAll(async () => {
  await kube.delete(WEBAPPS, "my-service", "default").catch(() => {});
  if (node) devctl(["operator", "uninstall"]);
});

test("npm start converges my-service to 5 ready replicas and shows webapps and deployments", () => {
  const r = sh([process.execPath, "run", "src/build/start.ts"], { env: { KUBECONFIG: kubeconfig } });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("$ kubectl get webapps");
  expect(r.stdout).toMatch(/^my-service\s+myregistry\/myapp:v2\.1\.0\s+5\s+5\s+True\s+/m);
  expect(r.stdout).toContain("$ kubectl get deployments");
  expect(r.stdout).toMatch(/^my-service-deployment\s+5\/5\s+/m);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  if (node) {
    // The operator runs as a container on the real node, from the image npm start built.
    expect(r.stderr).toContain("the operator runs there as a container");
    expect(r.stdout).toContain("$ kubectl -n devctl-system get pods -o wide");
    const rows = r.stdout.split("\n").filter((l) => l.startsWith("webapp-operator-"));
    expect(rows.length).toBe(2);
    for (const row of rows)
      expect(row).toMatch(new RegExp(`\\s1/1\\s+Running\\s+0\\s+.*\\s${node.name.replace(/\./g, "\\.")}\\s`));
  } else {
    expect(r.stderr).toContain("running the operator locally");
    expect(r.stderr).toContain("operator stopped (exit 0)");
  }
}, 300_000);
