/**
 * The size limit of a backfill. A backfill runs its ticks one at a time, each a full
 * run (created, claimed, finished) in the store: 100 years of an every-second job
 * would keep a Redis or Postgres store busy for weeks. `backfill()` counts the
 * range's ticks (up to one past the limit, in slices that yield to the event loop)
 * and refuses a larger range with a `ValidationError` before anything is written.
 */
import { ValidationError } from './errors.js';
import type { Pacer } from './pacer.js';
import { nextBackfillTick } from './planner.js';
import type { Schedule } from './schedule/index.js';
import type { BackfillOptions } from './types.js';

/** The most runs one `backfill()` call may create; split a longer range into several calls. */
export const MAX_BACKFILL_RUNS = 100_000;

/** Ticks counted between two steps of the pacer (counting a tick costs a few hundred nanoseconds). */
const TICKS_PER_STEP = 10;

/**
 * Throws a `ValidationError` (path `to`) when `[first, to]` holds more than
 * `MAX_BACKFILL_RUNS` ticks. Counts at most one tick past the limit.
 */
export async function checkBackfillSize(
  name: string,
  options: BackfillOptions,
  schedule: Schedule,
  first: number,
  to: number,
  pacer: Pacer,
): Promise<void> {
  let count = 1;
  for (let tick = nextBackfillTick(schedule, first, to); tick !== undefined; tick = nextBackfillTick(schedule, tick, to)) {
    count += 1;
    if (count > MAX_BACKFILL_RUNS) {
      throw new ValidationError(`backfill(${JSON.stringify(name)})`, [
        {
          path: 'to',
          message: `makes a backfill of more than ${MAX_BACKFILL_RUNS} runs (from ${new Date(first).toISOString()}); split the range into several backfills`,
          value: options.to,
        },
      ]);
    }
    if (count % TICKS_PER_STEP === 0) {
      const pause = pacer.step();
      if (pause !== undefined) await pause;
    }
  }
}
