/**
 * A store that loses its data while three real scheduler processes use it: a
 * PRIVATE throwaway Redis (no persistence) killed and started again empty, and a
 * Postgres schema of the test's own on the shared server dropped (the store
 * migrates it afresh on its next call). The workers notice that the store is not
 * the one they knew (its identity changed), write their jobs again, report
 * `STORE_RESET` on `error`, and scheduling resumes within a few seconds; no tick
 * runs twice. The workers run with the default `leaseMs` (30 s): the identity is
 * checked every 2 s between heartbeats. Measured: time to the first `error` and to
 * the first `STORE_RESET` after the loss, and to the first handler start after it.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, requireServer, uniqueNamespace } from '../integration/servers.js';
import { Harness, duplicates, sleep, type LogLine, type WorkerConfig } from './harness.js';
import { redisServerAvailable, required, throwawayRedis } from './throwaway-servers.js';

const JOB = 'allow-1s';
const measured: Record<string, Record<string, number>> = {};

afterAll(() => {
  console.log(`store-reset measurements (ms): ${JSON.stringify(measured)}`);
});

/**
 * Three workers run `allow-1s`; `lose()` makes the store lose its data: it resolves
 * when the loss began and when the store answered again, empty (for Redis: when the
 * restarted server accepts connections; for a dropped schema, the same instant).
 */
async function storeReset(label: string, config: WorkerConfig, lose: () => Promise<{ lostAt: number; backAt: number }>): Promise<void> {
  const harness = new Harness(config);
  try {
    for (const instance of ['a', 'b', 'c']) harness.spawn({ instance, jobs: [JOB], env: { TW_LOGGER: '1' } });
    await harness.waitFor('the first run', (line) => line.ev === 'start' && line.job === JOB, 20_000);
    await sleep(3_000);
    const mark = harness.lines.length;
    const { lostAt, backAt } = await lose();
    const after = (line: LogLine): boolean => line.t >= backAt;
    const firstError = await harness.waitFor('an error after the loss', (line) => line.ev === 'error', 10_000, mark);
    const firstReset = await harness.waitFor('STORE_RESET', (line) => line.ev === 'error' && /lost its data/.test(line.message ?? ''), 20_000, mark);
    const firstRun = await harness.waitFor('a handler started after the loss', (line) => line.ev === 'start' && line.job === JOB && after(line), 20_000, mark);
    await sleep(5_000);
    const resets = harness.lines.slice(mark).filter((line) => line.ev === 'error' && /lost its data/.test(line.message ?? ''));
    const startsAfter = harness.lines.filter((line) => line.ev === 'start' && line.job === JOB && after(line) && line.t >= firstRun.t);
    const result = {
      down: backAt - lostAt,
      firstError: firstError.t - lostAt,
      firstStoreResetAfterBack: firstReset.t - backAt,
      firstRunStartedAfterBack: firstRun.t - backAt,
      instancesReporting: new Set(resets.map((line) => line.instance)).size,
      runsInThe5sAfter: startsAfter.length,
    };
    measured[label] = result;
    await harness.stopAll();
    expect(duplicates(harness.lines, JOB)).toEqual([]);
    expect(harness.lines.filter((line) => line.ev === 'fatal')).toEqual([]);
    expect(harness.procs.every((proc) => proc.exit?.code === 0)).toBe(true);
    // Every worker noticed, within a few seconds, and ticks run every second again.
    expect(result.instancesReporting).toBe(3);
    expect(result.firstError).toBeLessThan(result.down + 5_000);
    expect(result.firstStoreResetAfterBack).toBeLessThan(5_000);
    expect(result.firstRunStartedAfterBack).toBeLessThan(6_000);
    expect(result.runsInThe5sAfter).toBeGreaterThanOrEqual(4);
  } catch (error) {
    console.error(harness.diagnostics());
    throw error;
  } finally {
    await harness.killAll();
  }
}

describe.skipIf(!required(redisServerAvailable(), 'redis-server'))('multi-process: a Redis restarted empty', () => {
  it('three workers write their jobs again, report STORE_RESET, and run again within seconds; nothing twice', async () => {
    const server = await throwawayRedis();
    try {
      await server.up();
      const prefix = uniqueNamespace('twreset');
      await storeReset('redis-restarted-empty', { store: 'redis', namespace: prefix, redisUrl: server.url, leaseMs: 30_000 }, async () => {
        const lostAt = Date.now();
        await server.down(); // SIGKILL: no persistence, so it comes back empty
        await sleep(2_000);
        return { lostAt, backAt: await server.up() };
      });
    } finally {
      await server.dispose();
    }
  });
});

const postgresUp = await requireServer('postgres');

describe.skipIf(!postgresUp)('multi-process: a Postgres schema dropped', () => {
  it('three workers migrate it afresh, write their jobs again, report STORE_RESET, and run again within seconds; nothing twice', async () => {
    const schema = uniqueNamespace('twreset');
    const admin = new pg.Client({ connectionString: DATABASE_URL });
    await admin.connect();
    try {
      await storeReset('postgres-schema-dropped', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 30_000 }, async () => {
        await admin.query(`DROP SCHEMA "${schema}" CASCADE`);
        const lostAt = Date.now();
        return { lostAt, backAt: lostAt };
      });
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await admin.end();
    }
  });
});
