/**
 * The bad-input matrix: every public method of the scheduler, and the store
 * constructors, with bad values for each argument, on the memory, Redis and
 * Postgres stores. Each call must throw (or reject with) a `ValidationError` whose
 * issue names the field and whose message shows the value, and must write nothing:
 * the store's whole content, read through the contract and raw from the server,
 * is the same before and after (with the scheduler running, so that anything the
 * call let through would be written at once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresLock, PostgresStore } from '../../adapters/postgres/index.js';
import { RedisLock, RedisStore } from '../../adapters/redis/index.js';
import { MemoryStore, Scheduler, ValidationError, type JobDefinition } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers, type OpenedStore } from './every-store.js';
import { DATABASE_URL, REDIS_URL } from './servers.js';

const T0 = '2026-01-01T00:00:00Z';

/** Objects nested `depth` levels deep: `{ a: { a: ... } }`. */
function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = { a: value };
  return value;
}
const circular: Record<string, unknown> = { x: 1 };
circular.self = circular;
const circularArray: unknown[] = [1];
circularArray.push(circularArray);
const throwingGetter = Object.defineProperty({}, 'boom', { enumerable: true, get: () => { throw new Error('getter threw'); } });
const hostile = new Proxy({}, { get: () => { throw new Error('trap threw'); }, ownKeys: () => { throw new Error('trap threw'); } });

const ok = { name: 'fresh', schedule: '* * * * *', handler: () => {} } satisfies JobDefinition;
const job = (patch: Record<string, unknown>): JobDefinition => ({ ...ok, ...patch }) as JobDefinition;

/** What a case expects: the issue's field path (`''`: the input as a whole), and text the message must show. */
type Case = readonly [label: string, call: (scheduler: Scheduler) => unknown, path: string | RegExp, shows?: string | undefined];

const BAD_NAMES: readonly [string, unknown][] = [
  ['a number', 5],
  ['null', null],
  ['empty', ''],
  ['a space', 'a b'],
  ['201 characters', 'x'.repeat(201)],
  ['a NUL', 'a\u0000b'],
];
const RESERVED_NAMES = ['a.manual', 'manual', 'x.backfill.y', 'backfill', '.manual.'];

