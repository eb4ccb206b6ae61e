/**
 * Which ticks become runs: a pure function of the job's schedule, policy, cursor and
 * the current time. No clock, no I/O, no enumeration of missed ticks: the latest
 * due tick and the bounds of a missed range come from `Schedule.latest`/`next`, so
 * planning after 30 million missed ticks costs what planning after one does.
 * Policy checks that depend on active runs happen atomically in the store.
 */
import { hashToUnit } from './backoff.js';
import type { Schedule } from './schedule/index.js';
import type { ConcurrencyPolicy, JobRecord, ScheduleSpec } from './store.js';

export interface PlanInput {
  readonly schedule: Schedule;
  readonly policy: ConcurrencyPolicy;
  /** Ticks at or before the cursor have been dealt with. */
  readonly cursor: number;
  readonly now: number;
  readonly startingDeadlineMs?: number | undefined;
  /**
   * How long before its tick the next tick's run may be created, when no tick is
   * due yet (never before the cursor's tick: at most one run waits for its tick). 0
   * by default. (The plan loop gives it for `Allow` jobs only: the other policies
   * decide on the runs that are active at the tick.)
   */
  readonly aheadMs?: number;
  /** Scheduled runs the job may still create (`maxRuns` less those created); none left: the job is finished. */
  readonly runsLeft?: number | undefined;
}

/** Missed ticks, reported as a range: first and last missed tick, inclusive. */
export interface MissedRange {
  readonly from: number;
  readonly to: number;
  /** `coalesced`: superseded by a later due tick; `starting-deadline`: too old to start. */
  readonly reason: 'coalesced' | 'starting-deadline';
}

export type Plan =
  /** Nothing due; plan again at `wakeAt` (the next tick, less `aheadMs`; undefined: the schedule has no more ticks). */
  | { readonly kind: 'wait'; readonly wakeAt: number | undefined }
  /** Create the run for `tick` (later than `now` when created ahead) and move the cursor to it. */
  | { readonly kind: 'run'; readonly tick: number; readonly missed?: MissedRange }
  /** Every due tick is missed: move the cursor to the last of them. */
  | { readonly kind: 'miss'; readonly cursor: number; readonly missed: MissedRange };

export function plan(input: PlanInput): Plan {
  if (input.runsLeft !== undefined && input.runsLeft <= 0) return { kind: 'wait', wakeAt: undefined };
  const first = input.schedule.next(input.cursor);
  if (first === undefined) return { kind: 'wait', wakeAt: undefined };
  // A tick not yet due is created ahead only when nothing earlier is due (a due tick runs now), and not before the
  // cursor's tick has passed: a job has one run at most waiting for its tick, however long `aheadMs` is.
  const aheadMs = Math.min(input.aheadMs ?? 0, first - input.cursor);
  if (first > input.now) return first <= input.now + aheadMs ? { kind: 'run', tick: first } : { kind: 'wait', wakeAt: first - aheadMs };
  const oldestStartable = input.startingDeadlineMs === undefined ? -Infinity : input.now - input.startingDeadlineMs;
  return input.policy === 'CatchUp' ? planCatchUp(input, first, oldestStartable) : planLatest(input, first, oldestStartable);
}

/** Allow, Forbid, Replace, BufferOne: the latest due tick runs; earlier due ticks are coalesced. */
function planLatest(input: PlanInput, first: number, oldestStartable: number): Plan {
  // `first <= now` guarantees a latest due tick exists.
  const latest = input.schedule.latest(input.now) as number;
  if (latest < oldestStartable) {
    return { kind: 'miss', cursor: latest, missed: { from: first, to: latest, reason: 'starting-deadline' } };
  }
  if (first === latest) return { kind: 'run', tick: latest };
  const lastCoalesced = input.schedule.latest(latest - 1) as number;
  return { kind: 'run', tick: latest, missed: { from: first, to: lastCoalesced, reason: 'coalesced' } };
}

