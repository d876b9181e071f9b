/**
 * A binary min-heap: push and pop in O(log n), peek in O(1).
 * Contract: `pop()` returns the least element by `less`; among equal elements the order is unspecified.
 */
export class MinHeap<T> {
  /** Heap-ordered: for every i > 0, !less(items[i], items[(i - 1) >> 1]). */
  readonly #items: T[] = [];
  readonly #less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  get size(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const a = this.#items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(a[i] as T, a[parent] as T)) break;
      [a[i], a[parent]] = [a[parent] as T, a[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const a = this.#items;
    const top = a[0];
    const last = a.pop();
    if (a.length === 0 || last === undefined) return top;
    a[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.#less(a[l] as T, a[m] as T)) m = l;
      if (r < a.length && this.#less(a[r] as T, a[m] as T)) m = r;
      if (m === i) break;
      [a[i], a[m]] = [a[m] as T, a[i] as T];
      i = m;
    }
    return top;
  }

  clear(): void {
    this.#items.length = 0;
  }
}
