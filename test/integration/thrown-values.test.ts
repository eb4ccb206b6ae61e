/**
 * Whatever a handler throws (or rejects with, or returns), its attempt is recorded,
 * and the run ends as its retry policy says: never left `running` for the lease,
 * never retried under `retry: false`, and with as much of the original error as can
 * be read. On every store: a Postgres `text` column refuses NUL, so what is
 * recorded must be storable everywhere.
 */
import { runInNewContext } from 'node:vm';
import { afterAll, describe, expect, it } from 'vitest';
import { Scheduler } from '../../src/index.js';
import { FakeClock } from '../../src/testing/index.js';
import { EVERY_STORE, closeServers } from './every-store.js';

const T0 = Date.UTC(2026, 0, 1);

function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}
const trap = (): never => {
  throw new Error('trap threw');
};
const cyclic: Record<string, unknown> = {};
cyclic.self = cyclic;

/** What a handler does, and the `{ name, message }` its run must record. */
const THROWN: readonly [label: string, handler: () => unknown, name: string, message: string | RegExp][] = [
  ['an Error', () => { throw new TypeError('plain'); }, 'TypeError', 'plain'],
  ['a Proxy of an Error whose every read throws', () => { throw new Proxy(new Error('hidden'), { get: trap }); }, 'Error', '(its message could not be read: trap threw)'],
  ['an Error whose message getter throws', () => { throw Object.defineProperty(new Error('x'), 'message', { get: trap }); }, 'Error', '(its message could not be read: trap threw)'],
  ['an Error whose name getter throws', () => { throw Object.defineProperty(new RangeError('kept'), 'name', { get: trap }); }, 'Error', 'kept'],
  ['an Error whose name is a number', () => { throw Object.assign(new Error('kept'), { name: 42 }); }, 'Error', 'kept'],
  ['an Error with a 1 MB message', () => { throw new Error('x'.repeat(1_000_000)); }, 'Error', /^x{4093}\.\.\.$/],
  ['an Error with NUL and a lone surrogate', () => { throw new Error('a\u0000b\ud800c'); }, 'Error', 'a\ufffdb\ufffdc'],
  ['an Error from another realm', () => { throw runInNewContext('new SyntaxError("other realm")'); }, 'SyntaxError', 'other realm'],
  ['an object whose message getter throws', () => { throw { get message(): string { return trap(); } }; }, 'Error', '[object Object] (not serializable)'],
  ['a revoked Proxy', () => { throw revokedProxy(); }, 'Error', 'a value that cannot be shown'],
  ['a Symbol', () => { throw Symbol('s'); }, 'Error', 'Symbol(s)'],
  ['a BigInt', () => { throw 10n; }, 'Error', '10n'],
  ['a cyclic object', () => { throw cyclic; }, 'Error', '[object Object] (not serializable)'],
  ['a null-prototype object', () => { throw Object.assign(Object.create(null) as object, { code: 7 }); }, 'Error', '{"code":7}'],
  ['a string', () => { throw 'just text'; }, 'Error', 'just text'],
  ['undefined', () => { throw undefined; }, 'Error', 'undefined'],
  ['a promise rejecting with a hostile Proxy', () => Promise.reject(new Proxy(new Error('hidden'), { get: trap })), 'Error', '(its message could not be read: trap threw)'],
  ['a thenable whose then getter throws', () => ({ get then(): never { throw new Error('then getter threw'); } }), 'Error', 'then getter threw'],
];

afterAll(closeServers);

for (const target of EVERY_STORE) {
  describe.skipIf(!target.up)(`thrown values, ${target.kind} store`, () => {
    it('records any thrown value safely and ends each run as its retry policy says', async () => {
      const opened = await target.open();
      const clock = new FakeClock(T0);
      const scheduler = new Scheduler({ store: opened.store, clock });
      const failed: string[] = [];
      const retried: string[] = [];
      const errors: string[] = [];
      scheduler.on('run:failed', ({ run }) => void failed.push(run.jobName));
      scheduler.on('run:retry', ({ run }) => void retried.push(run.jobName));
      scheduler.on('error', (error) => void errors.push(error.message));
      try {
        THROWN.forEach(([, handler], i) => scheduler.register({ name: `t${i}`, schedule: { at: T0 + 1000 }, retry: false, handler }));
        // The same hostile value under a retry policy: retried once, then failed.
        scheduler.register({ name: 'retried', schedule: { at: T0 + 1000 }, retry: { limit: 1, initialDelay: '1s' }, handler: THROWN[1]![1] });
        await scheduler.start();
        // Long enough for heartbeats (every 10 s) to find runs whose notifications the server delivered late.
        await clock.advance('1m');

        expect(errors).toEqual([]);
        for (const [i, [label, , name, message]] of THROWN.entries()) {
          const [run] = await scheduler.listRuns(`t${i}`);
          expect(run && [run.status, run.attempt], label).toEqual(['failed', 1]);
          expect(run?.error?.name, label).toBe(name);
          expect(run?.error?.message, label).toMatch(typeof message === 'string' ? new RegExp(`^${escape(message)}$`) : message);
        }
        const [retriedRun] = await scheduler.listRuns('retried');
        expect(retriedRun && [retriedRun.status, retriedRun.attempt]).toEqual(['failed', 2]);
        expect(retried).toEqual(['retried']);
        expect(failed.sort()).toEqual([...THROWN.map((_, i) => `t${i}`), 'retried'].sort());
        expect(scheduler.runningRuns).toEqual([]);
      } finally {
        const stopping = scheduler.stop();
        await clock.advance('1m');
        await stopping;
        await opened.dispose();
      }
    });
  });
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