const CASES: readonly Case[] = [
  // new Scheduler(options)
  ...([
    ['options null', null, ''],
    ['options a number', 5, ''],
    ['an unknown option', { bogus: 1 }, ''],
    ['store {}', { store: {} }, 'store', '{}'],
    ['store null', { store: null }, 'store', 'null'],
    ['store a number', { store: 5 }, 'store', '5'],
    ['a store without most methods', { store: { init() {}, close() {} } }, 'store'],
    ['clock { now: 5 }', { clock: { now: 5 } }, 'clock', '"now":5'],
    ['clock a number', { clock: 5 }, 'clock', '5'],
    ['a clock whose now() returns NaN', { clock: { now: () => NaN, setTimer() {}, clearTimer() {}, sleep() {} } }, 'clock.now', 'NaN'],
    ['a clock whose now() returns a string', { clock: { now: () => '12', setTimer() {}, clearTimer() {}, sleep() {} } }, 'clock.now', '"12"'],
    ['a clock whose now() throws', { clock: { now: () => { throw new Error('no time'); }, setTimer() {}, clearTimer() {}, sleep() {} } }, 'clock.now', 'no time'],
    ['a clock whose track is not a function', { clock: { now: () => 0, setTimer() {}, clearTimer() {}, sleep() {}, track: 1 } }, 'clock.track', '1'],
    ['lock {}', { lock: {} }, 'lock', '{}'],
    ['instanceId empty', { instanceId: '' }, 'instanceId', '""'],
    ['instanceId with a NUL', { instanceId: 'a\u0000b' }, 'instanceId'],
    ['instanceId 201 characters', { instanceId: 'x'.repeat(201) }, 'instanceId'],
    ['instanceId a number', { instanceId: 5 }, 'instanceId', '5'],
    ['maxConcurrentRuns 0', { maxConcurrentRuns: 0 }, 'maxConcurrentRuns', '0'],
    ['maxConcurrentRuns 1.5', { maxConcurrentRuns: 1.5 }, 'maxConcurrentRuns', '1.5'],
    ['maxConcurrentRuns NaN', { maxConcurrentRuns: NaN }, 'maxConcurrentRuns', 'NaN'],
    ['maxConcurrentRuns -Infinity', { maxConcurrentRuns: -Infinity }, 'maxConcurrentRuns', '-Infinity'],
    ['leaseMs 99', { leaseMs: 99 }, 'leaseMs', '99'],
    ['leaseMs 1000.5', { leaseMs: 1000.5 }, 'leaseMs', '1000.5'],
    ['leaseMs Infinity', { leaseMs: Infinity }, 'leaseMs', 'Infinity'],
    ['leaseMs 1e300', { leaseMs: 1e300 }, 'leaseMs', '1e+300'],
    ['leaseMs a string', { leaseMs: '30s' }, 'leaseMs', '"30s"'],
  ] as const).map(([label, options, path, shows]): Case => [`new Scheduler(): ${label}`, () => new Scheduler(options as never), path, shows]),

  // register(definition)
  ...([
    ['null', null, ''],
    ['a hostile Proxy', hostile, ''],
    ...BAD_NAMES.map(([label, name]) => [`name ${label}`, job({ name }), 'name'] as const),
    ...RESERVED_NAMES.map((name) => [`name ${JSON.stringify(name)}`, job({ name }), 'name', JSON.stringify(name)] as const),
    ['at past the Date range', job({ schedule: { at: 8.64e15 + 1 } }), 'schedule.at', '8640000000000001'],
    ['at before the Date range', job({ schedule: { at: -8.64e15 - 1 } }), 'schedule.at', '-8640000000000001'],
    ['at NaN', job({ schedule: { at: NaN } }), 'schedule.at', 'NaN'],
    ['at Infinity', job({ schedule: { at: Infinity } }), 'schedule.at', 'Infinity'],
    ['at an Invalid Date', job({ schedule: { at: new Date(NaN) } }), 'schedule.at', 'Invalid Date'],
    ['at February 30th', job({ schedule: { at: '2026-02-30T00:00:00Z' } }), 'schedule.at', '2026-02-30T00:00:00Z'],
    ['at February 29th of a common year', job({ schedule: { at: '2026-02-29' } }), 'schedule.at', '2026-02-29'],
    ['at April 31st', job({ schedule: { at: '2026-04-31T10:00:00+02:00' } }), 'schedule.at', '2026-04-31'],
    ['at month 13', job({ schedule: { at: '2026-13-01' } }), 'schedule.at', '2026-13-01'],
    ['at hour 24', job({ schedule: { at: '2026-01-01T24:00:00Z' } }), 'schedule.at', 'T24:00'],
    ['at minute 60', job({ schedule: { at: '2026-01-01T10:60:00Z' } }), 'schedule.at', '10:60'],
    ['at an offset of +25:00', job({ schedule: { at: '2026-01-01T10:00:00+25:00' } }), 'schedule.at', '+25:00'],
    ['at a time of day without an offset', job({ schedule: { at: '2026-06-01T09:00:00' } }), 'schedule.at', '2026-06-01T09:00:00'],
    ['at a non-ISO date', job({ schedule: { at: 'June 1, 2026' } }), 'schedule.at', 'June 1, 2026'],
    ['anchor February 30th', job({ schedule: { every: '1h', anchor: '2026-02-30' } }), 'schedule.anchor', '2026-02-30'],
    ['every 99999999999999999999999d', job({ schedule: { every: '99999999999999999999999d' } }), 'schedule.every', '99999999999999999999999d'],
    ['every 1e300', job({ schedule: { every: 1e300 } }), 'schedule.every', '1e+300'],
    ['every Infinity', job({ schedule: { every: Infinity } }), 'schedule.every', 'Infinity'],
    ['every NaN', job({ schedule: { every: NaN } }), 'schedule.every', 'NaN'],
    ['every 999.4 (rounds below 1 s)', job({ schedule: { every: 999.4 } }), 'schedule.every', '999.4'],
    ['startingDeadline NaN', job({ startingDeadline: NaN }), 'startingDeadline', 'NaN'],
    ['startingDeadline -0.5', job({ startingDeadline: -0.5 }), 'startingDeadline', '-0.5'],
    ['startingDeadline 36526d', job({ startingDeadline: '36526d' }), 'startingDeadline', '36526d'],
    ['timeout 0.4 (rounds to 0)', job({ timeout: 0.4 }), 'timeout', '0.4'],
    ['attemptTimeout 1e20', job({ attemptTimeout: 1e20 }), 'attemptTimeout', '100000000000000000000'],
    ['pendingTimeout -Infinity', job({ pendingTimeout: -Infinity }), 'pendingTimeout', '-Infinity'],
    ['retry.initialDelay Infinity', job({ retry: { initialDelay: Infinity } }), 'retry.initialDelay', 'Infinity'],
    ['retry.maxDelay 1e16', job({ retry: { maxDelay: 1e16 } }), 'retry.maxDelay', '10000000000000000'],
    ['retry.factor NaN', job({ retry: { factor: NaN } }), 'retry.factor', 'NaN'],
    ['retry.limit 1.5', job({ retry: { limit: 1.5 } }), 'retry.limit', '1.5'],
    ['history.ttl 1e20', job({ history: { ttl: 1e20 } }), 'history.ttl', '100000000000000000000'],
    ['completions 10001', job({ completions: 10_001 }), 'completions', '10001'],
    ['data circular', job({ data: circular }), 'data.self'],
    ['data a circular array', job({ data: circularArray }), 'data.1'],
    ['data 65 levels deep', job({ data: nested(65) }), /^data(\.a)+$/],
    ['data 10,000 levels deep', job({ data: nested(10_000) }), /^data(\.a)+$/],
    ['data with NaN inside', job({ data: { n: [1, NaN] } }), 'data.n.1', 'NaN'],
    ['data a BigInt', job({ data: { n: 10n } }), 'data.n', '10n'],
    ['data a Symbol', job({ data: { s: Symbol('s') } }), 'data.s', 'Symbol(s)'],
    ['data a Map', job({ data: new Map() }), 'data'],
    ['data a Date', job({ data: { d: new Date(0) } }), 'data.d', '1970-01-01T00:00:00.000Z'],
    ['data an undefined array item', job({ data: [undefined] }), 'data.0', 'undefined'],
    ['data with a throwing getter', job({ data: throwingGetter }), /^data/, 'getter threw'],
    ['data a hostile Proxy', job({ data: hostile }), /^data/, 'trap threw'],
  ] as const).map(([label, definition, path, shows]): Case => [`register(): ${label}`, (s) => s.register(definition as JobDefinition), path, shows]),

  // The methods that take a job name
  ...BAD_NAMES.flatMap(([label, name]): Case[] => [
    [`unregister(): name ${label}`, (s) => s.unregister(name as string), ''],
    [`remove(): name ${label}`, (s) => s.remove(name as string), ''],
    [`pause(): name ${label}`, (s) => s.pause(name as string), ''],
    [`resume(): name ${label}`, (s) => s.resume(name as string), ''],
    [`trigger(): name ${label}`, (s) => s.trigger(name as string), ''],
    [`backfill(): name ${label}`, (s) => s.backfill(name as string, { from: T0, to: T0 }), ''],
    [`getJob(): name ${label}`, (s) => s.getJob(name as string), ''],
    [`listRuns(): name ${label}`, (s) => s.listRuns(name as string), ''],
    [`nextRuns(): name ${label}`, (s) => s.nextRuns(name as string, 1), ''],
  ]),
  ...RESERVED_NAMES.flatMap((name): Case[] => [
    [`trigger(): name ${JSON.stringify(name)}`, (s) => s.trigger(name), '', JSON.stringify(name)],
    [`backfill(): name ${JSON.stringify(name)}`, (s) => s.backfill(name, { from: T0, to: T0 }), '', JSON.stringify(name)],
  ]),

  // trigger(name, options)
  ...([
    ['options null', null, ''],
    ['an unknown option', { bogus: 1 }, ''],
    ['idempotencyKey empty', { idempotencyKey: '' }, 'idempotencyKey', '""'],
    ['idempotencyKey with a space', { idempotencyKey: 'a b' }, 'idempotencyKey', '"a b"'],
    ['idempotencyKey a number', { idempotencyKey: 5 }, 'idempotencyKey', '5'],
    ['data circular', { data: circular }, 'data.self'],
    ['data 100,000 levels deep', { data: nested(100_000) }, /^data(\.a)+$/],
    ['data NaN', { data: NaN }, 'data', 'NaN'],
    ['data Infinity', { data: { x: Infinity } }, 'data.x', 'Infinity'],
    ['data a function', { data: { f: () => 1 } }, 'data.f', 'a function'],
    ['data a class instance', { data: new (class Point { x = 1; })() }, 'data'],
  ] as const).map(([label, options, path, shows]): Case => [`trigger(): ${label}`, (s) => s.trigger('job', options as never), path, shows]),

  // backfill(name, range)
  ...([
    ['no range', undefined, ''],
    ['from missing', { to: T0 }, 'from', 'undefined'],
    ['to before from', { from: '2026-02-01', to: '2026-01-01' }, 'to', '"2026-01-01"'],
    ['from February 30th', { from: '2026-02-30', to: '2026-03-31' }, 'from', '"2026-02-30"'],
    ['from past the Date range', { from: 8.64e15 + 1, to: 8.64e15 + 2 }, 'from', '8640000000000001'],
    ['to NaN', { from: T0, to: NaN }, 'to', 'NaN'],
    ['an unknown option', { from: T0, to: T0, bogus: 1 }, ''],
    ['more than MAX_BACKFILL_RUNS ticks (217,440 minutes)', { from: '2026-01-01', to: '2026-06-01' }, 'to', '"2026-06-01"'],
  ] as const).map(([label, range, path, shows]): Case => [`backfill(): ${label}`, (s) => s.backfill('job', range as never), path, shows]),

  // listRuns(name, options) and nextRuns(name, count)
  ...([
    ['status "done"', { status: 'done' }, 'status', '"done"'],
    ['limit 0', { limit: 0 }, 'limit', '0'],
    ['limit 1.5', { limit: 1.5 }, 'limit', '1.5'],
    ['limit NaN', { limit: NaN }, 'limit', 'NaN'],
    ['limit 10001', { limit: 10_001 }, 'limit', '10001'],
    ['an unknown option', { bogus: 1 }, ''],
  ] as const).map(([label, options, path, shows]): Case => [`listRuns(): ${label}`, (s) => s.listRuns('job', options as never), path, shows]),
  ...([0, 1.5, NaN, 10_001, '5', Infinity] as const).map((count): Case => [`nextRuns(): count ${String(count)}`, (s) => s.nextRuns('job', count as number), '', String(count)]),
];

