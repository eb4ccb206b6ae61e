/** TaskPool: p-queue with a plain first-in first-out list and one shared options object; tasks beyond the concurrency wait and start in order. */
import { expect, it } from 'vitest';
import { TaskPool } from '../src/task-pool.js';
import { FakeClock } from '../src/testing/fake-clock.js';

it('runs at most `concurrency` tasks, starts the waiting ones first in first out, and is idle once all have ended', async () => {
  const clock = new FakeClock(0);
  const pool = new TaskPool(2);
  const started: Array<[string, number]> = [];
  let active = 0;
  let most = 0;
  const task = (name: string, ms: number) => async (): Promise<void> => {
    started.push([name, clock.now()]);
    active += 1;
    most = Math.max(most, active);
    await clock.sleep(ms);
    active -= 1;
  };
  let freed = 0;
  pool.on('next', () => (freed += 1));
  pool.run(task('a', 100));
  pool.run(task('b', 300));
  pool.run(task('c', 100));
  pool.run(task('d', 100));
  pool.run(task('e', 100));
  expect([pool.pending, pool.size]).toEqual([2, 3]);
  let idle = false;
  void pool.onIdle().then(() => (idle = true));
  await clock.advance(400);
  expect(started).toEqual([
    ['a', 0],
    ['b', 0],
    ['c', 100],
    ['d', 200],
    ['e', 300],
  ]);
  expect(most).toBe(2);
  expect(freed).toBe(5);
  expect(idle).toBe(true);
  expect([pool.pending, pool.size]).toEqual([0, 0]);
  // Reused after it emptied: the list starts over.
  pool.run(task('f', 100));
  pool.run(task('g', 100));
  pool.run(task('h', 100));
  expect(pool.size).toBe(1);
  await clock.advance(200);
  expect(started.slice(5)).toEqual([
    ['f', 400],
    ['g', 400],
    ['h', 500],
  ]);
});
