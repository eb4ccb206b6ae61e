/**
 * The CLI's commands: each a thin layer over the public API (a `Scheduler` on the
 * store, never started, and the schedule preview), returning what to print as a
 * table and as JSON. Jobs are registered by the apps that run them; the commands act
 * on their records in the store.
 */
import { JobNotFoundError, TickworkError, previewTicks } from '../src/index.js';
import type { JobInfo, JsonValue, RunInfo, RunStatus, ScheduleInput, Scheduler, TickPreview } from '../src/index.js';
import { durationText, fields, scheduleText, table, time } from './table.js';
import { UsageError } from './usage.js';

export interface Output {
  readonly json: unknown;
  readonly text: string;
}

export interface Flags {
  readonly status?: string[] | undefined;
  readonly limit?: string | undefined;
  readonly data?: string | undefined;
  readonly key?: string | undefined;
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly yes?: boolean | undefined;
  readonly tz?: string | undefined;
  readonly count?: string | undefined;
}

export interface StoreContext {
  readonly scheduler: Scheduler;
  readonly name: string;
  readonly flags: Flags;
  /** Asks the user a yes/no question on the terminal; undefined when there is no terminal. */
  readonly confirm: ((question: string) => Promise<boolean>) | undefined;
}

/** Commands on a store, by name, with the flags each accepts and whether it takes a job name. */
export const STORE_COMMANDS: Record<string, { readonly takesName: boolean; readonly flags: readonly (keyof Flags)[]; run(context: StoreContext): Promise<Output> }> = {
  jobs: { takesName: false, flags: [], run: ({ scheduler }) => jobs(scheduler) },
  job: { takesName: true, flags: ['count'], run: job },
  runs: { takesName: true, flags: ['status', 'limit'], run: runs },
  trigger: { takesName: true, flags: ['data', 'key'], run: trigger },
  pause: { takesName: true, flags: [], run: async ({ scheduler, name }) => suspend(scheduler, name, true) },
  resume: { takesName: true, flags: [], run: async ({ scheduler, name }) => suspend(scheduler, name, false) },
  backfill: { takesName: true, flags: ['from', 'to'], run: backfill },
  remove: { takesName: true, flags: ['yes'], run: remove },
};

