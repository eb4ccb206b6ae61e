/** SerialTask: one run at a time; asked for meanwhile, exactly one more run after it; resolves with the last run's result. */
import { expect, it } from 'vitest';
import { SerialTask } from '../src/serial-task.js';
import { FakeClock } from '../src/testing/fake-clock.js';

/** A task whose every run sleeps `ms` on the fake clock, recording when each run started and ended. */
function sleeper(clock: FakeClock, ms: number, options?: ConstructorParameters<typeof SerialTask>[1]) {
  const runs: Array<[number, number]> = [];
  let active = 0;
  let overlapped = false;
  const task = new SerialTask(async () => {
    active += 1;
    if (active > 1) overlapped = true;
    const start = clock.now();
    await clock.sleep(ms);
    runs.push([start, clock.now()]);
    active -= 1;
  }, options);
  return { task, runs, overlapped: () => overlapped };
}

it('runs at once when idle, and is idle again once the run ends', async () => {
  const clock = new FakeClock(0);
  const { task, runs } = sleeper(clock, 100);
  const done = task.run();
  expect(task.running).toBe(done);
  await clock.advance(100);
  await done;
  expect(runs).toEqual([[0, 100]]);
  expect(task.running).toBeUndefined();
});

it('asked for while running (however often), runs exactly once more, after the run under way', async () => {
  const clock = new FakeClock(0);
  const { task, runs, overlapped } = sleeper(clock, 100);
  const first = task.run();
  await clock.advance(50);
  const second = task.run();
  const third = task.run();
  expect(second).toBe(first); // one promise: it resolves when the run that serves the request ends
  expect(third).toBe(first);
  await clock.advance(1_000);
  await first;
  expect(runs).toEqual([[0, 100], [100, 200]]);
  expect(overlapped()).toBe(false);
  expect(task.running).toBeUndefined();
});

it('not asked for again, runs once', async () => {
  const clock = new FakeClock(0);
  const { task, runs } = sleeper(clock, 100);
  void task.run();
  await clock.advance(1_000);
  expect(runs).toEqual([[0, 100]]);
});

it('drops the request made meanwhile when `again` says no at the end of the run', async () => {
  const clock = new FakeClock(0);
  let allowed = true;
  const { task, runs } = sleeper(clock, 100, { again: () => allowed });
  void task.run();
  await clock.advance(50);
  void task.run();
  allowed = false;
  await clock.advance(1_000);
  expect(runs).toEqual([[0, 100]]);
  // A later request is a new run all the same.
  void task.run();
  await clock.advance(100);
  expect(runs).toEqual([[0, 100], [1_050, 1_150]]);
});

it('calls `idle` once after the last run, also when a run throws (and the request rejects)', async () => {
  const clock = new FakeClock(0);
  const idle: number[] = [];
  let calls = 0;
  const task = new SerialTask(
    async () => {
      calls += 1;
      await clock.sleep(10);
      if (calls === 1) throw new Error('boom');
    },
    { idle: () => idle.push(clock.now()) },
  );
  const failed = task.run();
  const caught = failed.catch((error: unknown) => error);
  await clock.advance(10);
  expect(await caught).toEqual(new Error('boom'));
  expect(idle).toEqual([10]);
  expect(task.running).toBeUndefined();
  const ok = task.run();
  void task.run(); // asked again: one more run, then idle once
  await clock.advance(100);
  await ok;
  expect(calls).toBe(3);
  expect(idle).toEqual([10, 30]);
});

it('resolves with what the last run returned: a request made meanwhile gets the run that served it', async () => {
  const clock = new FakeClock(0);
  let calls = 0;
  const task = new SerialTask(async () => {
    calls += 1;
    await clock.sleep(100);
    return calls;
  });
  const first = task.run();
  await clock.advance(50);
  const second = task.run();
  await clock.advance(1_000);
  expect([await first, await second]).toEqual([2, 2]);
  const dropped = new SerialTask(async () => ++calls, { again: () => false });
  const alone = dropped.run();
  const meanwhile = dropped.run(); // dropped by `again`: it gets the run under way's result
  expect([await alone, await meanwhile]).toEqual([3, 3]);
});
