/**
 * The Postgres adapter's call coalescer on a fake server: no database, no timers.
 * The fake evaluates `SELECT f($1, $2) AS r0, g($3) AS r1` by answering each column
 * with `[name, ...its parameters]`, so renumbering is checked end to end, and holds
 * every statement open until the test answers it.
 */
import { describe, expect, it } from 'vitest';
import { Batcher, batchStatement, renumber, sqlState, type BatchableCall, type BatcherOptions } from '../../adapters/postgres/batcher.js';

interface Sent {
  readonly text: string;
  readonly params: unknown[];
  /** Answers the statement as the fake server evaluates it. */
  answer(): void;
  fail(error: unknown): void;
}

/** A server error as node-postgres and PGlite shape it. */
function serverError(code: string, message = `error ${code}`): Error {
  return Object.assign(new Error(message), { code, severity: 'ERROR' });
}

function evaluate(text: string, params: unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [, name, args, column] of text.matchAll(/(\w+)\(([^)]*)\) AS (r\d+)/g)) {
    const values = [...args!.matchAll(/\$(\d+)/g)].map(([, n]) => params[Number(n) - 1]);
    row[column!] = [name, ...values];
  }
  return row;
}

function fakeServer(options: Omit<BatcherOptions, 'send'> = {}) {
  const sent: Sent[] = [];
  const batcher = new Batcher({
    ...options,
    send: (text, params) =>
      new Promise((resolve, reject) => {
        sent.push({ text, params, answer: () => resolve([evaluate(text, params)]), fail: reject });
      }),
  });
  return { sent, batcher };
}

const call = (lane: string, key: string, ...params: unknown[]): BatchableCall => ({
  lane,
  key,
  sql: `${lane}(${params.map((_, i) => `$${i + 1}`).join(', ')})`,
  params,
});

