/**
 * The one bounded map of the server's caches (docs/design.md, "Caches"): at most `budget` by weight, least recently used
 * first out. A used value moves to the Map's end only once half the kept count were placed after it, so moves are rare.
 */
interface Entry<V> {
  readonly value: V;
  readonly weight: number;
  placedAt: number;
}

export class Lru<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  #weight = 0;
  /** Placements at the end of the order so far. */
  #placements = 0;

  constructor(readonly budget: number) {}

  get size(): number {
    return this.#entries.size;
  }

  get weight(): number {
    return this.#weight;
  }

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (this.#placements - entry.placedAt >= this.#entries.size / 2) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      entry.placedAt = ++this.#placements;
    }
    return entry.value;
  }

  /** Keeps `value` under `key` (replacing any), letting the oldest go to make room; a value heavier than the budget is not kept. */
  set(key: K, value: V, weight = 1): void {
    this.delete(key);
    if (weight > this.budget) return;
    for (const [oldest, entry] of this.#entries) {
      if (this.#weight + weight <= this.budget) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
    this.#entries.set(key, { value, weight, placedAt: ++this.#placements });
    this.#weight += weight;
  }

  /** The keys, least recently used first. */
  keys(): IterableIterator<K> {
    return this.#entries.keys();
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }
}
