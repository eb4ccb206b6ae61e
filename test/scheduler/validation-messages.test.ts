import { config } from 'zod/mini';
import { describe, expect, it } from 'vitest';
import { Scheduler, ValidationError, type JobDefinition } from '../../src/index.js';

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

  it("leave zod's global configuration to the host app: tickwork sets no locale of its own", () => {
    issuesOf(() => new Scheduler({ bogus: 1 } as never));
    expect(config().localeError).toBeUndefined();
  });
});
