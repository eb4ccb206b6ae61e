/**
 * A run's data is what was given, on every store: JSON `null` is a value (not "use
 * the job's default"), a handler that changes its `ctx.data` changes no other run,
 * and an object the app changes after `register()` or `trigger()` (or a `RunInfo`
 * it was handed) changes nothing the scheduler or the store keeps. The memory
 * store, which keeps objects rather than text, must behave as Redis and Postgres do.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler, type JsonValue, type RunContext } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers, type OpenedStore } from './every-store.js';

const T0 = '2026-01-01T00:00:00Z';

afterAll(closeServers);

/** A scheduler on `opened`'s store whose handlers record what they were given. */
async function withScheduler(
  opened: OpenedStore,
  test: (s: { scheduler: Scheduler; clock: FakeClock; seen: Map<string, JsonValue | undefined>; errors: string[] }) => Promise<void>,
): Promise<void> {
  const clock = new FakeClock(T0);
  const scheduler = new Scheduler({ store: opened.store, clock });
  const errors: string[] = [];
  scheduler.on('error', (error) => errors.push(error.message));
  try {
    await test({ scheduler, clock, seen: new Map(), errors });
  } finally {
    const stopping = scheduler.stop();
    await clock.advance('1m');
    await stopping;
    await opened.dispose();
  }
}

/** JSON that a store writing text could change: NUL, a lone surrogate, an emoji, `__proto__`, -0, 2^53. */
function exotic(): JsonValue {
  return JSON.parse('{"__proto__": {"polluted": true}, "text": "a\\u0000b\\ud800c😀", "n": [-0, 9007199254740992, 1e-7], "nested": {"x": [[[]]], "y": null}}') as JsonValue;
}

/** A value as JSON keeps it (-0 becomes 0): what every store hands back, whether it keeps text or objects. */
function asJson(value: JsonValue | undefined): JsonValue | undefined {
  return value === undefined ? undefined : (JSON.parse(JSON.stringify(value)) as JsonValue);
}

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`run data, ${target.kind} store`, () => {
    it('hands a manual run exactly its data: null, falsy values and exotic JSON; absent data means the job\'s', async () => {
      await withScheduler(await target.open(), async ({ scheduler, clock, seen, errors }) => {
        scheduler.register({
          name: 'job',
          schedule: '0 0 1 1 *',
          data: { default: true },
          history: { succeeded: 10 },
          handler: ({ runId, data }: RunContext) => void seen.set(runId, data),
        });
        await scheduler.start();
        const given: [string, JsonValue | undefined][] = [
          ['null', null],
          ['zero', 0],
          ['empty', ''],
          ['false', false],
          ['exotic', exotic()],
          ['absent', undefined],
        ];
        for (const [key, data] of given) {
          const run = await scheduler.trigger('job', data === undefined ? { idempotencyKey: key } : { idempotencyKey: key, data });
          expect(run.data, key).toEqual(asJson(data));
        }
        await clock.advance('1m');
        expect(errors).toEqual([]);
        for (const [key, data] of given) expect(seen.get(`job.manual.${key}`), key).toEqual(data === undefined ? { default: true } : asJson(data));
        expect(Object.getPrototypeOf(seen.get('job.manual.exotic'))).toBe(Object.prototype); // `__proto__` stayed a key
        const stored = await scheduler.listRuns('job');
        expect(stored.find((run) => run.id === 'job.manual.null')?.data).toBeNull();
        expect(stored.find((run) => run.id === 'job.manual.absent')).not.toHaveProperty('data');
      });
    });

    it('keeps every run\'s data from what handlers, and the app after handing it over, do to their objects', async () => {
      await withScheduler(await target.open(), async ({ scheduler, clock, seen, errors }) => {
        const definitionData = { list: [1], count: 0 };
        let failFirst = true;
        scheduler.register({
          name: 'job',
          schedule: '* * * * *',
          data: definitionData,
          retry: { limit: 1, initialDelay: '1s' },
          handler: ({ runId, attempt, data }: RunContext) => {
            const value = data as { list: number[]; count: number; extra?: string };
            seen.set(`${runId}#${attempt}`, JSON.parse(JSON.stringify(value)) as JsonValue);
            value.list.push(99);
            value.count += 1;
            value.extra = 'written by the handler';
            if (runId.includes('manual') && failFirst) {
              failFirst = false;
              throw new Error('retry me');
            }
          },
        });
        definitionData.list.push(2); // after register(): too late to matter
        await scheduler.start();
        const triggerData = { nested: { value: 'given' } };
        const run = await scheduler.trigger('job', { idempotencyKey: 'k', data: triggerData });
        triggerData.nested.value = 'changed after trigger()';
        (run.data as { nested: { value: string } }).nested.value = 'changed in the returned RunInfo';
        await clock.advance('3m');
        expect(errors).toEqual([]);

        expect(seen.get('job.manual.k#1')).toEqual({ nested: { value: 'given' } });
        expect(seen.get('job.manual.k#2')).toEqual({ nested: { value: 'given' } }); // the retry too
        const scheduled = [...seen.entries()].filter(([key]) => !key.includes('manual'));
        expect(scheduled.length).toBeGreaterThanOrEqual(3);
        for (const [, data] of scheduled) expect(data).toEqual({ list: [1], count: 0 });

        const [listed] = (await scheduler.listRuns('job')).filter((r) => r.id === 'job.manual.k');
        expect(listed?.data).toEqual({ nested: { value: 'given' } });
        (listed?.data as { nested: { value: string } }).nested.value = 'changed in a listed RunInfo';
        expect((await scheduler.listRuns('job')).find((r) => r.id === 'job.manual.k')?.data).toEqual({ nested: { value: 'given' } });
      });
    });
  });
}
