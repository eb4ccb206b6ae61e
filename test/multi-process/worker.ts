/**
 * One scheduler process of the multi-process suites, run with `node --import tsx`.
 * Configured by environment variables (see `WorkerConfig` in harness.ts):
 *
 * - `TW_STORE`: `redis` | `redis-cluster` | `postgres`
 * - `TW_NS`: the store's prefix (Redis) or schema (Postgres)
 * - `TW_INSTANCE`: the instance name (`a`, `b`, ...); the scheduler's instanceId is `${name}-${pid}`
 * - `TW_JOBS`: comma-separated job names registered before `start()`
 * - `TW_LATE_JOBS`: comma-separated job names registered on SIGUSR2 (while running)
 * - `TW_LEASE_MS`: the scheduler's `leaseMs`
 * - `TW_FANOUT_AT`: epoch ms of the one run of the `fan-out` job (12 indices, 4 at once)
 * - `TW_REDIS_COMMAND_TIMEOUT`: when set, the worker builds its own ioredis client with this
 *   `commandTimeout` (ms) and hands it to the store, so an unresponsive Redis fails commands
 * - `TW_REDIS_URL`, `TW_CLUSTER_NODES` (JSON `[{host,port}]`), `TW_DATABASE_URL`
 * - `TW_PARTITIONS`: the store's partition count (the store's default when unset)
 * - `TW_MANY`: when set to n, also registers `many-0` .. `many-<n-1>` (Allow, every 3 s, 50 ms handlers)
 * - `TW_LOGGER`: when set, the scheduler gets a logger that writes each record as a `log` line
 *
 * Writes one JSON line per event to stdout, each with `t` (Date.now()), `pid` and
 * `instance`: `boot`, `ready`, `registered`, `start`/`end` (from inside handlers),
 * every scheduler event (`run:*`, `tick:*`, `error` with its message), `planner`
 * (when this instance gains or loses the planner lock), `partitions` (the partitions it
 * plans, whenever they change), `stopping`, `stopped`,
 * `fatal`. SIGTERM: `stop({ abort: true })`, close the store, exit 0.
 */
import { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../../adapters/redis/index.js';
import { Scheduler } from '../../src/index.js';
import type { JobDefinition, LogFields, RunContext, Store } from '../../src/index.js';

const env = process.env;
const instance = env.TW_INSTANCE ?? 'x';
const storeKind = env.TW_STORE ?? 'redis';
const namespace = env.TW_NS ?? 'tickwork';
const leaseMs = Number(env.TW_LEASE_MS ?? 2000);
const jobs = (env.TW_JOBS ?? '').split(',').filter(Boolean);
const lateJobs = (env.TW_LATE_JOBS ?? '').split(',').filter(Boolean);
const partitions = env.TW_PARTITIONS === undefined ? {} : { partitions: Number(env.TW_PARTITIONS) };
const many = Array.from({ length: Number(env.TW_MANY ?? 0) }, (_, i) => `many-${i}`);

function log(fields: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ...fields, t: Date.now(), pid: process.pid, instance })}\n`);
}

process.on('uncaughtException', (error) => {
  log({ ev: 'fatal', kind: 'uncaughtException', message: String(error?.stack ?? error) });
  process.exit(70);
});
process.on('unhandledRejection', (error) => {
  log({ ev: 'fatal', kind: 'unhandledRejection', message: String((error as Error)?.stack ?? error) });
  process.exit(70);
});

/** Sleeps `ms` of real time; on abort, throws the signal's reason (so a shutdown releases the run). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function handler(job: string, ms: number) {
  return async (ctx: RunContext): Promise<void> => {
    const base = { job, runId: ctx.runId, scheduledAt: ctx.scheduledAt.getTime(), attempt: ctx.attempt, index: ctx.index };
    log({ ev: 'start', ...base });
    try {
      await sleep(ms, ctx.signal);
    } catch (error) {
      const reason = (error as { reason?: unknown }).reason;
      log({ ev: 'end', ...base, outcome: 'aborted', reason: typeof reason === 'string' ? reason : String(error) });
      throw error;
    }
    log({ ev: 'end', ...base, outcome: 'ok' });
  };
}

const JOBS: Record<string, JobDefinition> = {
  'allow-1s': { name: 'allow-1s', schedule: '* * * * * *', concurrencyPolicy: 'Allow', handler: handler('allow-1s', 100) },
  'forbid-1s': { name: 'forbid-1s', schedule: '* * * * * *', concurrencyPolicy: 'Forbid', handler: handler('forbid-1s', 1500) },
  'catchup-1s': { name: 'catchup-1s', schedule: '* * * * * *', concurrencyPolicy: 'CatchUp', handler: handler('catchup-1s', 1200) },
  'bufferone-1s': { name: 'bufferone-1s', schedule: '* * * * * *', concurrencyPolicy: 'BufferOne', handler: handler('bufferone-1s', 2500) },
  'slow-kill': { name: 'slow-kill', schedule: '*/5 * * * * *', concurrencyPolicy: 'Allow', handler: handler('slow-kill', 3000) },
  'only-on-a': { name: 'only-on-a', schedule: '* * * * * *', concurrencyPolicy: 'Allow', handler: handler('only-on-a', 50) },
  'fan-out': {
    name: 'fan-out',
    schedule: { at: Number(env.TW_FANOUT_AT ?? 0) },
    completions: 12,
    parallelism: 4,
    handler: handler('fan-out', 1500),
  },
};

function definition(name: string): JobDefinition {
  if (name.startsWith('many-')) return { name, schedule: '*/3 * * * * *', concurrencyPolicy: 'Allow', handler: handler(name, 50) };
  const job = JOBS[name];
  if (job === undefined) throw new Error(`worker: unknown job ${name}`);
  return job;
}

/** A RedisStore on a client the worker owns (the store never closes a client it was given). */
function ownClientStore(client: Redis | Cluster): { store: Store; close: () => Promise<void> } {
  client.on('error', (error: Error) => log({ ev: 'client-error', message: error.message }));
  const store = new RedisStore({ client, prefix: namespace, ...partitions });
  return {
    store,
    close: async () => {
      await store.close();
      await client.quit().catch(() => client.disconnect());
    },
  };
}

async function createStore(): Promise<{ store: Store; close: () => Promise<void> }> {
  if (storeKind === 'redis' && env.TW_REDIS_COMMAND_TIMEOUT !== undefined) {
    // A client of our own whose commands fail after a timeout, instead of waiting for as long as Redis does.
    return ownClientStore(new Redis(env.TW_REDIS_URL ?? 'redis://127.0.0.1:6379', { commandTimeout: Number(env.TW_REDIS_COMMAND_TIMEOUT) }));
  }
  if (storeKind === 'redis') {
    const store = new RedisStore({ url: env.TW_REDIS_URL ?? 'redis://127.0.0.1:6379', prefix: namespace, ...partitions });
    return { store, close: () => store.close() };
  }
  if (storeKind === 'redis-cluster') {
    const nodes = JSON.parse(env.TW_CLUSTER_NODES ?? '[]') as { host: string; port: number }[];
    return ownClientStore(new Cluster(nodes));
  }
  if (storeKind === 'postgres') {
    const { PostgresStore } = await import('../../adapters/postgres/index.js');
    const store = new PostgresStore({ connectionString: env.TW_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', schema: namespace, ...partitions });
    return { store, close: () => store.close() };
  }
  throw new Error(`worker: unknown store ${storeKind}`);
}

async function main(): Promise<void> {
  log({ ev: 'boot', store: storeKind, namespace, jobs, lateJobs, leaseMs });
  const { store, close } = await createStore();
  const logger = (level: string) => (fields: LogFields, message: string) =>
    log({ ev: 'log', level, event: fields.event, operation: fields.operation, job: fields.jobName, runId: fields.runId, message });
  const scheduler = new Scheduler({
    store,
    instanceId: `${instance}-${process.pid}`,
    leaseMs,
    ...(env.TW_LOGGER === undefined ? {} : { logger: { error: logger('error'), warn: logger('warn'), info: logger('info'), debug: logger('debug') } }),
  });

  const runFields = (run: { id: string; jobName: string; scheduledAt: Date; attempt: number; status: string }) => ({
    runId: run.id,
    job: run.jobName,
    scheduledAt: run.scheduledAt.getTime(),
    attempt: run.attempt,
    status: run.status,
  });
  scheduler.on('run:created', ({ run }) => log({ ev: 'run:created', ...runFields(run) }));
  scheduler.on('run:started', ({ run, index }) => log({ ev: 'run:started', ...runFields(run), index }));
  scheduler.on('run:succeeded', ({ run }) => log({ ev: 'run:succeeded', ...runFields(run) }));
  scheduler.on('run:failed', ({ run, error }) => log({ ev: 'run:failed', ...runFields(run), error: error.message }));
  scheduler.on('run:retry', ({ run, error, retryAt, index }) =>
    log({ ev: 'run:retry', ...runFields(run), error: error.message, retryAt: retryAt.getTime(), index }),
  );
  scheduler.on('run:cancelled', ({ run }) => log({ ev: 'run:cancelled', ...runFields(run) }));
  scheduler.on('tick:skipped', ({ jobName, scheduledAt, active }) =>
    log({ ev: 'tick:skipped', job: jobName, scheduledAt: scheduledAt.getTime(), active }),
  );
  scheduler.on('tick:missed', ({ jobName, from, to, reason }) =>
    log({ ev: 'tick:missed', job: jobName, from: from.getTime(), to: to.getTime(), reason }),
  );
  scheduler.on('error', (error) => log({ ev: 'error', message: error.message }));

  for (const name of [...jobs, ...many]) scheduler.register(definition(name));

  process.on('SIGUSR2', () => {
    for (const name of lateJobs) {
      try {
        scheduler.register(definition(name));
        log({ ev: 'registered', job: name });
      } catch (error) {
        log({ ev: 'register-failed', job: name, message: (error as Error).message });
      }
    }
  });

  let planner = false;
  let planned = '';
  const plannerWatch = setInterval(() => {
    if (scheduler.isPlanner !== planner) {
      planner = scheduler.isPlanner;
      log({ ev: 'planner', value: planner });
    }
    if (scheduler.plannedPartitions.join(',') !== planned) {
      planned = scheduler.plannedPartitions.join(',');
      log({ ev: 'partitions', value: [...scheduler.plannedPartitions] });
    }
  }, 50);

  let stopping = false;
  process.on('SIGTERM', () => {
    if (stopping) return;
    stopping = true;
    log({ ev: 'stopping' });
    void (async () => {
      await scheduler.stop({ abort: true });
      clearInterval(plannerWatch);
      await close().catch((error: unknown) => log({ ev: 'close-failed', message: String(error) }));
      log({ ev: 'stopped' });
      process.exit(0);
    })();
  });

  log({ ev: 'starting' });
  await scheduler.start();
  log({ ev: 'ready', instanceId: scheduler.instanceId });
}

main().catch((error: unknown) => {
  log({ ev: 'fatal', kind: 'main', message: String((error as Error)?.stack ?? error) });
  process.exit(71);
});
