/**
 * A map whose entries expire, bounded (k8s.io/apimachinery's LRUExpireCache, without the LRU): the memories a
 * reconciler keeps between passes.
 *
 * Properties:
 * - An entry is forgotten `ttlMs` after it was last set (on the injected clock); at most `max` entries are held,
 *   the oldest set going first.
 * - Expired entries are dropped whenever the map is used, so keys never looked up again do not accumulate.
 */
import type { Clock } from "./clock.ts";

export class ExpiringMap<V> {
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #max: number;
  /** In the order they were set (a set moves the key to the end), so the oldest entry is first. */
  readonly #entries = new Map<string, { value: V; at: number }>();

  constructor(clock: Clock, ttlMs: number, max: number) {
    this.#clock = clock;
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  get size(): number {
    this.#prune();
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    this.#prune();
    return this.#entries.get(key)?.value;
  }

  set(key: string, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, at: this.#clock.now() });
    this.#prune();
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Drops expired entries and the oldest beyond `max`: both are at the front. */
  #prune(): void {
    const now = this.#clock.now();
    for (const [key, { at }] of this.#entries) {
      if (now - at < this.#ttlMs && this.#entries.size <= this.#max) return;
      this.#entries.delete(key);
    }
  }
}
