/**
 * The Redis adapter's script-call coalescer on a fake server: no Redis, no timers.
 * The fake records each invocation (which Lua, which ARGV) and holds it open until
 * the test answers it; a batch is answered by splitting its ARGV back into calls.
 */
import { describe, expect, it } from 'vitest';
import { batchArgs, ScriptBatcher, type ScriptBatcherOptions } from '../../adapters/redis/batcher.js';
import type { BatchableScript } from '../../adapters/redis/lua-prelude.js';

const CLAIM: BatchableScript = { lua: 'claim', batch: 'claim-batch' };
const FINISH: BatchableScript = { lua: 'finish', batch: 'finish-batch' };

interface Sent {
  readonly lua: string;
  readonly keys: readonly string[];
  readonly args: readonly string[];
  answer(reply: unknown): void;
  fail(error: unknown): void;
}

/** The calls of a batch's ARGV (each call's tag index, count, then its arguments). */
function callsOf(args: readonly string[]): string[][] {
  const calls: string[][] = [];
  for (let i = 0; i < args.length; ) {
    const argc = Number(args[i + 1]);
    calls.push(args.slice(i + 2, i + 2 + argc));
    i += argc + 2;
  }
  return calls;
}

/** Echoes: a lone call answers `[lua, ...args]`, a batch one such reply per call. */
function echo(sent: Sent): void {
  if (sent.lua.endsWith('-batch')) sent.answer(callsOf(sent.args).map((args) => [sent.lua, ...args]));
  else sent.answer([sent.lua, ...sent.args]);
}

function fakeServer(options: Omit<ScriptBatcherOptions, 'run'> = {}): { batcher: ScriptBatcher; sent: Sent[] } {
  const sent: Sent[] = [];
  const batcher = new ScriptBatcher({
    ...options,
    run: (lua, keys, args) =>
      new Promise((resolve, reject) => {
        sent.push({ lua, keys, args, answer: resolve, fail: reject });
      }),
  });
  return { batcher, sent };
}

