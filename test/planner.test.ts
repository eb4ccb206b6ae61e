import { describe, expect, it } from 'vitest';
import { firstBackfillTick, initialCursor, jitteredReadyAt, nextBackfillTick, plan, runsLeft, type PlanInput } from '../src/planner.js';
import { compileSchedule, type Schedule } from '../src/schedule/index.js';
import { WindowedSchedule } from '../src/schedule/window.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1);
const everyMinute = compileSchedule({ kind: 'cron', expression: '* * * * *' }, 'UTC', 0);

/** Wraps a schedule to count the calls the planner makes: planning must not enumerate ticks. */
function counting(schedule: Schedule): Schedule & { calls: number } {
  const counted = {
    calls: 0,
    next: (after: number) => {
      counted.calls += 1;
      return schedule.next(after);
    },
    latest: (at: number) => {
      counted.calls += 1;
      return schedule.latest(at);
    },
  };
  return counted;
}

function input(overrides: Partial<PlanInput>): PlanInput {
  return { schedule: everyMinute, policy: 'Allow', cursor: T0, now: T0, ...overrides };
}

describe('plan', () => {
  it('waits for the next tick when nothing is due', () => {
    expect(plan(input({ now: T0 + 59_999 }))).toEqual({ kind: 'wait', wakeAt: T0 + MIN });
  });

  it('runs a tick exactly at its nominal time, never before', () => {
    expect(plan(input({ now: T0 + MIN - 1 })).kind).toBe('wait');
    expect(plan(input({ now: T0 + MIN }))).toEqual({ kind: 'run', tick: T0 + MIN });
  });

  it('with aheadMs, creates the next tick ahead of it, and no earlier than aheadMs before it', () => {
    expect(plan(input({ now: T0 + MIN - 201, aheadMs: 200 }))).toEqual({ kind: 'wait', wakeAt: T0 + MIN - 200 });
    expect(plan(input({ now: T0 + MIN - 200, aheadMs: 200 }))).toEqual({ kind: 'run', tick: T0 + MIN });
  });

  it('with aheadMs, a due tick still runs now rather than give way to a tick just ahead', () => {
    expect(plan(input({ now: T0 + 2 * MIN - 100, aheadMs: 200 }))).toEqual({ kind: 'run', tick: T0 + MIN });
    const dueLong = plan(input({ now: T0 + 3 * MIN - 100, aheadMs: 200 }));
    expect(dueLong).toEqual({ kind: 'run', tick: T0 + 2 * MIN, missed: { from: T0 + MIN, to: T0 + MIN, reason: 'coalesced' } });
  });

  it('with aheadMs longer than the period, a job has one run at most waiting for its tick', () => {
    // The cursor is a tick still to come (its run was created ahead): the next is created once it has passed, not before.
    expect(plan(input({ cursor: T0 + MIN, now: T0 + MIN - 100, aheadMs: 5 * MIN }))).toEqual({ kind: 'wait', wakeAt: T0 + MIN });
    expect(plan(input({ cursor: T0 + MIN, now: T0 + MIN, aheadMs: 5 * MIN }))).toEqual({ kind: 'run', tick: T0 + 2 * MIN });
  });

  it('with aheadMs, a tick created ahead is never missed for its starting deadline', () => {
    expect(plan(input({ now: T0 + MIN - 100, aheadMs: 200, startingDeadlineMs: 0 }))).toEqual({ kind: 'run', tick: T0 + MIN });
  });

  it('waits forever once a one-off has run', () => {
    const once = compileSchedule({ kind: 'at', at: T0 + MIN }, 'UTC', 0);
    expect(plan(input({ schedule: once, cursor: T0 + MIN, now: T0 + 10 * MIN }))).toEqual({ kind: 'wait', wakeAt: undefined });
  });

  for (const policy of ['Allow', 'Forbid', 'Replace'] as const) {
    it(`${policy}: runs the latest due tick and reports the earlier ones as one coalesced range`, () => {
      expect(plan(input({ policy, now: T0 + 5 * MIN + 30_000 }))).toEqual({
        kind: 'run',
        tick: T0 + 5 * MIN,
        missed: { from: T0 + MIN, to: T0 + 4 * MIN, reason: 'coalesced' },
      });
    });
  }

  it('Allow: after 30 million missed minutes, plans the latest tick with a constant number of schedule look-ups', () => {
    const schedule = counting(everyMinute);
    const now = T0 + 30_000_000 * MIN + 1_234;
    const decision = plan(input({ schedule, now }));
    expect(decision).toEqual({
      kind: 'run',
      tick: T0 + 30_000_000 * MIN,
      missed: { from: T0 + MIN, to: T0 + 29_999_999 * MIN, reason: 'coalesced' },
    });
    expect(schedule.calls).toBeLessThanOrEqual(3);
  });

  it('misses every due tick older than the starting deadline', () => {
    expect(plan(input({ now: T0 + 10 * MIN + 1, startingDeadlineMs: 30_000 }))).toEqual({ kind: 'run', tick: T0 + 10 * MIN, missed: { from: T0 + MIN, to: T0 + 9 * MIN, reason: 'coalesced' } });
    expect(plan(input({ now: T0 + 10 * MIN + 30_001, startingDeadlineMs: 30_000 }))).toEqual({
      kind: 'miss',
      cursor: T0 + 10 * MIN,
      missed: { from: T0 + MIN, to: T0 + 10 * MIN, reason: 'starting-deadline' },
    });
    // Exactly at the deadline is still startable.
    expect(plan(input({ now: T0 + MIN + 30_000, startingDeadlineMs: 30_000 }))).toEqual({ kind: 'run', tick: T0 + MIN });
  });

  it('CatchUp: runs the oldest due tick, whatever the backlog', () => {
    const schedule = counting(everyMinute);
    expect(plan(input({ schedule, policy: 'CatchUp', now: T0 + 30_000_000 * MIN }))).toEqual({ kind: 'run', tick: T0 + MIN });
    expect(schedule.calls).toBe(1);
  });

  it('CatchUp: misses only the ticks older than the starting deadline', () => {
    expect(plan(input({ policy: 'CatchUp', now: T0 + 10 * MIN + 30_000, startingDeadlineMs: 3 * MIN }))).toEqual({
      kind: 'run',
      tick: T0 + 8 * MIN,
      missed: { from: T0 + MIN, to: T0 + 7 * MIN, reason: 'starting-deadline' },
    });
    expect(plan(input({ policy: 'CatchUp', cursor: T0 + 7 * MIN, now: T0 + 10 * MIN, startingDeadlineMs: 3 * MIN }))).toEqual({ kind: 'run', tick: T0 + 8 * MIN });
  });

  it('CatchUp: misses everything when no due tick is young enough', () => {
    const hourly = compileSchedule({ kind: 'cron', expression: '0 * * * *' }, 'UTC', 0);
    expect(plan(input({ schedule: hourly, policy: 'CatchUp', now: T0 + 150 * MIN, startingDeadlineMs: MIN }))).toEqual({
      kind: 'miss',
      cursor: T0 + 120 * MIN,
      missed: { from: T0 + 60 * MIN, to: T0 + 120 * MIN, reason: 'starting-deadline' },
    });
  });
});

