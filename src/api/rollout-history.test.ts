import { expect, test } from "bun:test";
import { podSpecOf, RECORD_POD_SPEC_MAX, type RolloutRecord, withRecordPodSpec } from "./rollout-history.ts";
import type { WebAppSpec } from "./webapp.ts";

const ready = (podSpec: string | undefined, image = "app:v1"): RolloutRecord => ({
  revision: 1,
  image,
  digest: "d",
  startedAt: "2026-12-05T10:00:00Z",
  readyAt: "2026-12-05T10:00:05Z",
  ...(podSpec !== undefined ? { podSpec } : {}),
});
const now: WebAppSpec = {
  image: "app:v2",
  port: 9090,
  replicas: 4,
  env: [{ name: "MODE", value: "new" }],
  expose: { host: "shop.example.com" },
} as WebAppSpec;

test("a record's podSpec sets back every pod-template field and keeps replicas, expose and the rest", () => {
  const was = { image: "app:v1", port: 8080, command: ["/app"] } as WebAppSpec;
  expect(withRecordPodSpec(now, ready(podSpecOf(was)))).toEqual({
    image: "app:v1",
    port: 8080,
    command: ["/app"],
    replicas: 4,
    expose: { host: "shop.example.com" },
  } as WebAppSpec);
});

test("without a readable podSpec of the record's image, only the image is set back", () => {
  for (const podSpec of [undefined, "{not json", "[1]", JSON.stringify({ image: "other:v9", port: 1 })])
    expect(withRecordPodSpec(now, ready(podSpec))).toEqual({ ...now, image: "app:v1" });
});

test("a podSpec longer than the record keeps is not kept (a rollback then sets the image alone)", () => {
  const env = Array.from({ length: 400 }, (_, i) => ({ name: `V${i}`, value: "x".repeat(100) }));
  expect(JSON.stringify(env).length).toBeGreaterThan(RECORD_POD_SPEC_MAX);
  expect(podSpecOf({ ...now, env } as WebAppSpec)).toBeUndefined();
});