/** Lets queued microtasks (the batcher's flush, the replies' continuations) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
}

describe('ScriptBatcher', () => {
  it('lays out a batch as each call’s tag (its index in KEYS), argument count, then its arguments', () => {
    const calls = [{ tag: 'x', args: ['a', 'b'] }, { tag: 'y', args: [] }, { tag: 'x', args: ['c'] }];
    expect(batchArgs(calls)).toEqual({ keys: ['x', 'y'], args: ['1', '2', 'a', 'b', '2', '0', '1', '1', 'c'] });
  });

  it('batches calls of several partitions together on a single Redis, and each partition apart on a cluster', async () => {
    for (const lanePerTag of [false, true]) {
      const { batcher, sent } = fakeServer({ maxInFlight: 1, lanePerTag });
      const calls = [batcher.call(CLAIM, 'x', ['1']), batcher.call(CLAIM, 'y', ['2']), batcher.call(CLAIM, 'x', ['3'])];
      await settle();
      const expected = lanePerTag
        ? [
            ['claim-batch', ['x'], ['1', '1', '1', '1', '1', '3']],
            ['claim', ['y'], ['2']],
          ]
        : [['claim-batch', ['x', 'y'], ['1', '1', '1', '2', '1', '2', '1', '1', '3']]];
      expect(sent.map((s) => [s.lua, s.keys, s.args])).toEqual(expected);
      for (const s of sent) echo(s);
      expect((await Promise.all(calls)).map((reply) => (reply as string[])[1])).toEqual(['1', '2', '3']);
    }
  });

  it('sends a lone call at once, as the plain script, without waiting for anything', async () => {
    const { batcher, sent } = fakeServer();
    const reply = batcher.call(CLAIM, 't', ['run-1', 'a']);
    await Promise.resolve();
    expect(sent.map((s) => [s.lua, s.args])).toEqual([['claim', ['run-1', 'a']]]);
    echo(sent[0]!);
    await expect(reply).resolves.toEqual(['claim', 'run-1', 'a']);
  });

  it('sends calls made in the same tick together, and maps each reply back to its caller', async () => {
    const { batcher, sent } = fakeServer();
    const replies = [batcher.call(CLAIM, 't', ['r1']), batcher.call(CLAIM, 't', ['r2', 'x']), batcher.call(CLAIM, 't', [])];
    await settle();
    expect(sent.map((s) => [s.lua, s.args])).toEqual([['claim-batch', ['1', '1', 'r1', '1', '2', 'r2', 'x', '1', '0']]]);
    echo(sent[0]!);
    expect(await Promise.all(replies)).toEqual([['claim-batch', 'r1'], ['claim-batch', 'r2', 'x'], ['claim-batch']]);
  });

  it('queues calls while the lane is busy and sends them as one batch when an invocation returns', async () => {
    const { batcher, sent } = fakeServer({ maxInFlight: 1 });
    const first = batcher.call(CLAIM, 't', ['r1']);
    await settle();
    const later = [2, 3, 4].map((n) => batcher.call(CLAIM, 't', [`r${n}`]));
    await settle();
    expect(sent).toHaveLength(1);
    echo(sent[0]!);
    await first;
    await settle();
    expect(sent.map((s) => s.args)).toEqual([['r1'], ['1', '1', 'r2', '1', '1', 'r3', '1', '1', 'r4']]);
    echo(sent[1]!);
    expect(await Promise.all(later)).toEqual([2, 3, 4].map((n) => ['claim-batch', `r${n}`]));
  });

  it('keeps up to maxInFlight invocations per lane, and lanes apart', async () => {
    const { batcher, sent } = fakeServer({ maxInFlight: 2 });
    void batcher.call(CLAIM, 't', ['r1']);
    await settle();
    void batcher.call(CLAIM, 't', ['r2']);
    void batcher.call(FINISH, 't', ['r1']);
    await settle();
    void batcher.call(CLAIM, 't', ['r3']);
    await settle();
    expect(sent.map((s) => [s.lua, s.args])).toEqual([
      ['claim', ['r1']],
      ['claim', ['r2']],
      ['finish', ['r1']],
    ]);
  });

  it('bounds a batch by maxCalls and maxArgs, oldest calls first', async () => {
    const { batcher, sent } = fakeServer({ maxInFlight: 1, maxCalls: 3, maxArgs: 9 });
    void batcher.call(CLAIM, 't', ['r0']);
    await settle();
    for (let n = 1; n <= 5; n += 1) void batcher.call(CLAIM, 't', [`r${n}`]);
    void batcher.call(CLAIM, 't', ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']); // alone over maxArgs: still sent, alone
    echo(sent[0]!);
    await settle();
    expect(sent.at(-1)!.args).toEqual(['1', '1', 'r1', '1', '1', 'r2', '1', '1', 'r3']);
    echo(sent.at(-1)!);
    await settle();
    // Two more calls fit the arguments bound (3 + 3), the long one does not.
    expect(sent.at(-1)!.args).toEqual(['1', '1', 'r4', '1', '1', 'r5']);
    echo(sent.at(-1)!);
    await settle();
    expect(sent.at(-1)!.lua).toBe('claim');
    expect(sent.at(-1)!.args).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('rejects only the call whose reply is an error', async () => {
    const { batcher, sent } = fakeServer();
    const replies = ['r1', 'r2', 'r3'].map((id) => batcher.call(CLAIM, 't', [id]));
    await settle();
    const error = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    sent[0]!.answer([null, error, ['ok']]);
    const results = await Promise.allSettled(replies);
    expect(results).toEqual([
      { status: 'fulfilled', value: null },
      { status: 'rejected', reason: error },
      { status: 'fulfilled', value: ['ok'] },
    ]);
  });

  it('gives every caller of a batch the error of the invocation, and sends nothing again', async () => {
    const { batcher, sent } = fakeServer();
    const replies = ['r1', 'r2'].map((id) => batcher.call(CLAIM, 't', [id]));
    await settle();
    const error = new Error('Connection is closed.');
    sent[0]!.fail(error);
    const results = await Promise.allSettled(replies);
    expect(results.map((r) => (r.status === 'rejected' ? r.reason : r.value))).toEqual([error, error]);
    expect(sent).toHaveLength(1);
  });

  it('rejects every caller of a batch whose reply does not have one entry per call', async () => {
    const { batcher, sent } = fakeServer();
    const replies = ['r1', 'r2'].map((id) => batcher.call(CLAIM, 't', [id]));
    await settle();
    sent[0]!.answer([['only one']]);
    const results = await Promise.allSettled(replies);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('sends the next batch after a failed one', async () => {
    const { batcher, sent } = fakeServer({ maxInFlight: 1 });
    const first = batcher.call(CLAIM, 't', ['r1']);
    await settle();
    const second = batcher.call(CLAIM, 't', ['r2']);
    sent[0]!.fail(new Error('boom'));
    await expect(first).rejects.toThrow('boom');
    await settle();
    echo(sent[1]!);
    await expect(second).resolves.toEqual(['claim', 'r2']);
  });
});