async function jobs(scheduler: Scheduler): Promise<Output> {
  const list = (await scheduler.listJobs()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const text =
    list.length === 0
      ? 'No jobs in this store.\n'
      : table(
          ['NAME', 'SCHEDULE', 'ZONE', 'POLICY', 'STATE', 'NEXT TICK', 'LAST SCHEDULED', 'LAST SUCCESS', 'ACTIVE', 'OK', 'FAILED', 'SKIPPED'],
          list.map((info) => [
            info.name,
            scheduleText(info.schedule),
            info.timezone,
            info.concurrencyPolicy,
            info.suspended ? 'paused' : 'active',
            time(info.nextRunAt),
            time(info.lastScheduleTime),
            time(info.lastSuccessfulTime),
            String(info.active.length),
            String(info.succeeded),
            String(info.failed),
            String(info.skipped),
          ]),
        );
  return { json: list, text };
}

async function job({ scheduler, name, flags }: StoreContext): Promise<Output> {
  const info = await scheduler.getJob(name);
  if (info === undefined) throw new JobNotFoundError(name);
  const count = flags.count === undefined ? 5 : integerFlag('--count', flags.count);
  // The same ticks as `nextRuns()`, with their wall-clock times and DST marks.
  const next = info.nextRunAt === undefined ? [] : previewTicks(info.schedule as ScheduleInput, { timezone: info.timezone, after: info.nextRunAt.getTime() - 1, count });
  const text =
    fields([
      ['name', info.name],
      ['schedule', scheduleText(info.schedule)],
      ['zone', info.timezone],
      ['policy', info.concurrencyPolicy],
      ['state', info.suspended ? 'paused' : 'active'],
      ['created', time(info.createdAt)],
      ['last scheduled', time(info.lastScheduleTime)],
      ['last success', time(info.lastSuccessfulTime)],
      ['active runs', info.active.length === 0 ? '-' : info.active.join(', ')],
      ['counts', `${info.succeeded} succeeded, ${info.failed} failed, ${info.skipped} skipped`],
    ]) + (next.length === 0 ? 'next ticks: none\n' : `next ticks:\n${tickTable(next)}`);
  return { json: { ...info, next }, text };
}

async function runs({ scheduler, name, flags }: StoreContext): Promise<Output> {
  const list = await scheduler.listRuns(name, {
    ...(flags.status === undefined ? {} : { status: flags.status.length === 1 ? (flags.status[0] as RunStatus) : (flags.status as RunStatus[]) }),
    ...(flags.limit === undefined ? {} : { limit: integerFlag('--limit', flags.limit) }),
  });
  if (list.length === 0 && (await scheduler.getJob(name)) === undefined) throw new JobNotFoundError(name);
  const text =
    list.length === 0
      ? `No runs of ${name}${flags.status === undefined ? '' : ` with status ${flags.status.join(' or ')}`}.\n`
      : table(
          ['RUN', 'STATUS', 'TRIGGER', 'SCHEDULED', 'ATTEMPT', 'STARTED', 'DURATION', 'ERROR'],
          list.map((run) => [run.id, progress(run), run.trigger, time(run.scheduledAt), String(run.attempt), time(run.startedAt), duration(run), errorText(run)]),
        );
  return { json: list, text };
}

async function trigger({ scheduler, name, flags }: StoreContext): Promise<Output> {
  let data: JsonValue | undefined;
  if (flags.data !== undefined) {
    try {
      data = JSON.parse(flags.data) as JsonValue;
    } catch (error) {
      throw new UsageError(`--data is not JSON: ${(error as Error).message}`);
    }
  }
  const run = await scheduler.trigger(name, { ...(data === undefined ? {} : { data }), ...(flags.key === undefined ? {} : { idempotencyKey: flags.key }) });
  return { json: run, text: `Triggered ${name}: run ${run.id} (${run.status}); an instance that registers ${name} runs it.\n` };
}

async function suspend(scheduler: Scheduler, name: string, suspended: boolean): Promise<Output> {
  await (suspended ? scheduler.pause(name) : scheduler.resume(name));
  return { json: { name, suspended }, text: `${suspended ? 'Paused' : 'Resumed'} ${name}.\n` };
}

async function backfill({ scheduler, name, flags }: StoreContext): Promise<Output> {
  if (flags.from === undefined || flags.to === undefined) throw new UsageError('backfill needs --from and --to (ISO-8601 instants)');
  await scheduler.backfill(name, { from: flags.from, to: flags.to });
  return { json: { name, from: flags.from, to: flags.to }, text: `Backfill of ${name} from ${flags.from} to ${flags.to} recorded; its runs start one at a time.\n` };
}

async function remove({ scheduler, name, flags, confirm }: StoreContext): Promise<Output> {
  if (flags.yes !== true) {
    if (confirm === undefined) throw new UsageError('remove asks for confirmation on a terminal; add --yes to remove without asking');
    if (!(await confirm(`Remove job ${name} and its run history from the store? [y/N] `))) {
      return { json: { name, removed: false }, text: 'Nothing removed.\n' };
    }
  }
  if (!(await scheduler.remove(name))) throw new JobNotFoundError(name);
  return {
    json: { name, removed: true },
    text: `Removed ${name}. An app that still registers it writes it back when it next starts or registers it.\n`,
  };
}

/** `preview "<schedule>"`: a cron expression, or a JSON `{ every, anchor? }` / `{ at }`. */
export function preview(schedule: string, flags: Flags): Output {
  const input = schedule.trim().startsWith('{') ? parseScheduleJson(schedule) : schedule;
  const ticks = previewTicks(input, {
    ...(flags.tz === undefined ? {} : { timezone: flags.tz }),
    ...(flags.from === undefined ? {} : { after: flags.from }),
    ...(flags.count === undefined ? {} : { count: integerFlag('--count', flags.count) }),
  });
  return { json: ticks, text: ticks.length === 0 ? 'No ticks.\n' : tickTable(ticks) };
}

function parseScheduleJson(text: string): ScheduleInput {
  try {
    return JSON.parse(text) as ScheduleInput;
  } catch (error) {
    throw new UsageError(`the schedule looks like JSON but is not: ${(error as Error).message}`);
  }
}

function tickTable(ticks: readonly TickPreview[]): string {
  return table(
    ['TICK (UTC)', 'LOCAL', 'OFFSET', 'NOTE'],
    ticks.map((tick) => [time(tick.at), tick.local, tick.offset, note(tick)]),
  );
}

function note(tick: TickPreview): string {
  if (tick.shiftedFrom !== undefined) return `shifted: ${tick.shiftedFrom.slice(11)} did not exist (DST gap)`;
  if (tick.repeated !== undefined) return `repeated hour (${tick.repeated} occurrence)`;
  return '';
}

function integerFlag(flag: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number (got ${JSON.stringify(value)})`);
  return Number(value);
}

function progress(run: RunInfo): string {
  const completions = run.completions;
  return completions === undefined ? run.status : `${run.status} ${completions.succeeded}/${completions.total}`;
}

function duration(run: RunInfo): string {
  return run.startedAt === undefined || run.finishedAt === undefined ? '-' : durationText(run.finishedAt.getTime() - run.startedAt.getTime()) || '0ms';
}

function errorText(run: RunInfo): string {
  return run.error === undefined ? '' : `${run.error.name}: ${run.error.message}`;
}

/** Job and run lookups by name report a missing job as a failure, not as bad usage. */
export function isNotFound(error: unknown): boolean {
  return error instanceof TickworkError && error.code === 'JOB_NOT_FOUND';
}

export type { JobInfo };
