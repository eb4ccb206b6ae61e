/**
 * The in-process libraries as the fire-lag and alloc scenarios start them: `jobs` jobs
 * named `job-0`, `job-1`, ... firing every second, each fire reported to `fire` with
 * the job's name and its nominal tick.
 */
import type { Store } from '../../src/store.js';
import { nowMs } from './stats.js';
import { load } from './tickwork.js';

export type Stop = () => Promise<void>;
/** Called at each fire: the job's name and its nominal tick (ms since the epoch). */
export type Fire = (job: string, nominal: number) => void;

export interface TickworkOptions {
  /** The scheduler's store (the default MemoryStore when absent); closed on stop. */
  readonly store?: Store;
  /** Called at each `run:created` with the run's nominal tick. */
  readonly onCreated?: (nominal: number) => void;
}

const EVERY_SECOND = '* * * * * *';

async function startTickwork(jobs: number, fire: Fire, options: TickworkOptions, withTelemetry = false): Promise<Stop> {
  const { Scheduler } = await load('tickwork');
  const { store, onCreated } = options;
  const otel = withTelemetry ? (await import('./otel.js')).benchTelemetry() : undefined;
  const scheduler = new Scheduler({
    ...(store === undefined ? {} : { store }),
    ...(otel === undefined ? {} : { telemetry: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider } }),
  });
  scheduler.on('error', (error) => process.stderr.write(`tickwork error: ${error.message}\n`));
  if (onCreated !== undefined) scheduler.on('run:created', ({ run }) => onCreated(run.scheduledAt.getTime()));
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    scheduler.register({ name, schedule: EVERY_SECOND, handler: ({ scheduledAt }) => fire(name, scheduledAt.getTime()) });
  }
  await scheduler.start();
  return async () => {
    await scheduler.stop();
    await store?.close?.();
    await otel?.shutdown();
  };
}

async function startCroner(jobs: number, fire: Fire): Promise<Stop> {
  const { Cron } = await import('croner');
  const crons: { stop(): void }[] = [];
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    // croner passes no nominal time: the tick is the nearest whole second (lag well under 500 ms).
    crons.push(new Cron(EVERY_SECOND, () => fire(name, Math.round(nowMs() / 1000) * 1000)));
  }
  return async () => crons.forEach((c) => c.stop());
}

async function startNodeCron(jobs: number, fire: Fire): Promise<Stop> {
  const cron = (await import('node-cron')).default;
  const tasks: { destroy(): void | Promise<void> }[] = [];
  for (let i = 0; i < jobs; i += 1) {
    const name = `job-${i}`;
    // node-cron's context.date is the matched (nominal) second.
    tasks.push(cron.schedule(EVERY_SECOND, (ctx) => fire(name, ctx.date.getTime())));
  }
  return async () => {
    for (const t of tasks) await t.destroy();
  };
}

/**
 * Starts `lib` (tickwork, croner or node-cron, or `tickwork-otel`: tickwork with
 * `telemetry` on, through the OpenTelemetry SDK of bench/lib/otel.ts); undefined for any
 * other library.
 */
export function startEverySecond(lib: string, jobs: number, fire: Fire, tickwork: TickworkOptions = {}): Promise<Stop> | undefined {
  if (lib === 'tickwork') return startTickwork(jobs, fire, tickwork);
  if (lib === 'tickwork-otel') return startTickwork(jobs, fire, tickwork, true);
  if (lib === 'croner') return startCroner(jobs, fire);
  if (lib === 'node-cron') return startNodeCron(jobs, fire);
  return undefined;
}
