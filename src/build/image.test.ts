import { describe, expect, test } from "bun:test";
import { type Builder, builderCommands, etcFiles, IMAGE_UID, imageRef, lddLibraries, pickBuilder } from "./image.ts";

const LDD = `	linux-vdso.so.1 (0x00007ffd6b1f5000)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0b8a000000)
	libpthread.so.0 => /lib/x86_64-linux-gnu/libpthread.so.0 (0x00007f0b8a2f0000)
	libdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f0b8a2eb000)
	libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0b8a20c000)
	/lib64/ld-linux-x86-64.so.2 (0x00007f0b8a312000)
`;

describe("the image's contents", () => {
  test("ldd's libraries and loader are taken at their paths, the vDSO is skipped", () => {
    expect(lddLibraries(LDD)).toEqual([
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib/x86_64-linux-gnu/libdl.so.2",
      "/lib/x86_64-linux-gnu/libm.so.6",
      "/lib/x86_64-linux-gnu/libpthread.so.0",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
  });

  test("a library ldd cannot resolve is an error naming it", () => {
    expect(() => lddLibraries("\tlibfoo.so.1 => not found\n")).toThrow("libfoo.so.1 => not found");
  });

  test("the dist/devctl built here needs exactly the libraries the staged rootfs gets", async () => {
    const bin = new URL("../../dist/devctl", import.meta.url).pathname;
    if (!(await Bun.file(bin).exists())) throw new Error("build dist/devctl first (npm run build)");
    const r = Bun.spawnSync(["ldd", bin], { stdout: "pipe" });
    const libs = lddLibraries(r.stdout.toString());
    expect(libs.some((l) => l.endsWith("/libc.so.6"))).toBe(true);
    expect(libs.filter((l) => /libstdc\+\+|libgcc_s/.test(l))).toEqual([]);
  });

  test("/etc/passwd and /etc/group name the image's only user, 65532", () => {
    const { passwd, group } = etcFiles();
    expect(passwd).toContain(`nonroot:x:${IMAGE_UID}:${IMAGE_UID}:`);
    expect(group).toContain(`nonroot:x:${IMAGE_UID}:`);
  });

  test("the reference carries the version and commit, made tag-safe", () => {
    expect(imageRef("0.1.0", "abc123-dirty")).toBe("devctl.local/devctl:0.1.0-abc123-dirty");
    expect(imageRef("0.1.0", "a/b+c")).toBe("devctl.local/devctl:0.1.0-a-b-c");
  });
});

describe("the builders", () => {
  test("buildah and podman never pull; each writes an archive the loaders accept", () => {
    const [bah] = builderCommands("buildah", "r:1", "/a.tar", "/Dockerfile");
    expect(bah).toContain("--pull=never");
    expect(builderCommands("buildah", "r:1", "/a.tar", "/Dockerfile")[1]).toEqual([
      "buildah",
      "push",
      "r:1",
      "oci-archive:/a.tar:r:1",
    ]);
    expect(builderCommands("podman", "r:1", "/a.tar", "/Dockerfile")[0]).toContain("--pull=never");
    expect(builderCommands("podman", "r:1", "/a.tar", "/Dockerfile")[1]).toContain("oci-archive");
    expect(builderCommands("docker", "r:1", "/a.tar", "/Dockerfile")[1]).toEqual([
      "docker",
      "save",
      "-o",
      "/a.tar",
      "r:1",
    ]);
  });

  test("the Dockerfile pulls nothing: every stage is FROM scratch, the entrypoint is `devctl operator run`", async () => {
    const dockerfile = await Bun.file(new URL("../../Dockerfile", import.meta.url)).text();
    const froms = dockerfile.split("\n").filter((l) => /^FROM /i.test(l));
    expect(froms.length).toBeGreaterThan(0);
    for (const f of froms) expect(f).toMatch(/^FROM scratch(\s+AS\s+\S+)?$/);
    expect(dockerfile).toContain('ENTRYPOINT ["/devctl", "operator", "run"]');
    expect(dockerfile).toMatch(/^USER 65532:65532$/m);
  });
});

describe("picking a builder", () => {
  const probe = (installed: Builder[], engine = false) => ({
    installed: (b: Builder) => installed.includes(b),
    usable: (b: Builder) => b !== "docker" || engine,
  });

  test("buildah first, then podman, then docker", () => {
    expect(pickBuilder(undefined, probe(["docker", "podman", "buildah"], true))).toBe("buildah");
    expect(pickBuilder(undefined, probe(["docker", "podman"], true))).toBe("podman");
    expect(pickBuilder(undefined, probe(["docker"], true))).toBe("docker");
  });

  test("a docker client with no engine behind it is passed over, and the error says why when nothing else is there", () => {
    expect(pickBuilder(undefined, probe(["docker", "buildah"]))).toBe("buildah");
    expect(() => pickBuilder(undefined, probe(["docker"]))).toThrow(
      /no image builder found \(docker is installed, but no Docker engine answers.*install buildah/,
    );
    expect(() => pickBuilder("docker", probe(["docker"]))).toThrow(/--builder docker: no Docker engine answers/);
  });

  test("--builder names one of the three, installed", () => {
    expect(() => pickBuilder("kaniko", probe([]))).toThrow(
      '--builder must be one of buildah, podman, docker, not "kaniko"',
    );
    expect(() => pickBuilder("podman", probe(["buildah"]))).toThrow("--builder podman: podman is not installed");
  });
});
