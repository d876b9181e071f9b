/**
 * The release's software bill of materials: a CycloneDX 1.6 JSON document of what the executables carry,
 * written by `npm run release` as dist/release/devctl.cdx.json.
 *
 * Properties:
 * - Derived from the build itself: the components are the npm packages that own an input of the bundle
 *   (Bun's metafile; a package imported but tree-shaken away entirely, as `jose` is, owns none), mapped to
 *   their package.json (name, version, license) and to package-lock.json (the tarball's SHA-512). A dev
 *   dependency is never bundled, so never listed; a transitive one that is bundled is. A module Bun provides
 *   itself (`undici`, `ws`: external in the metafile) is part of the Bun runtime, listed once as the
 *   `platform` component with its version (and as the tool that built it).
 * - The dependency graph is the bundle's: package A depends on package B when an input of A imports one of B
 *   (devctl's own sources, src/, are the metadata.component `devctl`).
 * - Reproducible: the timestamp is the build time of _meta.ts (SOURCE_DATE_EPOCH, else the commit's time) and
 *   the serialNumber a UUID derived from the document's content, so the same commit gives the same bytes.
 * - A bundled package that declares no license is an error naming it: a release says what it ships under.
 */
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const SBOM_FILE = "devctl.cdx.json";

/** The parts of Bun's metafile read here (`bun build --metafile`, `Bun.build({ metafile: true })`). */
export interface Metafile {
  inputs: Record<string, { imports?: { path: string; external?: boolean; entryPoint?: string }[] }>;
}
export interface PackageJson {
  name?: string;
  version?: string;
  license?: string | { type?: string };
  licenses?: { type?: string }[];
}
export interface Lockfile {
  packages?: Record<string, { integrity?: string }>;
}

type License = { license: { id: string } | { name: string } } | { expression: string };
export interface Component {
  type: "library" | "application" | "platform";
  "bom-ref": string;
  group?: string;
  name: string;
  version: string;
  purl: string;
  description?: string;
  licenses: License[];
  hashes?: { alg: "SHA-512"; content: string }[];
  externalReferences?: { type: "website" | "vcs"; url: string }[];
  properties?: { name: string; value: string }[];
}

/** Where an input of the bundle lives: its package's directory (as the metafile spells it) and lockfile key. */
export function packageOfInput(input: string): { dir: string; lockKey: string } | undefined {
  const last = input.lastIndexOf("node_modules/");
  if (last < 0) return undefined;
  const rest = input.slice(last + "node_modules/".length).split("/");
  const name = rest[0]?.startsWith("@") ? rest.slice(0, 2).join("/") : rest[0];
  if (!name) return undefined;
  const dir = input.slice(0, last + "node_modules/".length + name.length);
  return { dir, lockKey: dir.slice(dir.indexOf("node_modules/")) };
}

export function npmPurl(name: string, version: string): string {
  return `pkg:npm/${name.startsWith("@") ? `%40${name.slice(1)}` : name}@${encodeURIComponent(version)}`;
}

/** package.json's license as CycloneDX: an SPDX id, an SPDX expression, or a name. */
export function licensesOf(pkg: PackageJson, where: string): License[] {
  const declared = [
    ...(typeof pkg.license === "string" ? [pkg.license] : pkg.license?.type ? [pkg.license.type] : []),
    ...(pkg.licenses ?? []).flatMap((l) => (l.type ? [l.type] : [])),
  ];
  if (declared.length === 0)
    throw new Error(
      `${pkg.name ?? where}@${pkg.version ?? "?"} (${where}) is bundled into devctl but its package.json declares no ` +
        "license: find out its license before releasing it, or stop importing it",
    );
  if (declared.length === 1 && /\s(OR|AND|WITH)\s|[()]/.test(declared[0] ?? ""))
    return [{ expression: declared[0] ?? "" }];
  return declared.map((d) => (/^[A-Za-z0-9.+-]+$/.test(d) ? { license: { id: d } } : { license: { name: d } }));
}

function sha512Hex(integrity: string | undefined): string | undefined {
  const b64 = integrity?.split(/\s+/).find((i) => i.startsWith("sha512-"));
  return b64 ? Buffer.from(b64.slice("sha512-".length), "base64").toString("hex") : undefined;
}

export interface Bundled {
  components: Component[];
  /** bom-ref → the bom-refs it imports (DEVCTL_REF for devctl's own sources). */
  dependsOn: Map<string, Set<string>>;
}

/** devctl's own bom-ref: the owner of every input that is in no npm package (src/). */
export const DEVCTL_REF = "devctl";
const BUN_REF = "bun-runtime";

