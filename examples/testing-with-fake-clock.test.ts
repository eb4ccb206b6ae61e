/**
 * How to test your own jobs: give the scheduler a FakeClock and move time yourself.
 * `await clock.advance(...)` returns once everything due in that span has run,
 * retries included, so tests are instant and deterministic.
 */
import { expect, it } from 'vitest';
import { Scheduler } from '../src/index.js';
import { FakeClock } from '../src/testing/index.js';

it('sends the nightly report at 02:00 New York time and retries a failed send', async () => {
  const clock = new FakeClock('2026-03-07T12:00:00Z');
  const scheduler = new Scheduler({ clock });
  const sent: string[] = [];
  let failNext = true;

  scheduler.register({
    name: 'nightly-report',
    schedule: '0 2 * * *',
    timezone: 'America/New_York',
    retry: { limit: 3, initialDelay: '30s' },
    handler: async ({ scheduledAt, interval }) => {
      if (failNext) {
        failNext = false;
        throw new Error('mail server busy');
      }
      sent.push(`${scheduledAt.toISOString()} covering ${interval?.start.toISOString()}..${interval?.end.toISOString()}`);
    },
  });

  await scheduler.start();
  await clock.advance('2d'); // includes the spring-forward night: 02:00 does not exist on 2026-03-08

  expect(sent).toEqual([
    '2026-03-08T07:00:00.000Z covering 2026-03-07T07:00:00.000Z..2026-03-08T07:00:00.000Z', // 03:00 EDT, after one retry
    '2026-03-09T06:00:00.000Z covering 2026-03-08T07:00:00.000Z..2026-03-09T06:00:00.000Z',
  ]);
  const [latest, first] = await scheduler.listRuns('nightly-report');
  expect(first).toMatchObject({ status: 'succeeded', attempt: 2 });
  expect(latest).toMatchObject({ status: 'succeeded', attempt: 1 });
  await scheduler.stop();
});
