import { describe, expect, test } from "bun:test";
import { PriorityFifo } from "./priority-fifo.ts";

const drain = <K>(f: PriorityFifo<K>): K[] => {
  const out: K[] = [];
  for (let k = f.take(); k !== undefined; k = f.take()) out.push(k);
  return out;
};

describe("priority fifo", () => {
  test("keys of one priority go in the order they were pushed", () => {
    const f = new PriorityFifo<string>();
    for (const k of ["a", "b", "c"]) f.push(k);
    expect(drain(f)).toEqual(["a", "b", "c"]);
  });

  test("a key of higher priority goes before keys pushed earlier", () => {
    const f = new PriorityFifo<string>();
    f.push("a");
    f.push("b");
    f.push("x", 1);
    f.push("y", 2);
    expect(drain(f)).toEqual(["y", "x", "a", "b"]);
  });

  test("pushing a key again with a higher priority raises it, with a lower one leaves it", () => {
    const f = new PriorityFifo<string>();
    for (const k of ["a", "b", "c"]) f.push(k);
    f.push("c", 1);
    f.push("c", 0);
    f.push("b");
    expect(f.size).toBe(3);
    expect(drain(f)).toEqual(["c", "a", "b"]);
    expect(f.size).toBe(0);
  });

  test("a raised key goes to the back of its new priority", () => {
    const f = new PriorityFifo<string>();
    f.push("a");
    f.push("x", 1);
    f.push("a", 1);
    expect(drain(f)).toEqual(["x", "a"]);
  });

  test("after maxOvertakes keys went ahead of the oldest key, the oldest goes next", () => {
    const f = new PriorityFifo<string>(2);
    f.push("old");
    for (const k of ["u1", "u2", "u3", "u4", "u5"]) f.push(k, 1);
    expect(drain(f)).toEqual(["u1", "u2", "old", "u3", "u4", "u5"]);
  });

  test("taking the oldest key restarts the count of overtakes", () => {
    const f = new PriorityFifo<string>(1);
    f.push("a");
    f.push("b");
    f.push("u1", 1);
    f.push("u2", 1);
    f.push("u3", 1);
    // u1 overtakes a; a goes; u2 overtakes b; b goes; u3 is the oldest then.
    expect(drain(f)).toEqual(["u1", "a", "u2", "b", "u3"]);
  });

  test("with maxOvertakes 0 keys go in push order whatever their priority", () => {
    const f = new PriorityFifo<string>(0);
    f.push("a");
    f.push("x", 5);
    f.push("b");
    expect(drain(f)).toEqual(["a", "x", "b"]);
  });

  test("has() and size follow pushes, raises and takes", () => {
    const f = new PriorityFifo<string>();
    expect(f.take()).toBeUndefined();
    f.push("a");
    f.push("a", 3);
    expect(f.has("a")).toBe(true);
    expect(f.size).toBe(1);
    expect(f.take()).toBe("a");
    expect(f.has("a")).toBe(false);
    expect(f.take()).toBeUndefined();
  });

  test("many keys through one priority keep their order as the taken part is dropped", () => {
    const f = new PriorityFifo<number>();
    const order: number[] = [];
    for (let i = 0; i < 5000; i++) {
      f.push(i);
      if (i % 3 === 0) order.push(f.take() as number);
    }
    order.push(...drain(f));
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  test("a negative or fractional maxOvertakes is refused", () => {
    expect(() => new PriorityFifo(-1)).toThrow(/maxOvertakes/);
    expect(() => new PriorityFifo(1.5)).toThrow(/maxOvertakes/);
  });
});
