import { describe, expect, test } from "bun:test";
import { KubeError } from "../../kube/errors.ts";
import { withCrdHint } from "./_hint.ts";

describe("withCrdHint", () => {
  test("a 404 naming no object (the API is not served) says to install the CRD", () => {
    const e = new KubeError(
      "NotFound",
      "list webapps.apps.example.com: the server could not find the requested resource",
      404,
      { kind: "Status", reason: "NotFound", details: {} },
    );
    expect((withCrdHint(e) as Error).message).toContain(
      "the WebApp CRD is not installed in this cluster; install it with `devctl operator install`",
    );
  });

  test("a missing object or namespace is passed on as it is", () => {
    const e = new KubeError("NotFound", 'webapps.apps.example.com "x" not found', 404, {
      kind: "Status",
      reason: "NotFound",
      details: { name: "x" },
    });
    expect(withCrdHint(e)).toBe(e);
    const other = new Error("boom");
    expect(withCrdHint(other)).toBe(other);
  });
});
