/**
 * A real scheduler process started while its store's server is down, then the
 * server comes up (a throwaway server of the test's own: see throwaway-servers.ts).
 * With the default `leaseMs` (30 s) and the connections the store opens itself:
 * `start()` resolves at once, the first `error` event and the first error log line
 * come within 2 s, and scheduling resumes within about a second of the server
 * accepting connections (each run waits for its tick, up to 1 s more). Then the server
 * dies under the running scheduler: the first `error` within 2 s, and the recovery
 * logged within 2 s of it coming back.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Harness, type LogLine, type WorkerConfig } from './harness.js';
import { postgresBinaries, redisServerAvailable, required, throwawayPostgres, throwawayRedis, type ThrowawayServer } from './throwaway-servers.js';
import { sleep } from './harness.js';

const DOWN_MS = 3_000;

const measured: Record<string, Record<string, number>> = {};

afterAll(() => {
  // The numbers the issue asks for, in the test output.
  console.log(`down-at-start measurements (ms): ${JSON.stringify(measured)}`);
});

async function downAtStart(label: string, server: ThrowawayServer, config: Omit<WorkerConfig, 'namespace' | 'leaseMs'>): Promise<void> {
  const harness = new Harness({ ...config, namespace: 'tw_down_at_start', leaseMs: 30_000 });
  try {
    harness.spawn({ instance: 'a', jobs: ['allow-1s'], env: { TW_LOGGER: '1' } });
    const starting = await harness.waitFor('starting', (line) => line.ev === 'starting', 20_000);
    const ready = await harness.waitFor('start() resolved', (line) => line.ev === 'ready', 10_000);
    const firstError = await harness.waitFor('the first error event', (line) => line.ev === 'error', 5_000);
    const firstLog = await harness.waitFor('the first error log line', (line) => line.ev === 'log' && line.level === 'error', 5_000);
    expect(firstLog).toMatchObject({ event: 'store.unreachable' });
    await sleep(DOWN_MS);
    expect(harness.lines.filter((line) => line.ev === 'start')).toEqual([]);
    const upAt = await server.up();
    const after = (line: LogLine): boolean => line.t >= upAt;
    const created = await harness.waitFor('a run created after the server came up', (line) => line.ev === 'run:created' && after(line), 10_000);
    const started = await harness.waitFor('a handler started after the server came up', (line) => line.ev === 'start' && after(line), 10_000);
    const recovered = await harness.waitFor('the recovery log line', (line) => line.ev === 'log' && line.event === 'store.recovered', 10_000);
    // Then the server dies under the running scheduler (SIGKILL, or Postgres's fast shutdown): the first
    // `error` comes within 2 s, and the recovery is logged once it is back (data and all for Postgres;
    // the throwaway Redis keeps nothing, so scheduling there is not expected to resume).
    const fromIndex = harness.lines.length;
    const downFrom = Date.now();
    await server.down();
    const downError = await harness.waitFor('an error after the server went down', (line) => line.ev === 'error' && line.t >= downFrom, 5_000, fromIndex);
    const upAgainAt = await server.up();
    const recoveredAgain = await harness.waitFor('the second recovery log line', (line) => line.ev === 'log' && line.event === 'store.recovered' && line.t >= upAgainAt, 10_000, fromIndex);
    const result = {
      startResolved: ready.t - starting.t,
      firstError: firstError.t - starting.t,
      firstErrorLog: firstLog.t - starting.t,
      recoveryLogged: recovered.t - upAt,
      firstRunCreated: created.t - upAt,
      firstHandlerStart: started.t - upAt,
      tickOfFirstStart: (started.scheduledAt as number) - upAt,
      downWhileRunningFirstError: downError.t - downFrom,
      downWhileRunningRecoveryLogged: recoveredAgain.t - upAgainAt,
    };
    measured[label] = result;
    expect(result.startResolved).toBeLessThan(5_000);
    expect(result.firstError).toBeLessThan(2_000);
    expect(result.firstErrorLog).toBeLessThan(2_000);
    // Resumed within 2 s of the server coming up; the handler then waits for the next whole-second tick.
    expect(result.firstRunCreated).toBeLessThan(2_000);
    expect(result.firstHandlerStart).toBeLessThan(3_000);
    expect(result.downWhileRunningFirstError).toBeLessThan(2_000);
    expect(result.downWhileRunningRecoveryLogged).toBeLessThan(2_000);
    await harness.stopAll();
    expect(harness.lines.filter((line) => line.ev === 'fatal')).toEqual([]);
    expect(harness.procs.every((proc) => proc.exit?.code === 0)).toBe(true);
  } catch (error) {
    console.error(harness.diagnostics());
    throw error;
  } finally {
    await harness.killAll();
    await server.dispose();
  }
}

describe.skipIf(!required(redisServerAvailable(), 'redis-server'))('multi-process: Redis down at start()', () => {
  it('start() resolves, errors come within 2 s, scheduling resumes within 2 s of Redis coming up', async () => {
    const server = await throwawayRedis();
    await downAtStart('redis', server, { store: 'redis', redisUrl: server.url });
  });
});

const pgBin = postgresBinaries();

describe.skipIf(!required(pgBin !== undefined, 'the Postgres server binaries (initdb, postgres)'))('multi-process: Postgres down at start()', () => {
  it('start() resolves, errors come within 2 s, scheduling resumes within 2 s of Postgres coming up', async () => {
    const server = await throwawayPostgres(pgBin as string);
    await downAtStart('postgres', server, { store: 'postgres', databaseUrl: server.url });
  });
});