/** Runs `call` and resolves what it threw or rejected with. */
async function failureOf(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return undefined;
}

function expectNamed(error: unknown, path: string | RegExp, shows: string | undefined, nullGiven = false): void {
  expect(error).toBeInstanceOf(ValidationError);
  const { issues, message } = error as ValidationError;
  const issue = issues.find((candidate) => (typeof path === 'string' ? candidate.path === path : path.test(candidate.path)));
  expect(issue, `${message}\nissues at ${issues.map((i) => JSON.stringify(i.path)).join(', ')}`).toBeDefined();
  if (issue?.path !== '') expect(message).toContain(`${issue?.path}: `);
  expect(message).toContain('(got ');
  if (shows !== undefined) expect(message).toContain(shows);
  // NaN and Infinity used to show as null: only a null given may.
  if (!nullGiven) expect(message).not.toContain('(got null)');
}

afterAll(closeServers);

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`bad input, ${target.kind} store`, () => {
    let opened: OpenedStore;
    let clock: FakeClock;
    let scheduler: Scheduler;

    beforeAll(async () => {
      opened = await target.open();
      clock = new FakeClock(T0);
      // Lock keys expire on the server's real clock, leaseMs after the fake clock's last renewal: an hour,
      // not the default 30 s, so a slow server or machine cannot expire them between two snapshots.
      scheduler = new Scheduler({ store: opened.store, clock, leaseMs: 3_600_000 });
      scheduler.register({ name: 'job', schedule: '* * * * *', data: { region: 'eu' }, handler: () => {} });
      await scheduler.start();
      await clock.advance('2m');
      await scheduler.trigger('job', { idempotencyKey: 'k', data: [1, 'two'] });
      await clock.advance('1s');
    });

    afterAll(async () => {
      await scheduler.stop();
      await opened.dispose();
    });

    it.each(CASES.map(([label, call, path, shows]) => ({ label, call, path, shows })))('$label', async ({ label, call, path, shows }) => {
      const before = await opened.snapshot();
      const error = await failureOf(() => call(scheduler));
      await clock.settle(); // anything the call let through is written by now
      expectNamed(error, path, shows, / null/.test(label));
      expect(await opened.snapshot()).toBe(before);
    });
  });
}