/** The npm packages that own the bundle's inputs, and which imports which. */
export function bundledPackages(
  metafiles: Metafile[],
  readPackage: (dir: string) => PackageJson,
  lock: Lockfile,
): Bundled {
  const byRef = new Map<string, Component>();
  const refOfDir = new Map<string, string>();
  const owner = (input: string): string => {
    const at = packageOfInput(input);
    if (!at) return DEVCTL_REF;
    const known = refOfDir.get(at.dir);
    if (known) return known;
    const pkg = readPackage(at.dir);
    if (!pkg.name || !pkg.version) throw new Error(`${at.dir}/package.json has no name or version`);
    const purl = npmPurl(pkg.name, pkg.version);
    const slash = pkg.name.startsWith("@") ? pkg.name.indexOf("/") : -1;
    const hash = sha512Hex(lock.packages?.[at.lockKey]?.integrity);
    byRef.set(purl, {
      type: "library",
      "bom-ref": purl,
      ...(slash > 0 ? { group: pkg.name.slice(0, slash) } : {}),
      name: slash > 0 ? pkg.name.slice(slash + 1) : pkg.name,
      version: pkg.version,
      purl,
      licenses: licensesOf(pkg, at.lockKey),
      ...(hash ? { hashes: [{ alg: "SHA-512" as const, content: hash }] } : {}),
    });
    refOfDir.set(at.dir, purl);
    return purl;
  };
  const dependsOn = new Map<string, Set<string>>();
  // An import whose target is no input was dropped by the bundler (nothing of it used): not bundled, no edge.
  const inputs = new Set(metafiles.flatMap((m) => Object.keys(m.inputs)));
  for (const meta of metafiles)
    for (const [input, { imports }] of Object.entries(meta.inputs)) {
      const from = owner(input);
      if (!dependsOn.has(from)) dependsOn.set(from, new Set());
      for (const imp of imports ?? []) {
        const target = imp.entryPoint ?? imp.path;
        const to = inputs.has(target) ? owner(target) : undefined;
        if (to && to !== from) dependsOn.get(from)?.add(to);
      }
    }
  const components = [...byRef.values()].sort((a, b) => a["bom-ref"].localeCompare(b["bom-ref"]));
  return { components, dependsOn };
}

export interface SbomInput {
  devctl: { version: string; license: string; commit: string };
  bunVersion: string;
  bundled: Bundled;
  /** ISO 8601, from _meta.ts buildTime(). */
  timestamp: string;
}

/** A UUID (RFC 9562 version 8, i.e. custom) from a hash: the same content always gets the same serialNumber. */
export function contentUuid(content: string): string {
  const h = createHash("sha256").update(content).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x80;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export function buildSbom({ devctl, bunVersion, bundled, timestamp }: SbomInput): Record<string, unknown> {
  const bun: Component = {
    type: "platform",
    "bom-ref": BUN_REF,
    name: "bun",
    version: bunVersion,
    purl: `pkg:github/oven-sh/bun@bun-v${bunVersion}`,
    description:
      "The Bun runtime, compiled into every executable by `bun build --compile`; provides node:*, undici and ws",
    licenses: [{ license: { id: "MIT" } }],
    externalReferences: [{ type: "website", url: "https://bun.sh" }],
  };
  const dependencies = [
    { ref: DEVCTL_REF, dependsOn: [BUN_REF, ...[...(bundled.dependsOn.get(DEVCTL_REF) ?? [])].sort()] },
    { ref: BUN_REF, dependsOn: [] },
    ...bundled.components.map((c) => ({
      ref: c["bom-ref"],
      dependsOn: [...(bundled.dependsOn.get(c["bom-ref"]) ?? [])].sort(),
    })),
  ];
  const body = {
    $schema: "http://cyclonedx.org/schema/bom-1.6.schema.json",
    bomFormat: "CycloneDX",
    specVersion: "1.6",
    version: 1,
    metadata: {
      timestamp,
      lifecycles: [{ phase: "build" }],
      tools: { components: [{ type: "application", name: "bun", version: bunVersion, purl: bun.purl }] },
      component: {
        type: "application",
        "bom-ref": DEVCTL_REF,
        name: "devctl",
        version: devctl.version,
        purl: npmPurl("devctl", devctl.version),
        licenses: [{ license: { id: devctl.license } }],
        properties: [{ name: "devctl:commit", value: devctl.commit }],
      },
    },
    components: [bun, ...bundled.components],
    dependencies,
  };
  const { $schema, bomFormat, specVersion, ...rest } = body;
  const serialNumber = `urn:uuid:${contentUuid(JSON.stringify(body))}`;
  return { $schema, bomFormat, specVersion, serialNumber, ...rest };
}

/**
 * The SBOM of devctl at `root` (its package.json and package-lock.json) from a build's metafiles, whose
 * inputs are relative to the build's working directory `cwd`.
 */
export function sbomOf(metafiles: Metafile[], root: string, build: SbomBuild, cwd = root): Record<string, unknown> {
  const readJson = <T>(path: string) => JSON.parse(readFileSync(path, "utf8")) as T;
  const own = readJson<{ version: string; license: string }>(join(root, "package.json"));
  const lock = readJson<Lockfile>(join(root, "package-lock.json"));
  const bundled = bundledPackages(metafiles, (dir) => readJson<PackageJson>(resolve(cwd, dir, "package.json")), lock);
  return buildSbom({ ...build, devctl: { version: own.version, license: own.license, commit: build.commit }, bundled });
}
export type SbomBuild = Omit<SbomInput, "bundled" | "devctl"> & { commit: string };

export function writeSbom(metafilePaths: string[], out: string, root: string, build: SbomBuild): void {
  const metafiles = metafilePaths.map((p) => JSON.parse(readFileSync(p, "utf8")) as Metafile);
  writeFileSync(out, `${JSON.stringify(sbomOf(metafiles, root, build), null, 2)}\n`);
}
