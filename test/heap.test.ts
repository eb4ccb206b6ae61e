/** MinHeap: smallest key first, ties in insertion order, whatever the order of pushes and pops. */
import { expect, it } from 'vitest';
import { MinHeap } from '../src/heap.js';

it('pops by key, ties in the order they were pushed, and answers undefined once empty', () => {
  const heap = new MinHeap<string>();
  expect(heap.pop()).toBeUndefined();
  expect(heap.peekKey()).toBeUndefined();
  expect(heap.peek()).toBeUndefined();
  for (const [key, value] of [[5, 'a'], [1, 'b'], [5, 'c'], [1_767_225_600_000, 'd'], [1, 'e'], [0.5, 'f']] as const) heap.push(key, value);
  expect(heap.size).toBe(6);
  expect(heap.peekKey()).toBe(0.5);
  expect(heap.peek()).toBe('f');
  const popped: string[] = [];
  for (let value = heap.pop(); value !== undefined; value = heap.pop()) popped.push(value);
  expect(popped).toEqual(['f', 'b', 'e', 'a', 'c', 'd']);
  expect(heap.size).toBe(0);
  heap.push(3, 'g');
  heap.clear();
  expect(heap.size).toBe(0);
  expect(heap.pop()).toBeUndefined();
});

it('agrees with a stable sort over random pushes and pops', () => {
  let seed = 42;
  const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n);
  const heap = new MinHeap<number>();
  const model: { key: number; id: number }[] = [];
  for (let id = 0; id < 2_000; id += 1) {
    if (random(3) === 0 && model.length > 0) {
      model.sort((a, b) => a.key - b.key || a.id - b.id);
      expect(heap.pop()).toBe(model.shift()?.id);
    } else {
      const key = 1_767_225_600_000 + random(50);
      heap.push(key, id);
      model.push({ key, id });
    }
    expect(heap.size).toBe(model.length);
  }
});
