import { expect, test } from "bun:test";
import { cpuSeconds } from "./_proc.ts";
import { startHog } from "./_hog.ts";

const alive = (pid: number) => cpuSeconds(pid) !== undefined;

test("a hog spins on a core and stops by itself once its bound has passed, without anyone stopping it", async () => {
  const hog = startHog(1);
  await Bun.sleep(200);
  const a = cpuSeconds(hog.pid) ?? 0;
  await Bun.sleep(300);
  expect((cpuSeconds(hog.pid) ?? 0) - a).toBeGreaterThan(0); // busy, not sleeping
  const deadline = performance.now() + 5000;
  while (alive(hog.pid) && performance.now() < deadline) await Bun.sleep(50);
  await hog.stop();
  expect(alive(hog.pid)).toBe(false);
});

test("stop() ends a hog long before its bound", async () => {
  const hog = startHog(600);
  const t = performance.now();
  await hog.stop();
  expect(performance.now() - t).toBeLessThan(2000);
  expect(alive(hog.pid)).toBe(false);
});
