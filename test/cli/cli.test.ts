/**
 * The `tickwork` bin, built (test/setup/build.ts builds dist/ when stale) and spawned as a
 * user runs it, against real Redis and real Postgres (a unique prefix or schema per
 * suite): jobs written by an app's scheduler, then listed, triggered, paused, resumed,
 * backfilled and removed through the command line; tables, `--json`, one-line errors
 * and the exit codes 0 (ok), 1 (failure) and 2 (bad usage).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Scheduler, type JobInfo, type RunInfo, type Store } from '../../src/index.js';
import { PostgresStore } from '../../adapters/postgres/index.js';
import { RedisStore } from '../../adapters/redis/index.js';
import { DATABASE_URL, REDIS_URL, deleteRedisKeys, requireServer, uniqueNamespace } from '../integration/servers.js';

const BIN = path.resolve(import.meta.dirname, '../../dist/cli.js');
const run = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the bin with `args`; the environment holds no TICKWORK_* variable unless given. */
async function tickwork(args: readonly string[], env: Record<string, string> = {}): Promise<Result> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('TICKWORK_')));
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: { ...base, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

/** A failure: the exit code, nothing on stdout, and one line on stderr. */
function expectError(result: Result, code: number, pattern: RegExp): void {
  expect(result.code, result.stderr).toBe(code);
  expect(result.stdout).toBe('');
  expect(result.stderr.trimEnd().split('\n'), 'one line').toHaveLength(1);
  expect(result.stderr.trimEnd()).toMatch(pattern);
}

const STORES = [
  {
    kind: 'redis' as const,
    open: (ns: string): Store => new RedisStore({ url: REDIS_URL, prefix: ns }),
    flags: (ns: string) => ['--redis', REDIS_URL, '--prefix', ns],
    async clean(ns: string) {
      const client = new Redis(REDIS_URL);
      try {
        await deleteRedisKeys(client, ns);
      } finally {
        client.disconnect();
      }
    },
  },
  {
    kind: 'postgres' as const,
    open: (ns: string): Store => new PostgresStore({ connectionString: DATABASE_URL, schema: ns }),
    flags: (ns: string) => ['--postgres', DATABASE_URL, '--schema', ns],
    async clean(ns: string) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${ns}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  },
];

describe.each(STORES)('on $kind', (store) => {
  let up = false;
  const ns = uniqueNamespace('tw_cli');
  const at = (args: string[]) => tickwork([...args, ...store.flags(ns)]);

  beforeAll(async () => {
    up = await requireServer(store.kind);
    if (!up) return;
    // An app registers its jobs; the CLI only ever sees them through the store.
    const app = new Scheduler({ store: store.open(ns), logger: false });
    app.register({ name: 'nightly', schedule: '30 2 * * *', timezone: 'America/New_York', handler: () => undefined });
    app.register({ name: 'ping', schedule: { every: '90s', anchor: '2026-01-01T00:00:00Z' }, concurrencyPolicy: 'Forbid', handler: () => undefined });
    await app.start();
    await app.stop();
    await store.open(ns).close();
  });

  afterAll(async () => {
    if (up) await store.clean(ns);
  });

  it('lists the jobs as a table and as JSON', async (context) => {
    if (!up) return context.skip();
    const table = await at(['jobs']);
    expect(table.code, table.stderr).toBe(0);
    const [header, ...rows] = table.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^NAME\s+SCHEDULE\s+ZONE\s+POLICY\s+STATE\s+NEXT TICK/);
    expect(rows.map((row) => row.split(/\s{2,}/).slice(0, 5))).toEqual([
      ['nightly', '30 2 * * *', 'America/New_York', 'Allow', 'active'],
      ['ping', 'every 1m30s from 2026-01-01T00:00:00Z', 'UTC', 'Forbid', 'active'],
    ]);
    const json = await at(['jobs', '--json']);
    expect(json.code).toBe(0);
    const jobs = JSON.parse(json.stdout) as JobInfo[];
    expect(jobs.map(({ name, timezone, suspended }) => ({ name, timezone, suspended }))).toEqual([
      { name: 'nightly', timezone: 'America/New_York', suspended: false },
      { name: 'ping', timezone: 'UTC', suspended: false },
    ]);
  });

  it('shows one job with its next ticks, and fails with exit 1 for a job the store lacks', async (context) => {
    if (!up) return context.skip();
    const shown = await at(['job', 'nightly', '--count', '3']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^schedule:\s+30 2 \* \* \*$/m);
    expect(shown.stdout).toMatch(/^next ticks:\nTICK \(UTC\)\s+LOCAL\s+OFFSET\s+NOTE\n(.+\n){3}$/m);
    const json = JSON.parse((await at(['job', 'ping', '--json', '--count', '2'])).stdout) as { next: { at: string }[] };
    expect(json.next).toHaveLength(2);
    expect(Date.parse(json.next[1]!.at) - Date.parse(json.next[0]!.at)).toBe(90_000);
    expectError(await at(['job', 'absent']), 1, /^tickwork: job "absent" does not exist in the store$/);
  });

  it('triggers a run with data and a key, lists it, and refuses data that is not JSON (exit 2)', async (context) => {
    if (!up) return context.skip();
    const triggered = await at(['trigger', 'nightly', '--data', '{"note":"<img src=x>"}', '--key', 'k1', '--json']);
    expect(triggered.code, triggered.stderr).toBe(0);
    const run = JSON.parse(triggered.stdout) as RunInfo;
    expect(run).toMatchObject({ id: 'nightly.manual.k1', trigger: 'manual', status: 'pending', data: { note: '<img src=x>' } });
    // The same key again: the same run.
    expect(JSON.parse((await at(['trigger', 'nightly', '--key', 'k1', '--json'])).stdout)).toMatchObject({ id: 'nightly.manual.k1' });
    const runs = await at(['runs', 'nightly', '--status', 'pending', '--status', 'running', '--limit', '5']);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toMatch(/^RUN\s+STATUS\s+TRIGGER\s+SCHEDULED\s+ATTEMPT\s+STARTED\s+DURATION\s+ERROR\nnightly\.manual\.k1\s+pending\s+manual\s/);
    expect((JSON.parse((await at(['runs', 'nightly', '--json'])).stdout) as RunInfo[]).map(({ id }) => id)).toEqual(['nightly.manual.k1']);
    expect((await at(['runs', 'ping'])).stdout).toBe('No runs of ping.\n');
    expectError(await at(['trigger', 'nightly', '--data', '{oops']), 2, /^tickwork: --data is not JSON/);
    expectError(await at(['runs', 'nightly', '--status', 'done']), 2, /^tickwork: --status: must be "pending", "running", "succeeded", "failed" or "cancelled" \(got/);
    expectError(await at(['runs', 'absent']), 1, /does not exist in the store/);
  });

  it('pauses and resumes a job', async (context) => {
    if (!up) return context.skip();
    expect(await at(['pause', 'ping'])).toEqual({ code: 0, stdout: 'Paused ping.\n', stderr: '' });
    expect((JSON.parse((await at(['job', 'ping', '--json'])).stdout) as JobInfo).suspended).toBe(true);
    expect((await at(['jobs'])).stdout).toMatch(/^ping\s+.*\s+paused\s/m);
    expect(JSON.parse((await at(['resume', 'ping', '--json'])).stdout)).toEqual({ name: 'ping', suspended: false });
    expect((JSON.parse((await at(['job', 'ping', '--json'])).stdout) as JobInfo).suspended).toBe(false);
    expectError(await at(['pause', 'absent']), 1, /does not exist in the store/);
  });

  it('records a backfill, and refuses a range that ends before it starts (exit 2)', async (context) => {
    if (!up) return context.skip();
    const done = await at(['backfill', 'nightly', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-03T00:00:00Z']);
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^Backfill of nightly from 2026-01-01T00:00:00Z to 2026-01-03T00:00:00Z recorded/);
    expectError(await at(['backfill', 'nightly', '--from', '2026-01-03T00:00:00Z', '--to', '2026-01-01T00:00:00Z']), 2, /^tickwork: --to: must not be before from/);
    expectError(await at(['backfill', 'nightly', '--from', '2026-01-03T00:00:00Z']), 2, /backfill needs --from and --to/);
  });

  it('removes a job only with --yes when there is no terminal to ask on', async (context) => {
    if (!up) return context.skip();
    const throwaway = new Scheduler({ store: store.open(ns), logger: false });
    throwaway.register({ name: 'doomed', schedule: '@daily', handler: () => undefined });
    await throwaway.start();
    await throwaway.stop();
    expectError(await at(['remove', 'doomed']), 2, /add --yes to remove without asking/);
    expect((await at(['job', 'doomed'])).code).toBe(0);
    const removed = await at(['remove', 'doomed', '--yes', '--json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ name: 'doomed', removed: true });
    expectError(await at(['job', 'doomed']), 1, /does not exist in the store/);
    expectError(await at(['remove', 'doomed', '--yes']), 1, /does not exist in the store/);
  });

  it('takes the store from the environment', async (context) => {
    if (!up) return context.skip();
    const env = store.kind === 'redis' ? { TICKWORK_REDIS_URL: REDIS_URL } : { TICKWORK_DATABASE_URL: DATABASE_URL };
    const result = await tickwork(['jobs', '--json', ...(store.kind === 'redis' ? ['--prefix', ns] : ['--schema', ns])], env);
    expect(result.code, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as JobInfo[]).map(({ name }) => name)).toContain('nightly');
  });
});

describe('without a store', () => {
  it('previews ticks, marking the ones a DST gap shifted and the repeated hour', async () => {
    const spring = await tickwork(['preview', '30 2 * * *', '--tz', 'America/New_York', '--from', '2026-03-07T12:00:00Z', '--count', '2']);
    expect(spring).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'TICK (UTC)            LOCAL                OFFSET  NOTE\n' +
        '2026-03-08T07:30:00Z  2026-03-08T03:30:00  -04:00  shifted: 02:30:00 did not exist (DST gap)\n' +
        '2026-03-09T06:30:00Z  2026-03-09T02:30:00  -04:00\n',
    });
    const fall = await tickwork(['preview', '30 * * * *', '--tz', 'America/New_York', '--from', '2026-11-01T05:00:00Z', '--count', '2', '--json']);
    expect(JSON.parse(fall.stdout)).toEqual([
      { at: '2026-11-01T05:30:00.000Z', local: '2026-11-01T01:30:00', offset: '-04:00', repeated: 'first' },
      { at: '2026-11-01T06:30:00.000Z', local: '2026-11-01T01:30:00', offset: '-05:00', repeated: 'second' },
    ]);
    const every = await tickwork(['preview', '{"every":"90s","anchor":"2026-01-01T00:00:00Z"}', '--from', '2026-01-01T00:00:00Z', '--count', '1', '--json']);
    expect(JSON.parse(every.stdout)).toEqual([{ at: '2026-01-01T00:01:30.000Z', local: '2026-01-01T00:01:30', offset: '+00:00' }]);
  });

  it.each<[string, string[], RegExp]>([
    ['a bad expression', ['preview', '61 * * * *'], /^tickwork: schedule: invalid cron expression: minute field: 61 is out of range 0-59 \(got "61 \* \* \* \*"\)$/],
    ['an unknown zone', ['preview', '@daily', '--tz', 'Mars/Olympus'], /^tickwork: --tz: is not a known IANA time zone \(got "Mars\/Olympus"\)$/],
    ['a count that is not a number', ['preview', '@daily', '--count', 'ten'], /--count must be a whole number/],
    ['a count above the limit', ['preview', '@daily', '--count', '10001'], /^tickwork: --count: must be at most 10000/],
    ['a bad --from', ['preview', '@daily', '--from', 'tomorrow'], /^tickwork: --from: must be an ISO-8601 instant/],
    ['an unknown command', ['frobnicate'], /unknown command "frobnicate"/],
    ['an unknown flag', ['jobs', '--colour'], /Unknown option '--colour'/],
    ['a flag of another command', ['preview', '@daily', '--status', 'failed'], /--status is not an option of preview/],
    ['a missing job name', ['runs'], /runs takes one job name/],
    ['no store', ['jobs'], /no store: give --redis URL or --postgres URL/],
    ['both stores', ['jobs', '--redis', 'redis://x', '--postgres', 'postgres://x'], /either --redis or --postgres/],
    ['a bad prefix', ['jobs', '--redis', REDIS_URL, '--prefix', 'a b'], /prefix must be 1 to 100 letters/],
  ])('exits 2 with one line for %s', async (_case, args, pattern) => {
    expectError(await tickwork(args), 2, pattern);
  });

  it('opens a Redis store of another partition count with --partitions, and says what to pass without it', async (context) => {
    if (!(await requireServer('redis'))) return context.skip();
    const ns = uniqueNamespace('tw_cli');
    try {
      const app = new Scheduler({ store: new RedisStore({ url: REDIS_URL, prefix: ns, partitions: 6 }), logger: false });
      app.register({ name: 'six', schedule: '@daily', handler: () => undefined });
      await app.start();
      await app.stop();
      const listed = await tickwork(['jobs', '--json', '--redis', REDIS_URL, '--prefix', ns, '--partitions', '6']);
      expect(listed.code, listed.stderr).toBe(0);
      expect((JSON.parse(listed.stdout) as JobInfo[]).map(({ name }) => name)).toEqual(['six']);
      expectError(await tickwork(['jobs', '--redis', REDIS_URL, '--prefix', ns]), 1, /holds 6 partition\(s\) and this store was given partitions: 12; .*pass partitions: 6/);
      expectError(await tickwork(['jobs', '--redis', REDIS_URL, '--prefix', ns, '--partitions', 'six']), 2, /^tickwork: --partitions: .*\(got "six"\)$/);
    } finally {
      const client = new Redis(REDIS_URL);
      await deleteRedisKeys(client, ns).finally(() => client.disconnect());
    }
  });

  it('exits 1 with one line when the store cannot be reached, and reports errors as JSON with --json', async () => {
    expectError(await tickwork(['jobs', '--redis', 'redis://127.0.0.1:1']), 1, /^tickwork: the Redis store at redis:\/\/127\.0\.0\.1:1: store operation listJobs failed/);
    expectError(
      await tickwork(['jobs', '--postgres', 'postgres://postgres:secret@127.0.0.1:1/none']),
      1,
      /^tickwork: the Postgres store at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/none: store operation listJobs failed: .*ECONNREFUSED/,
    );
    const json = await tickwork(['job', 'x', '--redis', 'redis://127.0.0.1:1', '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'STORE' } });
  });

  it('prints help with exit 0 on --help, and on stderr with exit 2 when no command is given', async () => {
    const help = await tickwork(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: tickwork <command>/);
    const none = await tickwork([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^Usage: tickwork <command>/);
  });
});
