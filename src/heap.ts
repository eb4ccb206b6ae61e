/**
 * A binary min-heap keyed by a number: the timer loop's "earliest due job" and the
 * fake clock's timer queue. Ties pop in insertion order, so equal deadlines keep
 * the order they were armed in. Entries are kept in three parallel arrays, not an
 * object each: the planner's heap holds an entry per planned job, and a number array
 * stores its keys unboxed (an object and a boxed key cost 64 bytes an entry).
 */
export class MinHeap<T> {
  readonly #keys: number[] = [];
  /** Insertion order, for ties. */
  readonly #seqs: number[] = [];
  readonly #values: T[] = [];
  #seq = 0;

  get size(): number {
    return this.#keys.length;
  }

  push(key: number, value: T): void {
    this.#keys.push(key);
    this.#seqs.push(this.#seq++);
    this.#values.push(value);
    this.#up(this.#keys.length - 1);
  }

  /** The smallest key without removing it. */
  peekKey(): number | undefined {
    return this.#keys.length === 0 ? undefined : this.#keys[0];
  }

  peek(): T | undefined {
    return this.#values.length === 0 ? undefined : this.#values[0];
  }

  pop(): T | undefined {
    const last = this.#keys.length - 1;
    if (last < 0) return undefined;
    const top = this.#values[0];
    this.#swap(0, last);
    this.#keys.pop();
    this.#seqs.pop();
    this.#values.pop();
    if (last > 0) this.#down(0);
    return top;
  }

  clear(): void {
    this.#keys.length = 0;
    this.#seqs.length = 0;
    this.#values.length = 0;
  }

  #less(i: number, j: number): boolean {
    const a = this.#keys[i]!;
    const b = this.#keys[j]!;
    return a < b || (a === b && this.#seqs[i]! < this.#seqs[j]!);
  }

  #swap(i: number, j: number): void {
    const keys = this.#keys;
    const seqs = this.#seqs;
    const values = this.#values;
    // Through locals, not a destructuring swap: that builds an array per swap until the code is optimized.
    const key = keys[i]!;
    keys[i] = keys[j]!;
    keys[j] = key;
    const seq = seqs[i]!;
    seqs[i] = seqs[j]!;
    seqs[j] = seq;
    const value = values[i]!;
    values[i] = values[j]!;
    values[j] = value;
  }

  #up(index: number): void {
    let i = index;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(index: number): void {
    const size = this.#keys.length;
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < size && this.#less(left, smallest)) smallest = left;
      if (right < size && this.#less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