/** Lets every queued microtask and promise callback run (no timer is involved). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('Postgres call batching', () => {
  it('renumbers placeholders, $10 and beyond included', () => {
    expect(renumber('f($1::text, $2, $10)', 0)).toBe('f($1::text, $2, $10)');
    expect(renumber('f($1::text, $2, $10)', 9)).toBe('f($10::text, $11, $19)');
    expect(batchStatement([call('f', 'a', 1, 2), call('g', 'b', 3)])).toEqual({
      text: 'SELECT f($1, $2) AS r0, g($3) AS r1',
      params: [1, 2, 3],
    });
  });

  it('recognizes server errors by SQLSTATE and severity, not socket errors', () => {
    expect(sqlState(serverError('40P01'))).toBe('40P01');
    expect(sqlState(Object.assign(new Error('x'), { code: 'EPIPE' }))).toBeUndefined();
    expect(sqlState(new Error('Connection terminated unexpectedly'))).toBeUndefined();
    expect(sqlState('40P01')).toBeUndefined();
  });

  it('sends a lone call at once, in a statement of its own', async () => {
    const { sent, batcher } = fakeServer();
    const result = batcher.call(call('f', 'a', 1));
    await settle();
    expect(sent.map((s) => s.text)).toEqual(['SELECT f($1) AS r0']);
    sent[0]!.answer();
    expect(await result).toEqual(['f', 1]);
  });

  it('sends calls made in one tick together, and queues calls while the lane is busy', async () => {
    const { sent, batcher } = fakeServer({ maxInFlight: 1 });
    const first = [batcher.call(call('f', 'a', 1)), batcher.call(call('f', 'b', 2))];
    await settle();
    expect(sent).toHaveLength(1);
    const queued = [3, 4, 5].map((n) => batcher.call(call('f', `k${n}`, n)));
    await settle();
    expect(sent).toHaveLength(1); // the lane's one slot is taken
    sent[0]!.answer();
    expect(await Promise.all(first)).toEqual([['f', 1], ['f', 2]]);
    await settle();
    expect(sent).toHaveLength(2);
    expect(sent[1]!.text).toBe('SELECT f($1) AS r0, f($2) AS r1, f($3) AS r2');
    sent[1]!.answer();
    expect(await Promise.all(queued)).toEqual([['f', 3], ['f', 4], ['f', 5]]);
    // Nothing in flight again: the next call goes out at once.
    const lone = batcher.call(call('f', 'z', 6));
    await settle();
    expect(sent).toHaveLength(3);
    sent[2]!.answer();
    expect(await lone).toEqual(['f', 6]);
  });

  it('keeps at most maxInFlight statements in flight per lane, and lanes apart', async () => {
    const { sent, batcher } = fakeServer({ maxInFlight: 2 });
    const results = [batcher.call(call('f', 'a', 1))];
    await settle();
    results.push(batcher.call(call('f', 'b', 2)));
    await settle();
    results.push(batcher.call(call('f', 'c', 3)), batcher.call(call('f', 'd', 4)), batcher.call(call('g', 'e', 5)));
    await settle();
    // f: two statements in flight, two calls waiting; g: its own lane, sent at once.
    expect(sent.map((s) => s.text)).toEqual(['SELECT f($1) AS r0', 'SELECT f($1) AS r0', 'SELECT g($1) AS r0']);
    sent[1]!.answer();
    await settle();
    expect(sent.map((s) => s.text)).toHaveLength(4);
    expect(sent[3]!.text).toBe('SELECT f($1) AS r0, f($2) AS r1');
    for (const s of [sent[0]!, sent[2]!, sent[3]!]) s.answer();
    expect(await Promise.all(results)).toEqual([['f', 1], ['f', 2], ['f', 3], ['f', 4], ['g', 5]]);
  });

  it('runs the calls of a statement in key order, ties in arrival order, and gives each caller its result', async () => {
    const { sent, batcher } = fakeServer();
    const results = [
      batcher.call(call('f', 'job.2', 'x')),
      batcher.call(call('f', 'job.1', 'y')),
      batcher.call(call('f', 'job.2', 'z')),
      batcher.call(call('f', 'a.9', 'w')),
    ];
    await settle();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.params).toEqual(['w', 'y', 'x', 'z']);
    sent[0]!.answer();
    expect(await Promise.all(results)).toEqual([['f', 'x'], ['f', 'y'], ['f', 'z'], ['f', 'w']]);
  });

  it('caps a statement at maxCalls calls and maxParams parameters, oldest calls first', async () => {
    const { sent, batcher } = fakeServer({ maxInFlight: 1, maxCalls: 3, maxParams: 4 });
    const results = [
      batcher.call(call('f', 'e', 1)),
      batcher.call(call('f', 'd', 2)),
      batcher.call(call('f', 'c', 3)),
      batcher.call(call('f', 'b', 4, 5, 6)),
      batcher.call(call('f', 'a', 7, 8, 9, 10, 11)),
    ];
    await settle();
    expect(sent.map((s) => s.params)).toEqual([[3, 2, 1]]);
    sent[0]!.answer();
    await settle();
    expect(sent[1]!.params).toEqual([4, 5, 6]); // the next call would pass 4 parameters
    sent[1]!.answer();
    await settle();
    expect(sent[2]!.params).toEqual([7, 8, 9, 10, 11]); // alone, even past the cap
    sent[2]!.answer();
    expect(await Promise.all(results)).toEqual([['f', 1], ['f', 2], ['f', 3], ['f', 4, 5, 6], ['f', 7, 8, 9, 10, 11]]);
  });

  it('re-sends each call of a statement the server rejected alone, so each caller gets its own outcome', async () => {
    const { sent, batcher } = fakeServer();
    const results = ['a', 'b', 'c'].map((key, n) => batcher.call(call('f', key, n)).then((value) => ({ value }), (error: Error) => ({ error: error.message })));
    await settle();
    sent[0]!.fail(serverError('23502', 'null value in column "id"'));
    await settle();
    expect(sent.slice(1).map((s) => [s.text, s.params])).toEqual([
      ['SELECT f($1) AS r0', [0]],
      ['SELECT f($1) AS r0', [1]],
      ['SELECT f($1) AS r0', [2]],
    ]);
    sent[1]!.answer();
    sent[2]!.fail(serverError('23502', 'null value in column "id"'));
    sent[3]!.answer();
    expect(await Promise.all(results)).toEqual([{ value: ['f', 0] }, { error: 'null value in column "id"' }, { value: ['f', 2] }]);
  });

  it('re-sends nothing when a statement fails without a server error (it may have committed)', async () => {
    const { sent, batcher } = fakeServer();
    const results = ['a', 'b'].map((key) => batcher.call(call('f', key)).catch((error: Error) => error.message));
    await settle();
    sent[0]!.fail(Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' }));
    expect(await Promise.all(results)).toEqual(['Connection terminated unexpectedly', 'Connection terminated unexpectedly']);
    await settle();
    expect(sent).toHaveLength(1);
  });

  it('re-sends a lone statement chosen as a deadlock victim, at most deadlockRetries times', async () => {
    const { sent, batcher } = fakeServer({ deadlockRetries: 2 });
    const retried = batcher.alone({ sql: 'f($1)', params: [1] });
    await settle();
    sent[0]!.fail(serverError('40P01'));
    await settle();
    sent[1]!.answer();
    expect(await retried).toEqual(['f', 1]);

    const failed = batcher.call(call('f', 'a', 2)).catch((error: Error) => error.message);
    for (let i = 2; i < 5; i += 1) {
      await settle();
      sent[i]!.fail(serverError('40P01', 'deadlock detected'));
    }
    expect(await failed).toBe('deadlock detected');
    expect(sent).toHaveLength(5);

    const other = batcher.alone({ sql: 'f($1)', params: [3] }).catch((error: Error) => error.message);
    await settle();
    sent[5]!.fail(serverError('23505', 'duplicate key'));
    expect(await other).toBe('duplicate key');
    await settle();
    expect(sent).toHaveLength(6);
  });
});
