/**
 * Records what the Kubernetes API server's own code makes of devctl's objects into the unit tests' fixtures:
 * `bun run tests/apicheck.ts`. No cluster is started: tests/cluster/go/kube/apicheck (Go, built from the module
 * that pins the test cluster's k8s.io/kubernetes and k8s.io/apiextensions-apiserver v1.36; seconds with a warm Go
 * build cache, at the lowest CPU priority) runs the API server's validation, defaulting and encoding on them.
 *
 * Properties:
 * - The CRD (crd/webapps.apps.example.com.yaml) passes the API server's own CRD validation: structural schema,
 *   CEL compilation and estimated cost. Anything else stops the recording with the errors.
 * - src/api/testdata/spec-verdicts.json: each WebApp of spec-cases.ts as the CRD admits or refuses it (schema
 *   and CEL), with the sha256 of the CRD and of each spec; crd-verdicts.test.ts checks parseWebAppSpec agrees and
 *   that neither changed since.
 * - src/api/testdata/quantities.json: quantity texts as the API server stores them; quantity.test.ts checks
 *   canonicalQuantity gives the same.
 * - src/operator/testdata/server-stored.json: the Deployment intent of each WebApp of template-cases.ts, and the
 *   Deployment the API server stores for it (decoded, defaulted, validated, encoded); desired-server.test.ts
 *   checks that the intent is still the one sent and that the stored object reads as no drift.
 * The fixtures are written sorted and indented, so a new recording shows in a diff as what changed.
 */
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseWebApp } from "../src/api/parse.ts";
import { SPEC_CASES, VALIBOT_ONLY_CASES } from "../src/api/testdata/spec-cases.ts";
import { QUANTITY_INPUTS } from "../src/api/testdata/quantity-inputs.ts";
import { desiredDeployment } from "../src/operator/desired.ts";
import { TEMPLATE_CASES } from "../src/operator/testdata/template-cases.ts";

const root = join(import.meta.dir, "..");
const CRD_FILE = join(root, "crd/webapps.apps.example.com.yaml");
const MODULE = join(import.meta.dir, "cluster/go/kube");

async function build(): Promise<string> {
  const out = join(tmpdir(), "devctl-apicheck");
  const env = { ...process.env, CGO_ENABLED: "0", GOFLAGS: "-buildvcs=false", GOTOOLCHAIN: "local", GOMAXPROCS: "1" };
  const p = Bun.spawn(["nice", "-n", "19", "go", "build", "-trimpath", "-o", out, "./apicheck"], {
    cwd: MODULE,
    env,
    stdout: "inherit",
    stderr: "inherit",
  });
  if ((await p.exited) !== 0) throw new Error("go build of tests/cluster/go/kube/apicheck failed");
  return out;
}

async function apicheck<T>(bin: string, args: string[], input?: unknown): Promise<T> {
  const p = Bun.spawn([bin, ...args], {
    stdin: input === undefined ? "ignore" : new Blob([JSON.stringify(input)]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [text, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`apicheck ${args.join(" ")} failed (exit ${code}): ${err}`);
  return JSON.parse(text) as T;
}

/** sha256 of a text, or of a value's JSON text. */
export const sha256 = (x: unknown): string =>
  createHash("sha256")
    .update(typeof x === "string" ? x : JSON.stringify(x))
    .digest("hex");

const write = (path: string, data: unknown) => Bun.write(join(root, path), `${JSON.stringify(data, null, 2)}\n`);
const webappObject = (spec: unknown, name = "app") => ({
  apiVersion: "apps.example.com/v1",
  kind: "WebApp",
  metadata: { name, namespace: "default", uid: `uid-${name}` },
  spec,
});

async function main(): Promise<void> {
  const bin = await build();
  const crdErrors = await apicheck<string[]>(bin, ["crd", CRD_FILE]);
  if (crdErrors.length > 0) throw new Error(`the API server refuses the CRD:\n${crdErrors.join("\n")}`);
  const crdText = await Bun.file(CRD_FILE).text();
  const crdSha256 = sha256(crdText);

  const cases = [...SPEC_CASES, ...VALIBOT_ONLY_CASES];
  const judged = await apicheck<{ errors: string[] }[]>(
    bin,
    ["webapps", CRD_FILE],
    cases.map((c) => webappObject(c.spec)),
  );
  const verdicts = cases.map((c, i) => ({ what: c.what, specSha256: sha256(c.spec), errors: judged[i]?.errors ?? [] }));
  await write("src/api/testdata/spec-verdicts.json", { crdSha256, verdicts });

  const stored = await apicheck<string[]>(bin, ["quantities"], QUANTITY_INPUTS);
  const pairs = QUANTITY_INPUTS.map((q, i) => JSON.stringify([q, stored[i]]));
  await Bun.write(join(root, "src/api/testdata/quantities.json"), `[\n${pairs.join(",\n")}\n]\n`);

  const intents = TEMPLATE_CASES.map((c) => {
    const parsed = parseWebApp(webappObject(c.spec, c.name));
    if (!parsed.ok)
      throw new Error(`template case "${c.what}" is not a valid WebApp: ${JSON.stringify(parsed.issues)}`);
    return desiredDeployment(parsed.webapp);
  });
  const deployments = await apicheck<{ errors: string[]; stored?: unknown }[]>(bin, ["deployments"], intents);
  await write(
    "src/operator/testdata/server-stored.json",
    TEMPLATE_CASES.map((c, i) => ({ what: c.what, sent: intents[i], ...deployments[i] })),
  );
  console.log(
    `recorded ${verdicts.length} verdicts, ${QUANTITY_INPUTS.length} quantities, ${intents.length} Deployments`,
  );
}

if (import.meta.main) await main();
