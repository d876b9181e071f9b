/**
 * devctl and the API server agree on which WebApps are valid, and where they are not: each spec of
 * testdata/spec-cases.ts was judged by the API server's own code (tests/apicheck.ts runs kube-apiserver v1.36's
 * CRD validation, schema and CEL, on the checked-in CRD) into testdata/spec-verdicts.json.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { renderCrdYaml } from "./crd.ts";
import { parseWebAppSpec } from "./parse.ts";
import { SPEC_CASES, type SpecCase, VALIBOT_ONLY_CASES } from "./testdata/spec-cases.ts";

interface Verdict {
  what: string;
  specSha256: string;
  errors: string[];
}

const recorded = (await Bun.file(new URL("./testdata/spec-verdicts.json", import.meta.url)).json()) as {
  crdSha256: string;
  verdicts: Verdict[];
};
const sha256 = (x: unknown) =>
  createHash("sha256")
    .update(typeof x === "string" ? x : JSON.stringify(x))
    .digest("hex");
const RERECORD = "the recording is stale: run `bun run tests/apicheck.ts`";

const verdictOf = (c: SpecCase): Verdict => {
  const v = recorded.verdicts.find((r) => r.what === c.what);
  if (!v || v.specSha256 !== sha256(c.spec)) throw new Error(`${c.what}: ${RERECORD}`);
  return v;
};
const ours = (c: SpecCase) => parseWebAppSpec({ metadata: { name: "app" }, spec: c.spec });
/** "spec.env[0]" from "spec.env[0]: Invalid value: ...", the field the API server names. */
const fieldOf = (error: string) => error.slice(0, error.indexOf(": "));

describe("the API server's verdicts on the spec cases", () => {
  test("were recorded against the CRD as checked in", () => {
    expect(recorded.crdSha256 === sha256(renderCrdYaml()) ? "current" : RERECORD).toBe("current");
    expect(recorded.verdicts.length).toBe(SPEC_CASES.length + VALIBOT_ONLY_CASES.length);
  });

  test("cover valid and invalid specs alike", () => {
    const refused = SPEC_CASES.filter((c) => verdictOf(c).errors.length > 0);
    expect(refused.length).toBeGreaterThan(40);
    expect(SPEC_CASES.length - refused.length).toBeGreaterThan(10);
  });

  for (const c of SPEC_CASES) {
    test(`${c.what}: parseWebAppSpec agrees with the API server, naming the same field`, () => {
      const server = verdictOf(c).errors;
      const out = ours(c);
      if (server.length === 0) {
        expect(out.ok ? [] : out.issues).toEqual([]);
        return;
      }
      expect(out.ok).toBe(false);
      if (out.ok) return;
      const serverFields = new Set(server.map(fieldOf));
      for (const issue of out.issues) expect(serverFields).toContain(issue.path);
    });
  }

  for (const c of VALIBOT_ONLY_CASES) {
    test(`${c.what}: refused by devctl only (a rule marked valibotOnly), the CRD admits it`, () => {
      expect(verdictOf(c).errors).toEqual([]);
      expect(ours(c).ok).toBe(false);
    });
  }
});
