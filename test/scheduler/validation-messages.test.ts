import { config } from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { Scheduler, ValidationError, type JobDefinition } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';

const ok: JobDefinition = { name: 'job', schedule: '* * * * *', handler: () => {} };

function issuesOf(act: () => unknown): ValidationError['issues'] {
  try {
    act();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues;
  }
  throw new Error('expected a ValidationError');
}

describe("zod's own messages, for the problems a schema gives no message of its own", () => {
  it('are in English: unknown keys and wrong types', () => {
    expect(issuesOf(() => new Scheduler({ bogus: 1 } as never))).toEqual([{ path: '', message: 'Unrecognized key: "bogus"', value: { bogus: 1 } }]);
    expect(issuesOf(() => new Scheduler().register({ ...ok, retry: { limit: 'six' } } as never))).toEqual([
      { path: 'retry.limit', message: 'Invalid input: expected number, received string', value: 'six' },
    ]);
    expect(issuesOf(() => new Scheduler().register({ ...ok, suspend: 'yes' } as never))).toEqual([
      { path: 'suspend', message: 'Invalid input: expected boolean, received string', value: 'yes' },
    ]);
  });

  it("word a value's type as zod's English locale does (tickwork words these two issues itself, without loading the locale)", () => {
    const received = (leaseMs: unknown) => issuesOf(() => new Scheduler({ leaseMs } as never))[0]?.message;
    class Custom {}
    expect([NaN, Infinity, -Infinity, null, [1], new Date(0), new Map(), new Custom(), Object.create(null), () => 1, 1n, true].map(received)).toEqual(
      ['NaN', 'Infinity', '-Infinity', 'null', 'array', 'Date', 'Map', 'Custom', 'object', 'function', 'bigint', 'boolean'].map(
        (type) => `Invalid input: expected number, received ${type}`,
      ),
    );
    expect(issuesOf(() => new Scheduler({ bogus: 1, 'a"b': 2 } as never))[0]?.message).toBe('Unrecognized keys: "bogus", "a"b"');
    expect(issuesOf(() => new Scheduler(5 as never))[0]?.message).toBe('Invalid input: expected object, received number');
  });

  it("leave zod's global configuration to the host app: tickwork sets no locale of its own", () => {
    issuesOf(() => new Scheduler({ bogus: 1 } as never));
    expect(config().localeError).toBeUndefined();
  });
});

describe('a failed parse, read once', () => {
  it('reports what it read, reading the input once: a clock whose now() answers NaN is refused though it answers a time next', () => {
    const fake = new FakeClock(0);
    const answers = [NaN, 0];
    let calls = 0;
    const clock = { now: () => answers[calls++] ?? 0, setTimer: fake.setTimer.bind(fake), clearTimer: fake.clearTimer.bind(fake), sleep: fake.sleep.bind(fake) };
    expect(issuesOf(() => new Scheduler({ clock }))).toEqual([
      { path: 'clock.now', message: 'must return epoch milliseconds (it returned NaN)', value: clock.now },
    ]);
    expect(calls).toBe(1);
  });

  it('reads a getter once, and words what it read in English', () => {
    let reads = 0;
    const definition = {
      name: 'job',
      schedule: '* * * * *',
      handler: () => {},
      get retry() {
        reads += 1;
        return { limit: 'six' };
      },
    };
    expect(issuesOf(() => new Scheduler().register(definition as unknown as JobDefinition))).toEqual([
      { path: 'retry.limit', message: 'Invalid input: expected number, received string', value: 'six' },
    ]);
    expect(reads).toBe(2); // once by the parse, once to show the value
  });
});
