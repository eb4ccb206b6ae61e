/**
 * What the planner (`plan-loop.ts`) decides of one job record: whether it may be
 * planned, when it is first due, what the pure planner (`planner.ts`) says of it now,
 * and the run of a tick. No state: each reads the record and the runtime's schedules.
 */
import { ValidationError } from './errors.js';
import { safeEmit } from './events.js';
import { nextBackfillTick, plan, readyAtOf, runsLeft, type Plan } from './planner.js';
import { backfillRunId, isJobName, reservedSegmentOf, scheduledRunId } from './run-id.js';
import type { Runtime } from './runtime.js';
import type { JobRecord, NewRun, ScheduleBackfillRunInput } from './store.js';

/**
 * How long before its tick an `Allow` job's run is created at least (ready at the
 * tick), so that the store's write is done before the tick and only the claim is
 * left at it: on Redis and Postgres that halves the time from tick to handler.
 * Longer than planning a tick that 100 jobs share takes on either. A tick that many
 * more share is planned earlier still (the plan loop's lead, `PlanLoop`).
 */
export const PLAN_AHEAD_MS = 200;

/**
 * False (and reported) for a job a store kept from before the name grammar that
 * keeps run IDs unambiguous: its runs could take another job's IDs, so it is not
 * planned until it is removed and registered under a valid name.
 */
export function plannable(rt: Runtime, record: JobRecord): boolean {
  if (isJobName(record.name)) return true;
  safeEmit(rt.events, 'error', new ValidationError(`job ${JSON.stringify(record.name)} in the store`, [{
    path: 'name',
    message: `has a "${reservedSegmentOf(record.name) ?? '?'}" part, which makes its run IDs ambiguous, so it is not planned: remove it (scheduler.remove(name)) and register it under another name`,
    value: record.name,
  }]));
  return false;
}

/**
 * When a job just loaded must be planned: now if a tick (or a backfill) is due, at
 * its next tick otherwise, never while it is suspended or has no tick left (a change
 * notifies the planner). Taking over 100,000 jobs then plans only those that are due
 * instead of taking every job through a planning step.
 */
export function firstDue(rt: Runtime, record: JobRecord, now: number, aheadMs?: number): number | undefined {
  if (record.suspended) return undefined;
  if (record.backfills.length > 0) return now;
  const decision = decide(rt, record, now, aheadMs);
  return decision.kind === 'wait' ? decision.wakeAt : now;
}

/**
 * What the pure planner says of the job at `now`; an `Allow` job's next run is created
 * `aheadMs` before its tick (the other policies decide on the runs active at the tick).
 */
export function decide(rt: Runtime, record: JobRecord, now: number, aheadMs = PLAN_AHEAD_MS): Plan {
  const schedule = rt.schedules.of(record);
  const { concurrencyPolicy: policy, cursor, startingDeadlineMs } = record;
  return plan({ schedule, policy, cursor, now, startingDeadlineMs, aheadMs: policy === 'Allow' ? aheadMs : 0, runsLeft: runsLeft(record) });
}

/** Jobs whose due tick waits for the active run to finish: a finished run may let it run. */
export function waitsForRuns(record: JobRecord): boolean {
  return record.concurrencyPolicy === 'CatchUp' || record.concurrencyPolicy === 'BufferOne';
}

/** The run of `tick`: nominal ID and `scheduledAt`, ready at the tick (later with a jitter; now if it has passed). */
export function scheduledRun(record: JobRecord, tick: number, now: number): NewRun {
  const id = scheduledRunId(record.name, tick);
  return { id, jobName: record.name, scheduledAt: tick, trigger: 'schedule', readyAt: readyAtOf(now, { runId: id, at: tick, jitterMs: record.jitterMs }) };
}

/** The `scheduleBackfillRun` call creating the next run of the job's oldest backfill (undefined: it has none). */
export function backfillStep(rt: Runtime, record: JobRecord, now: number): ScheduleBackfillRunInput | undefined {
  const range = record.backfills[0];
  if (range === undefined) return undefined;
  const next = nextBackfillTick(rt.schedules.of(record), range.next, range.to);
  return {
    jobName: record.name,
    backfillId: range.id,
    expectedNext: range.next,
    ...(next === undefined ? {} : { next }),
    run: {
      id: backfillRunId(record.name, range.next),
      jobName: record.name,
      scheduledAt: range.next,
      trigger: 'backfill',
      readyAt: readyAtOf(now),
      ...(range.traceparent === undefined ? {} : { traceparent: range.traceparent }),
    },
    now,
  };
}
