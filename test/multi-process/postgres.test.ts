/**
 * SPEC §6 with real processes against a real PostgreSQL: the three-process SIGKILL
 * scenario, then a server restart (`pg_ctlcluster … stop`, 3 s down, `start`) under three running
 * schedulers. Each test has its own schema, dropped afterwards.
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, it } from 'vitest';
import { DATABASE_URL, requireServer, uniqueNamespace } from '../integration/servers.js';
import { sleep } from './harness.js';
import { fanOutScenario, killScenario, outageScenario } from './scenario.js';
import { shareScenario } from './share-scenario.js';

const run = promisify(execFile);
const up = await requireServer('postgres');

/** The local cluster's version directory (`/etc/postgresql/<version>/main`), if this host manages one. */
function clusterVersion(): string | undefined {
  try {
    return readdirSync('/etc/postgresql').find((entry) => /^\d+$/.test(entry));
  } catch {
    return undefined;
  }
}

async function serverAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 1_000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe.skipIf(!up)('multi-process: Postgres', () => {
  const schemas: string[] = [];

  afterAll(async () => {
    const deadline = Date.now() + 30_000;
    while (!(await serverAnswers()) && Date.now() < deadline) await sleep(500);
    const client = new pg.Client({ connectionString: DATABASE_URL });
    await client.connect();
    try {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  });

  it('three processes, one SIGKILLed mid-handler: at most and at least once per tick, no overlap, recovery', async () => {
    const schema = uniqueNamespace('twmp');
    schemas.push(schema);
    await killScenario('postgres', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000, partitions: 8 });
  });

  it('8 partitions over three processes: each plans its share; one SIGKILLed, its partitions taken over within leaseMs, nothing missed or twice', async () => {
    const schema = uniqueNamespace('twmp');
    schemas.push(schema);
    await shareScenario('postgres-share', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000, partitions: 8 });
  });

  it('a fan-out run (12 indices, 4 at once) over three processes, one SIGKILLed mid-index: every index once, the killed one retried', async () => {
    const schema = uniqueNamespace('twmp');
    schemas.push(schema);
    await fanOutScenario('postgres-fan-out', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000, partitions: 8 });
  });

  it('three processes, the planner SIGKILLed mid-handler: planner failover, recovery, nothing twice, missed ticks reported', async () => {
    const schema = uniqueNamespace('twmp');
    schemas.push(schema);
    await killScenario('postgres-planner', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000, partitions: 1 }, { killPlanner: true });
  });

  const version = clusterVersion();
  it.skipIf(version === undefined)('server restart under three processes: errors reported, no crash, nothing lost or twice, resumes', async () => {
    const schema = uniqueNamespace('twmp');
    schemas.push(schema);
    await outageScenario('postgres-restart', { store: 'postgres', namespace: schema, databaseUrl: DATABASE_URL, leaseMs: 2000, partitions: 8 }, {
      description: `pg_ctlcluster ${String(version)} main stop -m fast, 3 s down, start`,
      expectErrors: true,
      run: async () => {
        const from = Date.now();
        // A plain `restart` is down for a few hundred ms only: often no process has a query in flight then,
        // and nothing errors. Stop, stay down 3 s (longer than leaseMs), start: every process must notice.
        const ctl = (...args: string[]) => run('pg_ctlcluster', ['--skip-systemctl-redirect', String(version), 'main', ...args], { timeout: 60_000 });
        try {
          await ctl('stop', '-m', 'fast');
          await sleep(3_000);
        } finally {
          await ctl('start'); // never leave the server down, whatever happened
        }
        const deadline = Date.now() + 30_000;
        while (!(await serverAnswers())) {
          if (Date.now() > deadline) throw new Error('Postgres did not come back within 30 s of the restart');
          await sleep(100);
        }
        return { from, to: Date.now() };
      },
    });
  });
});
