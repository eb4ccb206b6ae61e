/**
 * Remembers `build(key)` per key, and forgets everything once `limit` keys are held:
 * the values are pure functions of their keys (tzdata facts, parsed text), so
 * forgetting costs only a rebuild, while a process fed endless distinct keys stays
 * bounded. An undefined result is not remembered.
 */
export class Memo<K, V> {
  readonly #values = new Map<K, V>();
  readonly #limit: number;
  readonly #build: (key: K) => V;

  constructor(limit: number, build: (key: K) => V) {
    this.#limit = limit;
    this.#build = build;
  }

  get(key: K): V {
    let value = this.#values.get(key);
    if (value === undefined) {
      value = this.#build(key);
      if (value === undefined) return value;
      if (this.#values.size >= this.#limit) this.#values.clear();
      this.#values.set(key, value);
    }
    return value;
  }
}
