/**
 * Conformance (the lock): named leases with fencing tokens, as `Lock` says. Proves a
 * store's `lock()` (`storeConformance`, `describeLock` with `createLock: () =>
 * store.lock()`) or a lock of its own that a scheduler is given as `lock`.
 */
import type { Lock } from '../../store.js';
import { T0, type ConformanceTestApi } from './fixtures.js';

export interface LockConformanceOptions extends ConformanceTestApi {
  /** A fresh lock with no lease held (its own namespace). */
  readonly createLock: () => Lock | Promise<Lock>;
  /** Disposes of a lock after its test (closes what `createLock` opened); default: nothing. */
  readonly destroyLock?: (lock: Lock) => void | Promise<void>;
}

export function lockTests(options: ConformanceTestApi, withLock: (test: (lock: Lock) => Promise<void>) => Promise<void>): void {
  const { describe, it, expect } = options;
  describe('lock', () => {
    it('elects one holder, renews, expires and hands over with a larger token', () =>
      withLock(async (lock) => {
        const racing = await Promise.all(
          ['p', 'q', 'r'].map((owner) => lock.acquire({ name: 'planner', owner, now: T0, leaseUntil: T0 + 1_000 })),
        );
        const holders = racing.filter((l) => l !== undefined);
        expect(holders).toHaveLength(1);
        const first = holders[0]!;
        const other = first.owner === 'p' ? 'q' : 'p';
        expect(await lock.acquire({ name: 'planner', owner: other, now: T0 + 500, leaseUntil: T0 + 1_500 })).toBeUndefined();
        expect(await lock.renew({ name: 'planner', owner: first.owner, token: first.token, now: T0 + 900, leaseUntil: T0 + 2_000 })).toBe(true);
        expect(await lock.acquire({ name: 'planner', owner: other, now: T0 + 1_500, leaseUntil: T0 + 2_500 })).toBeUndefined();
        const again = await lock.acquire({ name: 'planner', owner: first.owner, now: T0 + 1_600, leaseUntil: T0 + 2_600 });
        expect(again?.token).toBe(first.token);
        const taken = await lock.acquire({ name: 'planner', owner: other, now: T0 + 2_601, leaseUntil: T0 + 3_601 });
        expect(taken?.token).toBeGreaterThan(first.token);
        expect(await lock.renew({ name: 'planner', owner: first.owner, token: first.token, now: T0 + 2_700, leaseUntil: T0 + 4_000 })).toBe(false);
        await lock.release({ name: 'planner', owner: first.owner, token: first.token });
        expect(await lock.acquire({ name: 'planner', owner: 'z', now: T0 + 2_800, leaseUntil: T0 + 3_800 })).toBeUndefined();
        await lock.release({ name: 'planner', owner: other, token: taken!.token });
        const after = await lock.acquire({ name: 'planner', owner: 'z', now: T0 + 2_900, leaseUntil: T0 + 3_900 });
        expect(after?.token).toBeGreaterThan(taken!.token);
        expect(await lock.acquire({ name: 'other-lock', owner: 'y', now: T0 + 2_900, leaseUntil: T0 + 3_900 })).toBeDefined();
      }));

    it('renews several leases in one call as renew would, one answer each (when it can)', () =>
      withLock(async (lock) => {
        if (lock.renewAll === undefined) return;
        expect(await lock.renewAll({ leases: [], now: T0, leaseUntil: T0 + 1_000 })).toEqual([]);
        const a = (await lock.acquire({ name: 'planner:0/4', owner: 'p', now: T0, leaseUntil: T0 + 1_000 }))!;
        const b = (await lock.acquire({ name: 'planner:1/4', owner: 'p', now: T0, leaseUntil: T0 + 3_000 }))!;
        const c = (await lock.acquire({ name: 'planner:2/4', owner: 'q', now: T0, leaseUntil: T0 + 3_000 }))!;
        const d = (await lock.acquire({ name: 'planner:3/4', owner: 'p', now: T0, leaseUntil: T0 + 3_000 }))!;
        await lock.release(d);
        const leases = [
          a, // expired at T0 + 1_000: refused
          b, // renewed
          { ...c, owner: 'p' }, // held by another owner: refused
          { ...b, name: 'planner:9/4' }, // never taken: refused
          d, // released: refused
          { ...c, token: c.token + 1 }, // a stale token: refused
          c, // renewed
        ];
        expect(await lock.renewAll({ leases, now: T0 + 1_000, leaseUntil: T0 + 5_000 })).toEqual([false, true, false, false, false, false, true]);
        // Renewed to the new leaseUntil (past the old one), the refused left as they were.
        expect(await lock.acquire({ name: 'planner:1/4', owner: 'z', now: T0 + 4_000, leaseUntil: T0 + 6_000 })).toBeUndefined();
        expect(await lock.acquire({ name: 'planner:2/4', owner: 'z', now: T0 + 4_999, leaseUntil: T0 + 6_000 })).toBeUndefined();
        expect(await lock.renew({ ...b, now: T0 + 4_999, leaseUntil: T0 + 6_000 })).toBe(true);
        expect((await lock.acquire({ name: 'planner:0/4', owner: 'z', now: T0 + 1_000, leaseUntil: T0 + 6_000 }))?.token).toBeGreaterThan(a.token);
        expect(await lock.acquire({ name: 'planner:3/4', owner: 'z', now: T0 + 1_000, leaseUntil: T0 + 6_000 })).toBeDefined();
        expect((await lock.acquire({ name: 'planner:2/4', owner: 'z', now: T0 + 5_000, leaseUntil: T0 + 6_000 }))?.token).toBeGreaterThan(c.token);
      }));

    it('renews and lists at once, as a heartbeat does: each answers as it would alone (when it can)', () =>
      withLock(async (lock) => {
        if (lock.renewAll === undefined || lock.list === undefined) return;
        const a = (await lock.acquire({ name: 'planner:0/4', owner: 'p', now: T0, leaseUntil: T0 + 1_000 }))!;
        const b = (await lock.acquire({ name: 'planner:1/4', owner: 'q', now: T0, leaseUntil: T0 + 1_000 }))!;
        const [renewed, listed] = await Promise.all([
          lock.renewAll({ leases: [a, { ...b, owner: 'p' }], now: T0 + 500, leaseUntil: T0 + 3_000 }),
          lock.list({ prefix: 'planner:', now: T0 + 500 }),
        ]);
        expect(renewed).toEqual([true, false]);
        // The listing may come before the renewal or after it (a store of several connections runs them side by side).
        const [first, second] = [...listed].sort((x, y) => (x.name < y.name ? -1 : 1));
        expect(second).toEqual(b);
        expect([a, { ...a, leaseUntil: T0 + 3_000 }]).toContainEqual(first);
        expect(await lock.list({ prefix: 'planner:0', now: T0 + 1_000 })).toEqual([{ ...a, leaseUntil: T0 + 3_000 }]);
      }));

    it('lists the live leases whose names start with a prefix (when it can)', () =>
      withLock(async (lock) => {
        if (lock.list === undefined) return;
        const a = await lock.acquire({ name: 'planner:0/4', owner: 'p', now: T0, leaseUntil: T0 + 1_000 });
        const b = await lock.acquire({ name: 'planner:1/4', owner: 'q', now: T0, leaseUntil: T0 + 2_000 });
        const released = await lock.acquire({ name: 'planner:2/4', owner: 'q', now: T0, leaseUntil: T0 + 2_000 });
        await lock.release({ name: 'planner:2/4', owner: 'q', token: released!.token });
        await lock.acquire({ name: 'planner-member/4:0', owner: 'p', now: T0, leaseUntil: T0 + 2_000 });
        const byName = (leases: readonly { name: string }[]) => [...leases].sort((x, y) => (x.name < y.name ? -1 : 1));
        expect(byName(await lock.list({ prefix: 'planner:', now: T0 + 500 }))).toEqual([
          { name: 'planner:0/4', owner: 'p', token: a!.token, leaseUntil: T0 + 1_000 },
          { name: 'planner:1/4', owner: 'q', token: b!.token, leaseUntil: T0 + 2_000 },
        ]);
        // Expired at leaseUntil.
        expect((await lock.list({ prefix: 'planner:', now: T0 + 1_000 })).map((l) => l.name)).toEqual(['planner:1/4']);
        expect(await lock.list({ prefix: 'nothing', now: T0 })).toEqual([]);
        expect((await lock.list({ prefix: 'planner-member/4:', now: T0 })).map((l) => l.owner)).toEqual(['p']);
      }));
  });
}
