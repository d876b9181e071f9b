/**
 * The keys a work queue has ready to hand out (queue.ts), in the order they go out.
 *
 * Guarantees:
 * - Prioritised: a key of higher priority goes before every key of lower priority; keys of one priority go
 *   in the order they were pushed (controller-runtime's priority queue orders the same way).
 * - Raised, never lowered: pushing a key that is here with a lower priority moves it to the back of the
 *   higher one; pushing it with the same or a lower priority leaves it where it is.
 * - Bounded overtaking: at most `maxOvertakes` keys in a row go ahead of the key pushed longest ago (a raise
 *   counts as a push); then that key goes. A stream of urgent keys delays the others, it never starves them.
 * - Each key is here at most once; size() counts keys.
 */

/** How many keys in a row may go ahead of the one that has waited longest (the default of PriorityFifo). */
export const MAX_OVERTAKES = 8;

interface Entry<K> {
  readonly key: K;
  /** Push order over all lanes; an entry is live iff #live holds this very entry for its key. */
  readonly seq: number;
}

interface Lane<K> {
  readonly priority: number;
  /** Entries in push order; those before `head` are taken, others may be stale (raised to another lane). */
  entries: Entry<K>[];
  head: number;
}

export class PriorityFifo<K> {
  readonly #maxOvertakes: number;
  /** One lane per priority seen, highest first. */
  readonly #lanes: Lane<K>[] = [];
  /** The live entry of every key here, and its lane's priority. */
  readonly #live = new Map<K, { entry: Entry<K>; priority: number }>();
  #seq = 0;
  /** Keys taken in a row ahead of the oldest key here. */
  #overtakes = 0;

  constructor(maxOvertakes = MAX_OVERTAKES) {
    if (!Number.isInteger(maxOvertakes) || maxOvertakes < 0)
      throw new RangeError(`PriorityFifo: maxOvertakes must be an integer >= 0, got ${maxOvertakes}`);
    this.#maxOvertakes = maxOvertakes;
  }

  get size(): number {
    return this.#live.size;
  }

  has(key: K): boolean {
    return this.#live.has(key);
  }

  push(key: K, priority = 0): void {
    const current = this.#live.get(key);
    if (current && current.priority >= priority) return;
    const entry = { key, seq: this.#seq++ };
    this.#live.set(key, { entry, priority });
    this.#lane(priority).entries.push(entry);
  }

  /** The next key (see the guarantees), or undefined when empty. */
  take(): K | undefined {
    let first: Lane<K> | undefined;
    let oldest: Lane<K> | undefined;
    for (const lane of this.#lanes) {
      const head = this.#head(lane);
      if (!head) continue;
      first ??= lane;
      if (!oldest || head.seq < (this.#head(oldest) as Entry<K>).seq) oldest = lane;
    }
    if (!first || !oldest) return undefined;
    let lane = first;
    if (oldest === first) this.#overtakes = 0;
    else if (this.#overtakes >= this.#maxOvertakes) {
      lane = oldest;
      this.#overtakes = 0;
    } else this.#overtakes++;
    const entry = lane.entries[lane.head++] as Entry<K>;
    this.#live.delete(entry.key);
    if (lane.head > 1024 && lane.head * 2 > lane.entries.length) {
      lane.entries = lane.entries.slice(lane.head);
      lane.head = 0;
    }
    return entry.key;
  }

  /** The lane's first live entry, dropping stale ones before it. */
  #head(lane: Lane<K>): Entry<K> | undefined {
    for (; lane.head < lane.entries.length; lane.head++) {
      const entry = lane.entries[lane.head] as Entry<K>;
      if (this.#live.get(entry.key)?.entry === entry) return entry;
    }
    lane.entries = [];
    lane.head = 0;
    return undefined;
  }

  #lane(priority: number): Lane<K> {
    let i = 0;
    while (i < this.#lanes.length && (this.#lanes[i] as Lane<K>).priority > priority) i++;
    const found = this.#lanes[i];
    if (found?.priority === priority) return found;
    const lane: Lane<K> = { priority, entries: [], head: 0 };
    this.#lanes.splice(i, 0, lane);
    return lane;
  }
}
