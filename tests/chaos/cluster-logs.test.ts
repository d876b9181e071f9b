import { afterEach, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { copyLogsSince, markLogs } from "./cluster-logs.ts";

const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "devctl-cluster-logs-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("what each log gained since the mark is copied, and only that", () => {
  const logs = scratch();
  const dest = join(scratch(), "cluster");
  writeFileSync(join(logs, "kube-apiserver.log"), "before the soak\n");
  writeFileSync(join(logs, "etcd.log"), "before\n");
  writeFileSync(join(logs, "kwok.log"), "a long log from before the soak\n");
  writeFileSync(join(logs, "state.json"), "{}");
  const mark = markLogs(logs);
  appendFileSync(join(logs, "kube-apiserver.log"), "during the soak\n");
  writeFileSync(join(logs, "kwok.log"), "replaced\n"); // shorter than at the mark: copied whole
  writeFileSync(join(logs, "metrics-server.log"), "new\n");
  const copied = copyLogsSince(mark, dest);
  expect(copied.map((c) => c.name).sort()).toEqual(["kube-apiserver.log", "kwok.log", "metrics-server.log"]);
  expect(readFileSync(join(dest, "kube-apiserver.log"), "utf8")).toBe("during the soak\n");
  expect(readFileSync(join(dest, "kwok.log"), "utf8")).toBe("replaced\n");
  expect(readFileSync(join(dest, "metrics-server.log"), "utf8")).toBe("new\n");
  expect(copied.find((c) => c.name === "kube-apiserver.log")?.bytes).toBe("during the soak\n".length);
});

test("no log directory, or nothing gained: nothing copied, no directory made", () => {
  const dest = join(scratch(), "cluster");
  expect(copyLogsSince(markLogs(join(scratch(), "absent")), dest)).toEqual([]);
  const logs = scratch();
  writeFileSync(join(logs, "etcd.log"), "x\n");
  expect(copyLogsSince(markLogs(logs), dest)).toEqual([]);
  expect(() => readFileSync(join(dest, "etcd.log"))).toThrow();
});
