/**
 * The README's main job (`npm start`) against the test cluster: builds, installs the CRD, runs the
 * operator, applies the seed's example and shows it converged; without a terminal it then stops the
 * operator cleanly and exits 0.
 */
import { afterAll, expect, test } from "bun:test";
import { WEBAPPS, kube, kubeconfig, sh } from "./_support.ts";

afterAll(async () => {
  await kube.delete(WEBAPPS, "my-service", "default").catch(() => {});
});

test("npm start converges my-service to 5 ready replicas and shows webapps and deployments", () => {
  const r = sh([process.execPath, "run", "src/build/start.ts"], { env: { KUBECONFIG: kubeconfig } });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("$ kubectl get webapps");
  expect(r.stdout).toMatch(/^my-service\s+myregistry\/myapp:v2\.1\.0\s+5\s+5\s+True\s+/m);
  expect(r.stdout).toContain("$ kubectl get deployments");
  expect(r.stdout).toMatch(/^my-service-deployment\s+5\/5\s+/m);
  expect(r.stderr).toContain("operator stopped (exit 0)");
  expect(r.stderr).not.toMatch(/^\s+at /m);
}, 300_000);
