/**
 * The release workflow (.github/workflows/release.yml): valid for GitHub Actions by actionlint (built
 * from its Go module, tests/_gotool.ts), and doing what the release needs: on a version tag,
 * `npm run release` (four executables, the SBOM, SHA256SUMS), each signed with cosign keyless and
 * published with its Sigstore bundle, and the Dockerfile's image pushed to the image repository install
 * uses by default and signed by digest; every action pinned by commit, an OIDC token only where cosign runs.
 * actionlint runs without shellcheck and pyflakes, so its verdict does not depend on what else the
 * machine has installed.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RELEASE_TARGETS } from "../src/build/_meta.ts";
import { SBOM_FILE } from "../src/build/sbom.ts";
import { DEFAULT_IMAGE_REPOSITORY } from "../src/install/manifests.ts";
import { ACTIONLINT, ensureGoTool } from "./_gotool.ts";
import { ROOT, sh } from "./_support.ts";

const WORKFLOW = join(ROOT, ".github/workflows/release.yml");
const lint = (file: string) => sh([ensureGoTool(ACTIONLINT), "-no-color", "-shellcheck=", "-pyflakes=", file]);

interface Step {
  id?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
interface Workflow {
  on: { push: { tags: string[] } };
  permissions?: Record<string, string>;
  env: Record<string, string>;
  jobs: Record<string, { steps: Step[]; permissions?: Record<string, string> }>;
}

describe("the release workflow", () => {
  test("actionlint finds nothing wrong with it", () => {
    const r = lint(WORKFLOW);
    expect({ code: r.code, findings: r.stdout + r.stderr }).toEqual({ code: 0, findings: "" });
  }, 300_000);

  test("actionlint does find a broken workflow (the check can fail)", () => {
    const dir = mkdtempSync(join(tmpdir(), "devctl-actionlint-"));
    try {
      const broken = join(dir, "broken.yml");
      writeFileSync(
        broken,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression, not a JS template
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ github.nope }}\n        shell: bash\n        timeout: 3\n",
      );
      const r = lint(broken);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain("broken.yml");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  test("on a version tag it builds the executables with npm run release and pushes the Dockerfile's image where install looks", async () => {
    const wf = Bun.YAML.parse(await Bun.file(WORKFLOW).text()) as Workflow;
    expect(wf.on.push.tags).toEqual(["v*.*.*"]);
    const runs = (job: string) => (wf.jobs[job]?.steps ?? []).map((s) => s.run ?? s.uses ?? "");
    expect(runs("binaries")).toContain("npm run release");
    expect(runs("binaries").some((r) => r.includes("sha256sum -c SHA256SUMS"))).toBe(true);
    expect(runs("binaries").some((r) => r.includes("gh release create") && r.includes("dist/release/*"))).toBe(true);
    expect(wf.env.IMAGE_REPOSITORY).toBe(DEFAULT_IMAGE_REPOSITORY);
    const push = runs("image").find((r) => r.includes("docker push")) ?? "";
    expect(push).toContain("docker build --pull=false");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables of the workflow's step
    expect(push).toContain('-t "${IMAGE_REPOSITORY}:${VERSION}" .');
    expect(wf.jobs.image?.permissions).toEqual({ contents: "read", packages: "write", "id-token": "write" });
  });

  test("every action is pinned by commit, and only the jobs that run cosign may ask for an OIDC token", async () => {
    const wf = Bun.YAML.parse(await Bun.file(WORKFLOW).text()) as Workflow;
    const uses = Object.values(wf.jobs).flatMap((j) => j.steps.flatMap((s) => (s.uses ? [s.uses] : [])));
    expect(uses.filter((u) => !/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/.test(u))).toEqual([]);
    expect(uses.filter((u) => u.startsWith("sigstore/cosign-installer@")).length).toBe(2);
    for (const [name, job] of Object.entries(wf.jobs)) {
      const signs = job.steps.some((s) => /\bcosign sign/.test(s.run ?? ""));
      expect({ name, idToken: job.permissions?.["id-token"] }).toEqual({ name, idToken: signs ? "write" : undefined });
    }
    expect(Object.keys(wf.permissions ?? {})).toEqual(["contents"]);
  });

  test("the release signs each executable, the SBOM and SHA256SUMS, and publishes them with their Sigstore bundles", async () => {
    const wf = Bun.YAML.parse(await Bun.file(WORKFLOW).text()) as Workflow;
    const steps = (wf.jobs.binaries?.steps ?? []).map((s) => s.run ?? s.uses ?? "");
    const at = (pred: (r: string) => boolean) => steps.findIndex(pred);
    const sign = steps[at((r) => r.includes("cosign sign-blob"))] ?? "";
    const signed = /for f in ([^;]+); do/.exec(sign)?.[1]?.split(/\s+/) ?? [];
    expect(signed).toEqual([...RELEASE_TARGETS.map((t) => `devctl-${t}`), SBOM_FILE, "SHA256SUMS"]);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables of the workflow's step
    expect(sign).toContain('cosign sign-blob --yes --bundle "${f}.sigstore.json" "$f"');
    const order = [
      at((r) => r === "npm run release"),
      at((r) => r.startsWith("sigstore/cosign-installer@")),
      at((r) => r.includes("cosign sign-blob")),
      at((r) => r.includes("cosign verify-blob --bundle SHA256SUMS.sigstore.json")),
      at((r) => r.includes("gh release create") && r.includes("dist/release/*")),
    ];
    expect(order.every((i, n) => i >= 0 && (n === 0 || i > (order[n - 1] ?? 0)))).toBe(true);
  });

  test("the image is signed by the digest the push gave, never by its tag", async () => {
    const wf = Bun.YAML.parse(await Bun.file(WORKFLOW).text()) as Workflow;
    const steps = wf.jobs.image?.steps ?? [];
    const push = steps.find((s) => s.run?.includes("docker push"));
    expect(push?.id).toBe("push");
    expect(push?.run).toContain("RepoDigests");
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell variables of the workflow's step
    expect(push?.run).toContain('"${IMAGE_REPOSITORY}@sha256:"*) echo "image=${image}" >> "$GITHUB_OUTPUT"');
    const sign = steps.find((s) => s.run?.includes("cosign sign "));
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression
    expect(sign?.env).toEqual({ IMAGE: "${{ steps.push.outputs.image }}" });
    expect(sign?.run).toContain('cosign sign --yes "$IMAGE"');
    expect(steps.indexOf(sign as Step)).toBeGreaterThan(steps.indexOf(push as Step));
  });
});
