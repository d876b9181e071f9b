/**
 * A table bounded without knowing which of its entries are still wanted (an intern table whose users come and go
 * unannounced): two generations of at most `generation` entries each.
 *
 * Properties:
 * - Bounded: at most 2 × `generation` entries are held.
 * - What is in use stays: an entry found in the older generation moves to the newer one; an entry is dropped only
 *   after a whole generation of other entries was set without anyone asking for it.
 * - When the newer generation is full, it becomes the older one and the old older one is dropped at once (no
 *   per-entry bookkeeping: a Map per generation, nothing else).
 */
export class Generations<V> {
  readonly #generation: number;
  /** Entries set or found since the last turn; never more than #generation. */
  #newer = new Map<string, V>();
  /** The newer generation before the last turn: found entries move out of it. */
  #older = new Map<string, V>();

  constructor(generation: number) {
    if (!(generation >= 1)) throw new Error(`generation must be at least 1, got ${generation}`);
    this.#generation = generation;
  }

  get size(): number {
    return this.#newer.size + this.#older.size;
  }

  get(key: string): V | undefined {
    const value = this.#newer.get(key);
    if (value !== undefined) return value;
    const older = this.#older.get(key);
    if (older !== undefined) {
      this.#older.delete(key);
      this.set(key, older);
    }
    return older;
  }

  set(key: string, value: V): void {
    if (!this.#newer.has(key) && this.#newer.size >= this.#generation) {
      this.#older = this.#newer;
      this.#newer = new Map();
    }
    this.#newer.set(key, value);
  }
}
