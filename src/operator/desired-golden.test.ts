/**
 * The upgrade promise of issue #31: a WebApp that sets none of the new fields gives exactly the Deployment and
 * Service it gave before them, key order included, so upgrading devctl rolls out no one's pods. The objects in
 * testdata/seed-intents.golden.json were recorded from desired.ts before issue #31 and are never regenerated.
 */
import { describe, expect, test } from "bun:test";
import { parseWebApp } from "../api/parse.ts";
import type { WebAppObject } from "../api/webapp.ts";
import { desiredDeployment, desiredService } from "./desired.ts";

interface GoldenCase {
  what: string;
  webapp: WebAppObject;
  deployment: unknown;
  service: unknown;
}

const golden = (await Bun.file(new URL("./testdata/seed-intents.golden.json", import.meta.url)).json()) as {
  cases: GoldenCase[];
};

describe("a WebApp without the pod-template fields of issue #31", () => {
  test("the golden file holds the seed's examples and the variants around them", () => {
    expect(golden.cases.map((c) => c.what)).toEqual([
      "the seed's my-service example",
      "the seed's test-app example",
      "replicas left out (1)",
      "replicas 1, port 3000, an untagged image",
      "replicas 3, port 65535, imagePullPolicy Never",
      "a digest, imagePullPolicy Always, 1000 replicas",
      "a WebApp never stored (no uid)",
    ]);
  });

  for (const c of golden.cases) {
    test(`${c.what}: the Deployment and the Service are byte for byte those recorded before`, () => {
      const parsed = parseWebApp(c.webapp);
      if (!parsed.ok) throw new Error(`the golden WebApp is invalid: ${JSON.stringify(parsed.issues)}`);
      expect(JSON.stringify(desiredDeployment(parsed.webapp))).toBe(JSON.stringify(c.deployment));
      expect(JSON.stringify(desiredService(parsed.webapp))).toBe(JSON.stringify(c.service));
    });
  }
});
