/**
 * A binary min-heap keyed by a number: the timer loop's "earliest due job" and the
 * fake clock's timer queue. Ties pop in insertion order, so equal deadlines keep
 * the order they were armed in.
 */
export class MinHeap<T> {
  readonly #items: { key: number; seq: number; value: T }[] = [];
  #seq = 0;

  get size(): number {
    return this.#items.length;
  }

  push(key: number, value: T): void {
    this.#items.push({ key, seq: this.#seq++, value });
    this.#up(this.#items.length - 1);
  }

  /** The smallest key without removing it. */
  peekKey(): number | undefined {
    return this.#items[0]?.key;
  }

  peek(): T | undefined {
    return this.#items[0]?.value;
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (top !== undefined && last !== undefined && items.length > 0) {
      items[0] = last;
      this.#down(0);
    }
    return top?.value;
  }

  clear(): void {
    this.#items.length = 0;
  }

  #less(i: number, j: number): boolean {
    const a = this.#items[i]!;
    const b = this.#items[j]!;
    return a.key < b.key || (a.key === b.key && a.seq < b.seq);
  }

  #swap(i: number, j: number): void {
    const items = this.#items;
    [items[i], items[j]] = [items[j]!, items[i]!];
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
    let i = index;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < this.#items.length && this.#less(left, smallest)) smallest = left;
      if (right < this.#items.length && this.#less(right, smallest)) smallest = right;
      if (smallest === i) return;
      this.#swap(i, smallest);
      i = smallest;
    }
  }
}
