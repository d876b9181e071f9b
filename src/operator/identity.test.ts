import { expect, test } from "bun:test";
import { leaderIdentity } from "./identity.ts";

test("in a pod the identity is the pod's name; elsewhere the host and the process id", () => {
  expect(leaderIdentity({ POD_NAME: "webapp-operator-7d9-abcde" }, "node-1", 1, "1a2b3c4d")).toBe(
    "webapp-operator-7d9-abcde_1a2b3c4d",
  );
  expect(leaderIdentity({}, "laptop", 4242, "1a2b3c4d")).toBe("laptop_pid4242_1a2b3c4d");
  expect(leaderIdentity({ POD_NAME: " " }, "laptop", 7, "x")).toBe("laptop_pid7_x");
});
