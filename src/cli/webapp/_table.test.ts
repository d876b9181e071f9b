import { describe, expect, test } from "bun:test";
import type { WebAppObject } from "../../api/webapp.ts";
import { webAppRow, webAppTable } from "./_table.ts";

const NOW = Date.parse("2024-05-01T12:00:00Z");
const wa = (name: string, ns: string, extra: Partial<WebAppObject> = {}): WebAppObject => ({
  metadata: { name, namespace: ns, creationTimestamp: "2024-05-01T11:57:00Z" },
  spec: { image: "myregistry/myapp:v2.1.0", replicas: 5, port: 8080 },
  ...extra,
});

describe("the WebApp table", () => {
  test("has kubectl's printer columns, with empty cells for values the object does not have yet", () => {
    expect(webAppRow(wa("my-service", "default"), NOW)).toEqual([
      "my-service",
      "myregistry/myapp:v2.1.0",
      "5",
      "",
      "",
      "",
      "3m",
    ]);
    const converged = wa("my-service", "default", {
      status: {
        availableReplicas: 5,
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "Available",
            message: "",
            lastTransitionTime: "2024-05-01T11:58:00Z",
          },
        ],
      },
    });
    expect(webAppRow(converged, NOW)).toEqual([
      "my-service",
      "myregistry/myapp:v2.1.0",
      "5",
      "5",
      "True",
      "Available",
      "3m",
    ]);
  });

  test("puts NAMESPACE first for all namespaces", () => {
    expect(webAppTable([wa("a", "team-a"), wa("bb", "default")], NOW, true)).toBe(
      "NAMESPACE   NAME   IMAGE                     DESIRED   AVAILABLE   READY   REASON   AGE\n" +
        "team-a      a      myregistry/myapp:v2.1.0   5                                      3m\n" +
        "default     bb     myregistry/myapp:v2.1.0   5                                      3m",
    );
  });

  test("a spec that is not an object still prints a row", () => {
    expect(webAppRow({ metadata: { name: "x" }, spec: "nonsense" }, NOW)).toEqual([
      "x",
      "",
      "",
      "",
      "",
      "",
      "<unknown>",
    ]);
  });
});
