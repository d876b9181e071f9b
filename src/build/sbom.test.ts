import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  buildSbom,
  bundledPackages,
  type Component,
  contentUuid,
  licensesOf,
  type Metafile,
  npmPurl,
  packageOfInput,
  sbomOf,
} from "./sbom.ts";

const root = resolve(import.meta.dir, "../..");

describe("the pure parts", () => {
  test("an input maps to the innermost package that holds it, and to that package's lockfile key", () => {
    expect(packageOfInput("node_modules/citty/dist/index.mjs")).toEqual({
      dir: "node_modules/citty",
      lockKey: "node_modules/citty",
    });
    expect(packageOfInput("../main/node_modules/@kubernetes/client-node/node_modules/undici/index.js")).toEqual({
      dir: "../main/node_modules/@kubernetes/client-node/node_modules/undici",
      lockKey: "node_modules/@kubernetes/client-node/node_modules/undici",
    });
    expect(packageOfInput("src/main.ts")).toBeUndefined();
  });

  test("a purl percent-encodes the scope's @", () => {
    expect(npmPurl("@kubernetes/client-node", "2.0.1")).toBe("pkg:npm/%40kubernetes/client-node@2.0.1");
    expect(npmPurl("citty", "0.2.2")).toBe("pkg:npm/citty@0.2.2");
  });

  test("a license is an SPDX id, an SPDX expression, or a name; none at all is an error naming the package", () => {
    expect(licensesOf({ license: "MIT" }, "x")).toEqual([{ license: { id: "MIT" } }]);
    expect(licensesOf({ license: "(MIT OR Apache-2.0)" }, "x")).toEqual([{ expression: "(MIT OR Apache-2.0)" }]);
    expect(licensesOf({ licenses: [{ type: "BSD" }, { type: "GPL-2.0" }] }, "x")).toEqual([
      { license: { id: "BSD" } },
      { license: { id: "GPL-2.0" } },
    ]);
    expect(licensesOf({ license: "SEE LICENSE IN LICENSE.md" }, "x")).toEqual([
      { license: { name: "SEE LICENSE IN LICENSE.md" } },
    ]);
    expect(() => licensesOf({ name: "nolicense", version: "1.0.0" }, "node_modules/nolicense")).toThrow(
      "nolicense@1.0.0 (node_modules/nolicense) is bundled into devctl but its package.json declares no license",
    );
  });

  test("packages are found from the inputs, once per name@version, with the graph of their imports", () => {
    // "shaken" is imported but no input (tree-shaken away): neither a component nor an edge
    const meta: Metafile = {
      inputs: {
        "src/main.ts": {
          imports: [
            { path: "node_modules/a/index.js" },
            { path: "./chunk-x.js", external: true, entryPoint: "node_modules/b/lazy.js" },
            { path: "undici", external: true },
            { path: "node_modules/shaken/index.js" },
          ],
        },
        "node_modules/a/index.js": { imports: [{ path: "node_modules/a/node_modules/b/index.js" }] },
        "node_modules/a/node_modules/b/index.js": {},
        "node_modules/b/lazy.js": {},
      },
    };
    const pkgs: Record<string, { name: string; version: string; license: string }> = {
      "node_modules/a": { name: "a", version: "1.0.0", license: "MIT" },
      "node_modules/a/node_modules/b": { name: "b", version: "1.0.0", license: "ISC" },
      "node_modules/b": { name: "b", version: "2.0.0", license: "ISC" },
    };
    const lock = { packages: { "node_modules/a": { integrity: `sha512-${Buffer.from("hash").toString("base64")}` } } };
    const { components, dependsOn } = bundledPackages([meta, meta], (dir) => pkgs[dir] ?? {}, lock);
    expect(components.map((c) => c["bom-ref"])).toEqual(["pkg:npm/a@1.0.0", "pkg:npm/b@1.0.0", "pkg:npm/b@2.0.0"]);
    expect(components[0]?.hashes).toEqual([{ alg: "SHA-512", content: Buffer.from("hash").toString("hex") }]);
    expect(components[1]?.hashes).toBeUndefined();
    expect([...(dependsOn.get("devctl") ?? [])]).toEqual(["pkg:npm/a@1.0.0", "pkg:npm/b@2.0.0"]);
    expect([...(dependsOn.get("pkg:npm/a@1.0.0") ?? [])]).toEqual(["pkg:npm/b@1.0.0"]);
  });

  test("the same build gives the same document, serialNumber included; another time gives another serialNumber", () => {
    const bundled = { components: [] as Component[], dependsOn: new Map<string, Set<string>>() };
    const input = {
      devctl: { version: "1.2.3", license: "Apache-2.0", commit: "abc" },
      bunVersion: "1.4.5",
      bundled,
      timestamp: "2026-12-05T00:00:00.000Z",
    };
    expect(JSON.stringify(buildSbom(input))).toBe(JSON.stringify(buildSbom(input)));
    expect(buildSbom(input).serialNumber).not.toBe(
      buildSbom({ ...input, timestamp: "2026-12-06T00:00:00.000Z" }).serialNumber,
    );
    expect(contentUuid("x")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

interface Sbom {
  bomFormat: string;
  specVersion: string;
  serialNumber: string;
  version: number;
  metadata: {
    timestamp: string;
    tools: { components: { name: string; version: string }[] };
    component: { name: string; version: string; purl: string; licenses: unknown[] };
  };
  components: Component[];
  dependencies: { ref: string; dependsOn: string[] }[];
}

describe("the SBOM of devctl's own bundle", async () => {
  const built = await Bun.build({
    entrypoints: [join(root, "src/main.ts")],
    root,
    target: "bun",
    format: "esm",
    splitting: true,
    metafile: true,
    throw: true,
  });
  const meta = built.metafile as unknown as Metafile; // its inputs are relative to the working directory
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const build = { commit: "0123456789ab", bunVersion: Bun.version, timestamp: "2026-12-05T00:00:00.000Z" };
  const sbom = sbomOf([meta], root, build, process.cwd()) as unknown as Sbom;
  const fullName = (c: Component) => (c.group ? `${c.group}/${c.name}` : c.name);

  test("has CycloneDX 1.6's required fields, devctl as metadata.component and Bun as tool and platform", () => {
    expect(sbom.bomFormat).toBe("CycloneDX");
    expect(sbom.specVersion).toBe("1.6");
    expect(sbom.version).toBe(1);
    expect(sbom.serialNumber).toMatch(/^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(sbom.metadata.timestamp).toBe("2026-12-05T00:00:00.000Z");
    expect(sbom.metadata.component).toMatchObject({
      name: "devctl",
      version: pkg.version,
      purl: `pkg:npm/devctl@${pkg.version}`,
    });
    expect(sbom.metadata.tools.components).toContainEqual(
      expect.objectContaining({ name: "bun", version: Bun.version }),
    );
    expect(sbom.components).toContainEqual(
      expect.objectContaining({ type: "platform", name: "bun", version: Bun.version }),
    );
  });

  test("lists every npm package that owns an input of the bundle, with its installed version, a purl and a license", () => {
    const expected = new Set<string>();
    for (const input of Object.keys(meta.inputs)) {
      const at = packageOfInput(input);
      if (!at) continue;
      const p = JSON.parse(readFileSync(resolve(at.dir, "package.json"), "utf8")) as { name: string; version: string };
      expected.add(`${p.name}@${p.version}`);
    }
    const libraries = sbom.components.filter((c) => c.type === "library");
    expect(new Set(libraries.map((c) => `${fullName(c)}@${c.version}`))).toEqual(expected);
    for (const dep of Object.keys(pkg.dependencies))
      expect([...expected].some((e) => e.startsWith(`${dep}@`))).toBe(true);
    for (const c of libraries) {
      expect(c.purl).toBe(npmPurl(fullName(c), c.version));
      expect(c.licenses.length).toBeGreaterThan(0);
      expect(c.hashes?.[0]?.content).toMatch(/^[0-9a-f]{128}$/);
    }
  });

  test("holds no npm undici: Bun's built-in stands in, so package.json's override of undici changes no shipped code", () => {
    expect(Object.keys(meta.inputs).filter((i) => packageOfInput(i)?.dir.endsWith("node_modules/undici"))).toEqual([]);
    const imports = Object.values(meta.inputs).flatMap((i) => i.imports ?? []);
    expect(imports.some((i) => i.path === "undici" && i.external)).toBe(true); // client-node imports it; Bun resolves it
    expect(Object.keys((pkg as { overrides?: object }).overrides ?? {})).toEqual(["undici"]);
  });

  test("lists no dev dependency, and every component is reached from devctl in its dependency graph", () => {
    const names = sbom.components.filter((c) => c.type === "library").map(fullName);
    for (const dev of Object.keys(pkg.devDependencies)) expect(names).not.toContain(dev);
    const edges = new Map(sbom.dependencies.map((d) => [d.ref, d.dependsOn]));
    const seen = new Set<string>(["devctl"]);
    const todo = ["devctl"];
    for (let ref = todo.pop(); ref !== undefined; ref = todo.pop())
      for (const next of edges.get(ref) ?? []) if (!seen.has(next)) todo.push(next) && seen.add(next);
    expect(sbom.components.map((c) => c["bom-ref"]).filter((r) => !seen.has(r))).toEqual([]);
  });
});
