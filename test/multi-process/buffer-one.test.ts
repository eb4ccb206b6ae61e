/**
 * The BufferOne policy with real processes against a real Redis and Postgres: three
 * schedulers share one job that ticks every second and runs 2.5 s. Never two runs at
 * once; after each run, the latest tick that came due while it ran starts at once
 * (not the next tick, as under Forbid); the ticks it replaced are reported missed.
 */
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { DATABASE_URL, REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';
import { Harness, duplicates, executions, iso, overlaps, show, showExec, sleep, type WorkerConfig } from './harness.js';

const JOB = 'bufferone-1s';

async function bufferOneScenario(label: string, config: WorkerConfig): Promise<void> {
  const h = new Harness(config);
  let passed = false;
  try {
    const procs = ['a', 'b', 'c'].map((instance) => h.spawn({ instance, jobs: [JOB] }));
    await Promise.all(procs.map((proc) => h.waitFor(`${proc.instance} ready`, (l) => l.ev === 'ready' && l.pid === proc.pid, 20_000)));
    await sleep(14_000);
    await h.stopAll();

    const execs = executions(h.lines, JOB).filter((e) => e.how !== 'aborted' && e.how !== 'open');
    const { pairs } = overlaps(execs);
    expect(pairs.map(([x, y]) => `${x.runId} overlaps ${y.runId}`), `${label}: two runs at once:\n${showExec(execs)}`).toEqual([]);
    expect(duplicates(h.lines, JOB).map((d) => iso(d.scheduledAt)), `${label}: ticks that ran twice`).toEqual([]);
    expect(execs.length, `${label}: too few runs:\n${showExec(execs)}`).toBeGreaterThanOrEqual(4);
    const follows = execs.slice(1).map((next, i) => {
      const previous = execs[i]!;
      return {
        run: next.runId,
        // The buffered tick came due while the previous run was active: at or before its end, after its start.
        buffered: next.scheduledAt > previous.start && next.scheduledAt <= previous.end,
        // ... and it is the latest such tick.
        latest: next.scheduledAt > previous.end - 1_000,
        gapMs: next.start - previous.end,
      };
    });
    const gaps = follows.map((f) => f.gapMs);
    console.log(`[${label}] BufferOne 1 s ticks × 2.5 s runs, 3 processes: ${execs.length} runs, start after the previous end +${gaps.join(', +')} ms`);
    expect(follows.filter((f) => !f.buffered || !f.latest), `${label}: a run that was not the latest buffered tick:\n${showExec(execs)}`).toEqual([]);
    // As soon as the active run finishes: well within a tick, where Forbid would wait for the next one.
    expect(Math.max(...gaps), `${label}: a buffered run waited:\n${showExec(execs)}`).toBeLessThan(750);
    const missed = h.lines.filter((l) => l.ev === 'tick:missed' && l.job === JOB);
    expect(missed.length, `${label}: replaced ticks not reported:\n${show(missed)}`).toBeGreaterThan(0);
    expect(missed.every((l) => l.reason === 'coalesced')).toBe(true);
    expect(h.lines.filter((l) => l.ev === 'tick:skipped' && l.job === JOB)).toEqual([]);
    expect(h.lines.filter((l) => l.ev === 'fatal')).toEqual([]);
    passed = true;
  } finally {
    await h.killAll();
    if (!passed || process.env.TW_MP_KEEP_LOGS !== undefined) console.log(`[${label}] merged log: ${h.save(label)}`);
  }
}

const redisUp = await requireServer('redis');
const postgresUp = await requireServer('postgres');

describe.skipIf(!redisUp)('multi-process BufferOne: Redis', () => {
  const admin = new Redis(REDIS_URL);
  const prefix = uniqueNamespace('twbo');
  afterAll(async () => {
    await deleteRedisKeys(admin, prefix);
    await admin.quit();
  });

  it('three processes: one run at a time, the latest buffered tick runs as soon as the active run ends', async () => {
    await bufferOneScenario('redis-buffer-one', { store: 'redis', namespace: prefix, redisUrl: REDIS_URL, leaseMs: 2000 });
  });
});

describe.skipIf(!postgresUp)('multi-process BufferOne: Postgres', () => {
  const schema = uniqueNamespace('twbo');
  afterAll(async () => {
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); // this test's own schema
    await client.end();
  });

  it('three processes: one run at a time, the latest buffered tick runs as soon as the active run ends', async () => {
    await bufferOneScenario('postgres-buffer-one', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000 });
  });
});
