/**
 * Issue 14, class 3: a big backlog never freezes the event loop. A heartbeat on
 * `setImmediate` counts the turns of the event loop while the biggest backlog the API
 * allows is worked off (a CatchUp job after a 50-year clock jump: unbounded, so a
 * window of it; a backfill of `MAX_BACKFILL_RUNS` runs) on the memory store, whose
 * calls all resolve at once. Without the pacer's yields the heartbeat does not beat
 * once in between.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_BACKFILL_RUNS, ValidationError, type RunContext } from '../../src/index.js';
import { SLICE_STEPS } from '../../src/pacer.js';
import { T0, harness, type Harness } from '../helpers.js';

/** Counts runs between two turns of the event loop; `maxRunsPerTurn` is the longest stretch without one. */
function heartbeat(runs: () => number): { stop: () => void; turns: () => number; maxRunsPerTurn: () => number } {
  let turns = 0;
  let last = runs();
  let max = 0;
  let on = true;
  const beat = (): void => {
    turns += 1;
    max = Math.max(max, runs() - last);
    last = runs();
    if (on) setImmediate(beat);
  };
  setImmediate(beat);
  return {
    stop: () => {
      on = false;
      max = Math.max(max, runs() - last);
    },
    turns: () => turns,
    maxRunsPerTurn: () => max,
  };
}

/** A run takes a few planner steps (create it, then find the next one blocked): a turn at least every SLICE_STEPS runs. */
const MAX_RUNS_PER_TURN = SLICE_STEPS;

let current: Harness | undefined;
afterEach(async () => {
  await current?.scheduler.stop({ abort: true });
  current = undefined;
});

describe('a backlog on a store that answers at once', () => {
  it('CatchUp after a 50-year clock jump: the event loop turns at least every SLICE_STEPS runs', async () => {
    const WINDOW = 20_000;
    let runs = 0;
    current = harness({ logger: false });
    const { scheduler, clock } = current;
    scheduler.register({
      name: 'every-second',
      schedule: { every: '1s' },
      concurrencyPolicy: 'CatchUp',
      handler: (ctx: RunContext) => {
        runs += 1;
        // The backlog is 1.6 billion ticks: watch a window of it, then hold the last run until stop().
        if (runs === WINDOW) return new Promise<void>((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        return undefined;
      },
    });
    await scheduler.start();
    const beat = heartbeat(() => runs);
    await clock.set(Date.parse(T0) + 50 * 365.25 * 86_400_000);
    await clock.advance('15s'); // the planner's next heartbeat takes the lease again and plans the backlog
    beat.stop();
    expect(runs).toBe(WINDOW);
    expect(beat.maxRunsPerTurn()).toBeLessThanOrEqual(MAX_RUNS_PER_TURN);
    expect(beat.turns()).toBeGreaterThanOrEqual(WINDOW / MAX_RUNS_PER_TURN);
  });

  it(`a backfill of MAX_BACKFILL_RUNS (${MAX_BACKFILL_RUNS}) runs: recorded, all run, and the event loop keeps turning`, async () => {
    let runs = 0;
    current = harness({ logger: false });
    const { scheduler, clock } = current;
    scheduler.register({ name: 'every-second', schedule: { every: '1s', anchor: T0 }, handler: () => void (runs += 1) });
    await scheduler.start();
    await clock.advance('1d'); // a day of ticks, so that the backfill's range is in the past
    const scheduled = runs;
    const beat = heartbeat(() => runs);
    const from = Date.parse(T0) - MAX_BACKFILL_RUNS * 1000;
    await scheduler.backfill('every-second', { from, to: Date.parse(T0) - 1000 });
    await clock.advance('1s');
    beat.stop();
    // A day's ticks from the schedule came before; the backfill adds its own runs, every one of them.
    expect(runs - scheduled - 1).toBe(MAX_BACKFILL_RUNS);
    expect(beat.maxRunsPerTurn()).toBeLessThanOrEqual(MAX_RUNS_PER_TURN);
  });

  it('a backfill of one run more is a ValidationError naming "to" and its value, and nothing is written', async () => {
    current = harness({ logger: false });
    const { scheduler, store } = current;
    scheduler.register({ name: 'every-second', schedule: { every: '1s', anchor: T0 }, handler: () => {} });
    await scheduler.start();
    const to = new Date(Date.parse(T0) + MAX_BACKFILL_RUNS * 1000).toISOString(); // MAX + 1 ticks: both ends are ticks
    const error = await scheduler.backfill('every-second', { from: T0, to }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues).toEqual([expect.objectContaining({ path: 'to', value: to })]);
    expect((error as Error).message).toContain(`more than ${MAX_BACKFILL_RUNS} runs`);
    expect((error as Error).message).toContain(JSON.stringify(to));
    expect((await store.getJob('every-second'))?.backfills).toEqual([]);
    // Exactly MAX_BACKFILL_RUNS ticks is accepted.
    const last = new Date(Date.parse(to) - 1000).toISOString();
    await scheduler.backfill('every-second', { from: T0, to: last });
    expect((await store.getJob('every-second'))?.backfills).toHaveLength(1);
  });

  it('100 years of an every-second cron job is refused after counting just past the limit, with the event loop turning', async () => {
    current = harness({ logger: false });
    const { scheduler, store } = current;
    scheduler.register({ name: 'cron-second', schedule: '* * * * * *', handler: () => {} });
    await scheduler.start();
    let counted = 0;
    const beat = heartbeat(() => counted);
    const to = '2126-01-01T00:00:00Z';
    const refused = scheduler.backfill('cron-second', { from: T0, to }).catch((e: unknown) => e);
    // The count goes in slices: the heartbeat turns before the backfill() call has settled.
    counted = 1;
    await new Promise((resolve) => setImmediate(resolve));
    counted = 2;
    const error = await refused;
    beat.stop();
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).issues[0]).toMatchObject({ path: 'to', value: to });
    expect(beat.turns()).toBeGreaterThan(2);
    expect((await store.getJob('cron-second'))?.backfills).toEqual([]);
  });
});
