import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryStore, Scheduler, ValidationError, type LogFields, type Logger, type LogLevel } from '../src/index.js';
import { stderrLogger } from '../src/logging.js';
import { FakeClock } from '../src/testing/index.js';
import { FreezableClock, T0, flakyStore, harness, stopWhileAdvancing } from './helpers.js';

interface LogRecord {
  readonly level: LogLevel;
  readonly fields: LogFields;
  readonly message: string;
}

function fakeLogger(): Logger & { records: LogRecord[]; of(event: string): LogRecord[] } {
  const records: LogRecord[] = [];
  const method = (level: LogLevel) => (fields: LogFields, message: string) => void records.push({ level, fields, message });
  return {
    records,
    of: (event) => records.filter((record) => record.fields.event === event),
    error: method('error'),
    warn: method('warn'),
    info: method('info'),
    debug: method('debug'),
  };
}

describe('logger option', () => {
  it('logs the store becoming unreachable once (then debug per failure) and recovering, with the outage length', async () => {
    const logger = fakeLogger();
    const flaky = flakyStore();
    flaky.setDown(true);
    const { clock, scheduler } = harness({ store: flaky.store as MemoryStore, logger, instanceId: 'web-1' });
    scheduler.on('error', () => {}); // an app's own listener does not silence a logger it gave
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    expect(logger.of('store.unreachable')).toEqual([
      { level: 'error', fields: expect.objectContaining({ event: 'store.unreachable', instanceId: 'web-1', operation: 'findReadyRuns' }), message: 'store unreachable: store operation findReadyRuns failed: ECONNREFUSED' },
    ]);
    expect(logger.of('store.unreachable')[0]?.fields.err?.name).toBe('StoreError');
    await clock.advance('5s');
    expect(logger.of('store.unreachable')).toHaveLength(1);
    expect(logger.of('store.failed').length).toBeGreaterThan(1);
    expect(new Set(logger.of('store.failed').map((record) => record.level))).toEqual(new Set(['debug']));
    flaky.setDown(false);
    await clock.advance('1s');
    expect(logger.of('store.recovered')).toEqual([
      { level: 'warn', fields: expect.objectContaining({ event: 'store.recovered', downMs: 6_000 }), message: 'store reachable again after 6.0 s' },
    ]);
    expect(logger.of('planner.elected')).toEqual([{ level: 'info', fields: { event: 'planner.elected', instanceId: 'web-1' }, message: 'this instance is now the planner' }]);
    await scheduler.stop();
  });

  it('logs missed ticks, Forbid skips and final failures with the job, run and attempt', async () => {
    const logger = fakeLogger();
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const first = new Scheduler({ store, clock, logger: false });
    first.register({ name: 'minutely', schedule: '* * * * *', handler: () => {} });
    await first.start();
    await first.stop();
    await clock.advance('3m'); // nobody runs: 00:01 and 00:02 are coalesced into 00:03
    const { scheduler } = harness({ store, clock, logger });
    scheduler.register({ name: 'minutely', schedule: '* * * * *', handler: () => {} });
    scheduler.register({ name: 'fails', schedule: { at: '2026-01-01T00:03:30Z' }, retry: false, handler: () => Promise.reject(new TypeError('bad input')) });
    scheduler.register({ name: 'slow', schedule: '*/20 * * * * *', concurrencyPolicy: 'Forbid', handler: () => clock.sleep('30s') });
    await scheduler.start();
    await clock.advance('45s');
    expect(logger.of('ticks.missed')).toEqual([
      {
        level: 'warn',
        fields: expect.objectContaining({ jobName: 'minutely', from: '2026-01-01T00:01:00.000Z', to: '2026-01-01T00:02:00.000Z', reason: 'coalesced' }),
        message: 'job minutely missed 2026-01-01T00:01:00.000Z to 2026-01-01T00:02:00.000Z (coalesced)',
      },
    ]);
    expect(logger.of('tick.skipped')[0]).toMatchObject({ level: 'info', fields: { jobName: 'slow' } });
    const [failed] = logger.of('run.failed');
    expect(failed).toMatchObject({ level: 'error', fields: { jobName: 'fails', runId: 'fails.1767225810', attempt: 1, reason: 'error' }, message: 'run fails.1767225810 failed (error): bad input' });
    expect(failed?.fields.err).toBeInstanceOf(Error);
    expect(failed?.fields.err).toMatchObject({ name: 'TypeError', message: 'bad input' });
    await stopWhileAdvancing(scheduler, clock);
  });

  it('logs a lost run lease and a lost planner lease as warnings, on the instance that lost them', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const paused = new FreezableClock(clock);
    const logger = fakeLogger();
    const slow = new Scheduler({ store, clock: paused, instanceId: 'slow', logger });
    const other = new Scheduler({ store, clock, instanceId: 'other', logger: false });
    for (const scheduler of [slow, other]) {
      scheduler.register({ name: 'w', schedule: { at: '2026-01-01T00:00:05Z' }, handler: ({ signal }) => clock.sleep('10m', signal) });
    }
    await slow.start(); // the planner, and the run's owner at 00:00:05
    await clock.advance('5s');
    await other.start();
    paused.freeze(); // a long GC pause, say: `other` takes the run and the planner lease over
    await clock.advance('1m');
    expect(logger.of('run.lease-lost')).toEqual([]);
    paused.thaw();
    await clock.advance('1s');
    expect(logger.of('run.lease-lost')).toEqual([
      { level: 'warn', fields: { event: 'run.lease-lost', instanceId: 'slow', jobName: 'w', runId: 'w.1767225605', attempt: 1 }, message: 'run w.1767225605 lost its lease; its handler is aborted' },
    ]);
    expect(logger.of('planner.lost')).toEqual([{ level: 'warn', fields: { event: 'planner.lost', instanceId: 'slow' }, message: 'this instance lost the planner lease' }]);
    await stopWhileAdvancing(slow, clock, '11m');
    await stopWhileAdvancing(other, clock, '11m');
  });

  it('logs a run recovered from a silent owner, and a pending timeout, as warnings', async () => {
    const clock = new FakeClock(T0);
    const store = new MemoryStore();
    const frozen = new FreezableClock(clock);
    const doomed = new Scheduler({ store, clock: frozen, instanceId: 'doomed', logger: false });
    const logger = fakeLogger();
    const survivor = new Scheduler({ store, clock, instanceId: 'survivor', logger });
    const handler = ({ signal }: { signal: AbortSignal }) => clock.sleep('2m', signal);
    doomed.register({ name: 'work', schedule: { at: '2026-01-01T00:00:05Z' }, handler });
    doomed.register({ name: 'orphan', schedule: { at: '2026-01-01T00:01:30Z' }, pendingTimeout: '5s', handler });
    await doomed.start();
    await clock.advance('5s');
    survivor.register({ name: 'work', schedule: { at: '2026-01-01T00:00:05Z' }, handler });
    await survivor.start();
    frozen.freeze();
    await clock.advance('50s');
    expect(logger.of('run.recovered')).toEqual([
      {
        level: 'warn',
        fields: { event: 'run.recovered', instanceId: 'survivor', jobName: 'work', runId: 'work.1767225605', attempt: 2 },
        message: 'run work.1767225605 recovered from an owner that went silent; it will be retried',
      },
    ]);
    await clock.advance('1m'); // `orphan` is due at 00:01:30 and only the frozen instance registered it
    expect(logger.of('run.pending-timeout')).toMatchObject([{ level: 'warn', fields: { jobName: 'orphan', runId: 'orphan.1767225690' } }]);
    expect(logger.of('run.failed')).toEqual([]);
    await clock.advance('2m');
    await survivor.stop();
  });

  it('logs a listener that threw, and keeps going when the logger itself throws', async () => {
    const logger = fakeLogger();
    const { clock, scheduler } = harness({ logger });
    scheduler.on('run:succeeded', () => {
      throw new Error('listener bug');
    });
    let runs = 0;
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => void (runs += 1) });
    await scheduler.start();
    await clock.advance('1m');
    expect(logger.of('error')).toMatchObject([{ level: 'error', message: 'a "run:succeeded" listener threw: listener bug', fields: { err: { code: 'LISTENER' } } }]);
    logger.error = logger.warn = logger.info = () => {
      throw new Error('logger down');
    };
    await clock.advance('2m');
    expect(runs).toBe(3);
    await scheduler.stop();
  });

  it('rejects a logger that lacks a method, naming the field', () => {
    expect(() => new Scheduler({ logger: { error() {}, warn() {}, info() {} } as unknown as Logger })).toThrow(ValidationError);
    expect(() => new Scheduler({ logger: true as unknown as Logger })).toThrow(/logger: must be false or an object with error, warn, info and debug methods/);
  });
});