/** CatchUp: the oldest due tick runs; only ticks older than the starting deadline are missed. */
function planCatchUp(input: PlanInput, first: number, oldestStartable: number): Plan {
  if (first >= oldestStartable) return { kind: 'run', tick: first };
  const startable = input.schedule.next(oldestStartable - 1);
  if (startable === undefined || startable > input.now) {
    const latest = input.schedule.latest(input.now) as number;
    return { kind: 'miss', cursor: latest, missed: { from: first, to: latest, reason: 'starting-deadline' } };
  }
  const lastMissed = input.schedule.latest(startable - 1) as number;
  return { kind: 'run', tick: startable, missed: { from: first, to: lastMissed, reason: 'starting-deadline' } };
}

/**
 * The cursor of a job created now. A one-off whose instant has passed starts just
 * before it, so the planner runs it at once (unless its starting deadline says no).
 */
export function initialCursor(schedule: ScheduleSpec, now: number): number {
  return schedule.kind === 'at' ? Math.min(now, schedule.at - 1) : now;
}

/** `{ every }` without an anchor ticks from the job's creation, to the whole second. */
export function defaultAnchor(createdAt: number): number {
  return Math.floor(createdAt / 1000) * 1000;
}

/** The anchor an `{ every }` job ticks from: its own, or the default one (`defaultAnchor`). Stores keep `anchor` absent. */
export function anchorOf(schedule: { readonly anchor?: number }, createdAt: number): number {
  return schedule.anchor ?? defaultAnchor(createdAt);
}

/** The first tick of a backfill of `[from, to]`, or undefined when the range holds none. */
export function firstBackfillTick(schedule: Schedule, from: number, to: number): number | undefined {
  const first = schedule.next(from - 1);
  return first === undefined || first > to ? undefined : first;
}

/** The backfill tick after `tick`, or undefined when `tick` was the range's last. */
export function nextBackfillTick(schedule: Schedule, tick: number, to: number): number | undefined {
  return firstBackfillTick(schedule, tick + 1, to);
}

/** Scheduled runs the job may still create, or undefined when it has no `maxRuns`. */
export function runsLeft(job: Pick<JobRecord, 'maxRuns' | 'scheduledRuns'>): number | undefined {
  return job.maxRuns === undefined ? undefined : Math.max(0, job.maxRuns - job.scheduledRuns);
}

/**
 * When a run becomes ready (`NewRun.readyAt`, kept by the store as it is): a
 * scheduled run of `tick` at its tick (its jittered time with `jitterMs`), or now if
 * that has passed; a manual or backfill run (no `tick`) now. The one place that
 * decides it: the executor's timers and `nextRunAt` read what the store kept.
 */
export function readyAtOf(now: number, tick?: { readonly runId: string; readonly at: number; readonly jitterMs?: number | undefined }): number {
  if (tick === undefined) return now;
  return Math.max(now, tick.jitterMs === undefined ? tick.at : jitteredReadyAt(tick.runId, tick.at, tick.jitterMs));
}

/**
 * The tick of the job's next run, as `getJob().nextRunAt` reports it: the cursor
 * when it is a tick still to come (its run was created ahead of it, and is stored
 * ready at it), else the schedule's first tick after now; undefined when the
 * schedule or `maxRuns` leaves none.
 */
export function nextRunTick(schedule: Schedule, job: Pick<JobRecord, 'cursor' | 'maxRuns' | 'scheduledRuns'>, now: number): number | undefined {
  if (ticksLeft(job, now) <= 0) return undefined;
  return job.cursor > now ? job.cursor : schedule.next(now);
}

/** How many ticks after now may still run under `maxRuns`: a run created ahead of its tick is counted yet still to come. */
export function ticksLeft(job: Pick<JobRecord, 'cursor' | 'maxRuns' | 'scheduledRuns'>, now: number): number {
  const left = runsLeft(job);
  return left === undefined ? Infinity : left + (job.cursor > now ? 1 : 0);
}

/**
 * When a scheduled run of a job with `jitterMs` becomes ready: its tick plus a delay in
 * `[0, jitterMs)` that is a pure function of the run ID, so every instance, and every
 * retry of the planner, computes the same one.
 */
export function jitteredReadyAt(runId: string, tick: number, jitterMs: number): number {
  return tick + Math.floor(hashToUnit(`${runId}#jitter`) * jitterMs);
}