describe('store constructors', () => {
  const pool = { query: async () => ({ rows: [] }) };
  const cases: readonly (readonly [string, () => unknown, string, string?])[] = [
    ['PostgresStore: an unknown option (a typo of schema)', () => new PostgresStore({ pool, shema: 'x' } as never), '', 'shema'],
    ['PostgresStore: schema pg_temp', () => new PostgresStore({ pool, schema: 'pg_temp' }), 'schema', '"pg_temp"'],
    ['PostgresStore: schema pg_catalog', () => new PostgresStore({ pool, schema: 'pg_catalog' }), 'schema', '"pg_catalog"'],
    ['PostgresStore: schema information_schema', () => new PostgresStore({ pool, schema: 'information_schema' }), 'schema', '"information_schema"'],
    ['PostgresStore: schema with capitals', () => new PostgresStore({ pool, schema: 'Upper' }), 'schema', '"Upper"'],
    ['PostgresStore: schema a number', () => new PostgresStore({ pool, schema: 5 } as never), 'schema', '5'],
    ['PostgresStore: pool {}', () => new PostgresStore({ pool: {} } as never), 'pool', '{}'],
    ['PostgresStore: pool and connectionString', () => new PostgresStore({ pool, connectionString: DATABASE_URL } as never), 'connectionString'],
    ['PostgresStore: no options', () => new PostgresStore({} as never), ''],
    ['PostgresStore: null', () => new PostgresStore(null as never), ''],
    ['PostgresLock: an unknown option', () => new PostgresLock({ pool, shema: 'x' } as never), '', 'shema'],
    ['PostgresLock: schema pg_toast', () => new PostgresLock({ pool, schema: 'pg_toast' }), 'schema', '"pg_toast"'],
    ['RedisStore: an unknown option', () => new RedisStore({ url: REDIS_URL, prefx: 'x' } as never), '', 'prefx'],
    ['RedisStore: a bad prefix', () => new RedisStore({ url: REDIS_URL, prefix: 'a b' }), 'prefix', '"a b"'],
    ['RedisStore: an http URL', () => new RedisStore({ url: 'http://127.0.0.1:6379' }), 'url', '"http://127.0.0.1:6379"'],
    ['RedisStore: client {}', () => new RedisStore({ client: {} } as never), 'client', '{}'],
    ['RedisStore: no options', () => new RedisStore({} as never), ''],
    ['RedisStore: null', () => new RedisStore(null as never), ''],
    ['RedisLock: client missing', () => new RedisLock({} as never), 'client'],
  ];
  for (const [label, construct, path, shows] of cases) {
    it(label, async () => {
      expectNamed(await failureOf(construct), path, shows, / null/.test(label));
    });
  }

  it('MemoryStore takes no options', () => {
    expect(new MemoryStore()).toBeInstanceOf(MemoryStore);
  });
});