describe('default logger', () => {
  afterEach(() => void vi.restoreAllMocks());

  function captureStderr(): string[] {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return lines;
  }

  it('writes errors and warnings to stderr, one readable line each, when nobody listens on error', async () => {
    const lines = captureStderr();
    const flaky = flakyStore();
    flaky.setDown(true);
    const clock = new FakeClock(T0);
    const scheduler = new Scheduler({ store: flaky.store, clock, instanceId: 'web-1' });
    scheduler.register({ name: 'a', schedule: '* * * * *', handler: () => {} });
    await scheduler.start();
    await clock.advance('3s');
    flaky.setDown(false);
    await clock.advance('1s');
    expect(lines).toEqual([
      'tickwork ERROR store unreachable: store operation findReadyRuns failed: ECONNREFUSED (operation=findReadyRuns instanceId=web-1)\n',
      'tickwork WARN store reachable again after 4.0 s (operation=init instanceId=web-1)\n',
    ]);
    await scheduler.stop();
  });

  it('stays silent once the app listens on error, and with logger: false', async () => {
    const lines = captureStderr();
    for (const options of [{ listen: true }, { logger: false as const }]) {
      const flaky = flakyStore();
      flaky.setDown(true);
      const clock = new FakeClock(T0);
      const scheduler = new Scheduler({ store: flaky.store, clock, ...('logger' in options ? { logger: options.logger } : {}) });
      if ('listen' in options) scheduler.on('error', () => {});
      await scheduler.start();
      await clock.advance('3s');
      await scheduler.stop();
    }
    expect(lines).toEqual([]);
  });

  it('puts a multi-line message on one line and drops info and debug', () => {
    const lines: string[] = [];
    const logger = stderrLogger((line) => lines.push(line));
    logger.error({ event: 'error', instanceId: 'i', jobName: 'j', runId: 'j.1', attempt: 2 }, 'first\n  second');
    logger.info({ event: 'planner.elected', instanceId: 'i' }, 'elected');
    logger.debug({ event: 'store.failed', instanceId: 'i' }, 'failed');
    expect(lines).toEqual(['tickwork ERROR first second (jobName=j runId=j.1 attempt=2 instanceId=i)\n']);
  });
});

