/**
 * Compiled schedules, shared: a job's schedule is compiled once per definition, and
 * jobs with the same definition (a cron expression in a zone, an anchored interval)
 * share one. The scheduler's parts reach it through the runtime; the dashboard keeps
 * its own.
 */
import { compileSchedule, type Schedule } from './schedule/index.js';
import { WindowedSchedule } from './schedule/window.js';
import { anchorOf, defaultAnchor } from './planner.js';
import type { JobRecord, ScheduleSpec } from './store.js';

/** What compiling a job's schedule reads of its record. */
type ScheduleSource = Pick<JobRecord, 'schedule' | 'timezone' | 'createdAt' | 'startAt' | 'endAt'>;

/** Compiled schedules, keyed by what defines them; a job's schedule is compiled once per definition. */
export class ScheduleCache {
  readonly #compiled = new Map<string, Schedule>();
  /** Records of one job share their `schedule` object until the spec changes: a look-up without building a key. */
  readonly #bySpec = new WeakMap<object, Known>();

  /** The job's ticks, cut to its `startAt`/`endAt` window. */
  of(job: ScheduleSource): Schedule {
    const known = this.#bySpec.get(job.schedule);
    // Only an unanchored `every` depends on the job's creation: records of other jobs that share a spec share its schedule.
    if (
      known !== undefined &&
      known.timezone === job.timezone &&
      known.startAt === job.startAt &&
      known.endAt === job.endAt &&
      (known.createdAt === job.createdAt || !isUnanchored(job.schedule))
    ) {
      return known.schedule;
    }
    const schedule = this.#compile(job);
    this.#bySpec.set(job.schedule, { timezone: job.timezone, createdAt: job.createdAt, startAt: job.startAt, endAt: job.endAt, schedule });
    return schedule;
  }

  /** A record whose `schedule` object is new here (a store may read each record back from the wire): found by what defines it. */
  #compile(job: ScheduleSource): Schedule {
    const key = `${scheduleKey(job.schedule, job.timezone, job.createdAt)} [${job.startAt ?? ''},${job.endAt ?? ''}]`;
    let schedule = this.#compiled.get(key);
    if (schedule === undefined) {
      const ticks = compileSchedule(job.schedule, job.timezone, defaultAnchor(job.createdAt));
      schedule = job.startAt === undefined && job.endAt === undefined ? ticks : new WindowedSchedule(ticks, job.startAt, job.endAt);
      this.#compiled.set(key, schedule);
    }
    return schedule;
  }
}

/** What a job's compiled schedule was built from, besides its spec object (the WeakMap's key). */
interface Known {
  readonly timezone: string;
  readonly createdAt: number;
  readonly startAt: number | undefined;
  readonly endAt: number | undefined;
  readonly schedule: Schedule;
}

/** What a compiled schedule depends on: a cron's zone, an `every`'s anchor (`anchorOf`). */
function scheduleKey(schedule: ScheduleSpec, timezone: string, createdAt: number): string {
  switch (schedule.kind) {
    case 'cron':
      return `cron ${timezone} ${schedule.expression}`;
    case 'every':
      return `every ${schedule.everyMs} @${anchorOf(schedule, createdAt)}`;
    case 'at':
      return `at ${schedule.at}`;
  }
}

function isUnanchored(schedule: ScheduleSpec): boolean {
  return schedule.kind === 'every' && schedule.anchor === undefined;
}
