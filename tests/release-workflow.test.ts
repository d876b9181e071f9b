/**
 * The release workflow (.github/workflows/release.yml): valid for GitHub Actions by actionlint (built
 * from its Go module, tests/_gotool.ts), and doing what the release needs: on a version tag,
 * `npm run release` (four executables + SHA256SUMS) and the Dockerfile's image pushed to the image
 * repository install uses by default.
 * actionlint runs without shellcheck and pyflakes, so its verdict does not depend on what else the
 * machine has installed.
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_IMAGE_REPOSITORY } from "../src/install/manifests.ts";
import { ACTIONLINT, ensureGoTool } from "./_gotool.ts";
import { ROOT, sh } from "./_support.ts";

const WORKFLOW = join(ROOT, ".github/workflows/release.yml");
const lint = (file: string) => sh([ensureGoTool(ACTIONLINT), "-no-color", "-shellcheck=", "-pyflakes=", file]);

interface Step {
  run?: string;
  uses?: string;
  env?: Record<string, string>;
}
interface Workflow {
  on: { push: { tags: string[] } };
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
    expect(wf.jobs.image?.permissions).toEqual({ contents: "read", packages: "write" });
  });
});
