import { expect, test } from "bun:test";
import { classifyError } from "./checks.ts";

const failed = (error: string) => ({
  msg: "[webapp] reconcile of ns/app-046 failed (attempt 10); retrying in 2560 ms",
  error,
});
const rangeFull =
  'create services in namespace "ns": Internal error occurred: failed to allocate a serviceIP for Service "app-046-svc": range is full';

test("a restarting API server's 403 and its 'range is full' for a Service create are transient only while it restarts", () => {
  for (const error of ['services "app-svc" is forbidden: User cannot create', rangeFull]) {
    expect(classifyError(failed(error), true)).toBe("transient");
    expect(classifyError(failed(error), false)).toBe("unexpected");
  }
});

test("other internal errors stay unexpected, restart or not; unreachable and conflicts are transient", () => {
  expect(classifyError(failed("Internal error occurred: something else"), true)).toBe("unexpected");
  expect(classifyError(failed("cannot reach the Kubernetes API server at https://127.0.0.1:1"))).toBe("transient");
  expect(classifyError(failed("Operation cannot be fulfilled: the object has been modified"))).toBe("transient");
  expect(classifyError({ msg: "lost the lease (could not renew it in time)" })).toBe("leadership");
});