describe('initialCursor', () => {
  it('starts recurring jobs at their creation and past one-offs just before their instant', () => {
    expect(initialCursor({ kind: 'cron', expression: '* * * * *' }, T0)).toBe(T0);
    expect(initialCursor({ kind: 'at', at: T0 - MIN }, T0)).toBe(T0 - MIN - 1);
    expect(initialCursor({ kind: 'at', at: T0 + MIN }, T0)).toBe(T0);
  });
});

describe('backfill ticks', () => {
  it('walks [from, to] inclusively', () => {
    expect(firstBackfillTick(everyMinute, T0, T0 + 2 * MIN)).toBe(T0);
    expect(firstBackfillTick(everyMinute, T0 + 1, T0 + MIN - 1)).toBeUndefined();
    expect(nextBackfillTick(everyMinute, T0 + MIN, T0 + 2 * MIN)).toBe(T0 + 2 * MIN);
    expect(nextBackfillTick(everyMinute, T0 + 2 * MIN, T0 + 2 * MIN)).toBeUndefined();
  });
});

describe('the schedule options in the planner', () => {
  const windowed = new WindowedSchedule(everyMinute, T0 + 5 * MIN, T0 + 10 * MIN);

  it('a window keeps next and latest on one tick set: nothing before startAt or after endAt', () => {
    expect(windowed.next(T0)).toBe(T0 + 5 * MIN);
    expect(windowed.next(T0 + 5 * MIN)).toBe(T0 + 6 * MIN);
    expect(windowed.next(T0 + 10 * MIN)).toBeUndefined();
    expect(windowed.latest(T0 + 4 * MIN)).toBeUndefined();
    expect(windowed.latest(T0 + 7 * MIN + 1)).toBe(T0 + 7 * MIN);
    expect(windowed.latest(T0 + 60 * MIN)).toBe(T0 + 10 * MIN);
    // Either bound alone.
    expect(new WindowedSchedule(everyMinute, undefined, T0).next(T0 - 1)).toBe(T0);
    expect(new WindowedSchedule(everyMinute, T0 + MIN, undefined).latest(T0 + 90 * MIN)).toBe(T0 + 90 * MIN);
  });

  it('agrees with itself on every instant: latest(t) is the largest tick <= t, next(t) the smallest > t', () => {
    for (let t = T0 - 2 * MIN; t <= T0 + 13 * MIN; t += 7_000) {
      const latest = windowed.latest(t);
      const next = windowed.next(t);
      if (latest !== undefined) expect(windowed.next(latest - 1)).toBe(latest);
      if (next !== undefined) expect(windowed.latest(next)).toBe(next);
      if (latest !== undefined && next !== undefined) expect(windowed.next(latest)).toBe(next);
    }
  });

  it('plans inside the window: after endAt the job has no tick left, and coalesces only inside it', () => {
    expect(plan(input({ schedule: windowed, now: T0 + 2 * MIN }))).toEqual({ kind: 'wait', wakeAt: T0 + 5 * MIN });
    expect(plan(input({ schedule: windowed, now: T0 + 60 * MIN }))).toEqual({
      kind: 'run',
      tick: T0 + 10 * MIN,
      missed: { from: T0 + 5 * MIN, to: T0 + 9 * MIN, reason: 'coalesced' },
    });
    expect(plan(input({ schedule: windowed, cursor: T0 + 10 * MIN, now: T0 + 60 * MIN }))).toEqual({ kind: 'wait', wakeAt: undefined });
  });

  it('plans nothing once no run is left under maxRuns', () => {
    expect(plan(input({ now: T0 + 5 * MIN, runsLeft: 0 }))).toEqual({ kind: 'wait', wakeAt: undefined });
    expect(plan(input({ now: T0 + 5 * MIN, runsLeft: 1 })).kind).toBe('run');
    expect(runsLeft({ maxRuns: 3, scheduledRuns: 1 })).toBe(2);
    expect(runsLeft({ maxRuns: 3, scheduledRuns: 5 })).toBe(0);
    expect(runsLeft({ scheduledRuns: 5 })).toBeUndefined();
  });

  it('BufferOne plans as Forbid does: the latest due tick, earlier ones coalesced', () => {
    expect(plan(input({ policy: 'BufferOne', now: T0 + 3 * MIN + 5 }))).toEqual({
      kind: 'run',
      tick: T0 + 3 * MIN,
      missed: { from: T0 + MIN, to: T0 + 2 * MIN, reason: 'coalesced' },
    });
  });

  it('jitters a run within [0, jitterMs) of its tick, the same for the same run ID', () => {
    const readyAt = jitteredReadyAt('job.1767225600', T0, 30_000);
    expect(readyAt).toBeGreaterThanOrEqual(T0);
    expect(readyAt).toBeLessThan(T0 + 30_000);
    expect(jitteredReadyAt('job.1767225600', T0, 30_000)).toBe(readyAt);
    expect(jitteredReadyAt('job.1767225660', T0, 30_000)).not.toBe(readyAt);
    expect(jitteredReadyAt('job.1767225600', T0, 1)).toBe(T0);
  });
});
