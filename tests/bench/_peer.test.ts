import { expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensurePeer, PEER_DIR, peerKey, peerVersion } from "./_peer.ts";

test("the peer's controller-runtime version is read from its go.mod, and a go.mod without it is an error", () => {
  expect(peerVersion()).toMatch(/^v0\.\d+\.\d+$/);
  expect(peerVersion("require (\n\tsigs.k8s.io/controller-runtime v0.24.1\n)")).toBe("v0.24.1");
  expect(() => peerVersion("module x\n")).toThrow(/does not require sigs.k8s.io\/controller-runtime/);
});

test("the cache key names the version and changes when go.sum or a Go source changes", () => {
  const dir = mkdtempSync(join(tmpdir(), "peer-key-"));
  try {
    cpSync(PEER_DIR, dir, { recursive: true });
    const before = peerKey(dir);
    expect(before).toStartWith(`controller-runtime-${peerVersion()}_`);
    expect(peerKey(dir)).toBe(before);
    writeFileSync(join(dir, "go.sum"), `${readFileSync(join(dir, "go.sum"), "utf8")}\n`);
    const afterSum = peerKey(dir);
    expect(afterSum).not.toBe(before);
    writeFileSync(join(dir, "main.go"), `${readFileSync(join(dir, "main.go"), "utf8")}// changed\n`);
    expect(peerKey(dir)).not.toBe(afterSum);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a peer that does not compile is an error carrying go's message, and nothing is cached", async () => {
  const source = mkdtempSync(join(tmpdir(), "peer-broken-"));
  const cacheRoot = mkdtempSync(join(tmpdir(), "peer-cache-"));
  try {
    writeFileSync(
      join(source, "go.mod"),
      "module example.local/broken\n\ngo 1.26.0\n\nrequire sigs.k8s.io/controller-runtime v0.24.1\n",
    );
    writeFileSync(join(source, "go.sum"), "");
    writeFileSync(join(source, "main.go"), "package main\n\nfunc main() { undefinedCall() }\n");
    const failed = ensurePeer(() => {}, { source, cacheRoot });
    await expect(failed).rejects.toThrow(/go build of the Go peer failed[\s\S]*undefined: undefinedCall/);
    const keyDir = join(cacheRoot, peerKey(source));
    expect(readdirSync(keyDir)).toEqual([]);
  } finally {
    rmSync(source, { recursive: true, force: true });
    rmSync(cacheRoot, { recursive: true, force: true });
  }
});