describe('a pino logger', () => {
  it('plugs in as is: JSON records with pino levels, the fields, and the error serialized under err', async () => {
    const out: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk.toString());
        done();
      },
    });
    const logger = pino({ level: 'debug', base: null, timestamp: false }, sink);
    const flaky = flakyStore();
    flaky.setDown(true);
    const { clock, scheduler } = harness({ store: flaky.store as MemoryStore, logger, instanceId: 'web-1' });
    await scheduler.start();
    await clock.advance('1s');
    flaky.setDown(false);
    await clock.advance('1s');
    await scheduler.stop();
    const records = out.join('').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toEqual({
      level: 50,
      event: 'store.unreachable',
      operation: 'init',
      instanceId: 'web-1',
      // pino's serializer appends the cause's message
      err: expect.objectContaining({ type: 'StoreError', message: 'store operation init failed: ECONNREFUSED: ECONNREFUSED', code: 'STORE', operation: 'init', stack: expect.any(String) }),
      msg: 'store unreachable: store operation init failed: ECONNREFUSED',
    });
    expect(records.map((record) => [record.level, record.event])).toEqual([
      [50, 'store.unreachable'],
      ...records.slice(1, -2).map(() => [20, 'store.failed']),
      [40, 'store.recovered'],
      [30, 'planner.elected'],
    ]);
  });
});
