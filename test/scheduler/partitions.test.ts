/**
 * Sharded planning on a fake clock: jobs fall into partitions, instances share the
 * partitions' planner leases out, a newcomer gets its share, a silent instance's
 * partitions are taken over within `leaseMs`, and housekeeping has one owner.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore, Scheduler, ValidationError } from '../../src/index.js';
import { fnv1a32, partitionOf } from '../../src/partition.js';
import { shareMoves, waitsForShare } from '../../src/partition-leases.js';
import { FakeClock } from '../../src/testing/index.js';
import { FreezableClock, T0 } from '../helpers.js';

const LEASE_MS = 3_000;
const JOBS = Array.from({ length: 40 }, (_, i) => `job-${i}`);

interface Instance {
  readonly scheduler: Scheduler;
  readonly clock: FreezableClock;
  /** Run IDs this instance created (planned), and those it ran. */
  readonly created: string[];
  readonly ran: string[];
  /** `tick:missed` ranges this instance reported. */
  readonly missed: { job: string; from: number; to: number }[];
}

function instance(store: MemoryStore, fake: FakeClock, id: string): Instance {
  const clock = new FreezableClock(fake);
  const scheduler = new Scheduler({ store, clock, instanceId: id, leaseMs: LEASE_MS, logger: false });
  const created: string[] = [];
  const ran: string[] = [];
  const missed: { job: string; from: number; to: number }[] = [];
  scheduler.on('run:created', ({ run }) => void created.push(run.id));
  scheduler.on('tick:missed', ({ jobName, from, to }) => void missed.push({ job: jobName, from: from.getTime(), to: to.getTime() }));
  for (const name of JOBS) scheduler.register({ name, schedule: '* * * * * *', handler: (ctx) => void ran.push(ctx.runId) });
  return { scheduler, clock, created, ran, missed };
}

/** Each partition held by exactly one of `instances` (sampled now). */
function holdings(instances: readonly Instance[]): number[][] {
  return instances.map(({ scheduler }) => [...scheduler.plannedPartitions]);
}

/** Every tick of every job from `from` to `to` (ms, inclusive) ran exactly once across `instances`, or was reported missed. */
function expectEveryTickOnce(instances: readonly Instance[], from: number, to: number, reported: readonly { job: string; from: number; to: number }[] = []): void {
  const ran = instances.flatMap((i) => i.ran);
  const counts = new Map<string, number>();
  for (const id of ran) counts.set(id, (counts.get(id) ?? 0) + 1);
  expect([...counts].filter(([, n]) => n > 1), 'duplicates').toEqual([]);
  const missing: string[] = [];
  for (let t = from; t <= to; t += 1_000) for (const name of JOBS) if (!counts.has(`${name}.${t / 1_000}`) && !reported.some((r) => r.job === name && r.from <= t && t <= r.to)) missing.push(`${name}.${t / 1_000}`);
  expect(missing, 'ticks that never ran').toEqual([]);
}

describe('partitions: the hash', () => {
  it('is FNV-1a 32-bit over UTF-8 (the published test vectors) and spreads job names', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
    expect(fnv1a32('€')).toBe(fnv1a32('\u20ac'));
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 8_000; i += 1) counts[partitionOf(`report-${i}`, 8)]! += 1;
    for (const count of counts) expect(count).toBeGreaterThan(800);
    expect(partitionOf('anything', 1)).toBe(0);
  });
});

describe('partitions: sharing them out (pure)', () => {
  const view = (mine: number[], others: [number, string][], members: number, partitions = 8) => ({
    partitions,
    members,
    mine: new Set(mine),
    others: new Map(others),
    offset: 0,
  });

  it('takes free partitions up to ceil(P / members), gives back the surplus highest first', () => {
    expect(shareMoves(view([], [], 1))).toEqual({ take: [0, 1, 2, 3, 4, 5, 6, 7], give: [] });
    expect(shareMoves(view([0, 1, 2, 3, 4, 5, 6, 7], [], 3))).toEqual({ take: [], give: [7, 6, 5, 4, 3] });
    expect(shareMoves(view([], [[0, 'a'], [1, 'a'], [2, 'a']], 3))).toEqual({ take: [3, 4, 5], give: [] });
    expect(shareMoves(view([3], [[0, 'a'], [1, 'a'], [2, 'a'], [4, 'b'], [5, 'b'], [6, 'b']], 3))).toEqual({ take: [7], give: [] });
    expect(shareMoves({ ...view([], [], 2), offset: 6 }).take).toEqual([6, 7, 0, 1]);
  });

  it('waits for a share only while another instance holds more than its own', () => {
    expect(waitsForShare(view([], [[0, 'a'], [1, 'a'], [2, 'a'], [3, 'a'], [4, 'a'], [5, 'a'], [6, 'a'], [7, 'a']], 2))).toBe(true);
    expect(waitsForShare(view([0, 1, 2, 3], [[4, 'a'], [5, 'a'], [6, 'a'], [7, 'a']], 2))).toBe(false);
    expect(waitsForShare(view([0, 1], [[2, 'a'], [3, 'a'], [4, 'a'], [5, 'b'], [6, 'b'], [7, 'b']], 3))).toBe(false);
  });
});

describe('partitions: several schedulers on one store', () => {
  it('share 8 partitions 3/3/2, each planning only its own, every tick once', async () => {
    const fake = new FakeClock(T0);
    const store = new MemoryStore({ partitions: 8 });
    const instances = ['a', 'b', 'c'].map((id) => instance(store, fake, id));
    for (const { scheduler } of instances) await scheduler.start();
    await fake.advance(LEASE_MS); // a few heartbeats: the first took every partition, the others get their share
    const held = holdings(instances);
    expect(held.map((h) => h.length).sort()).toEqual([2, 3, 3]);
    expect(held.flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const from = fake.now() + 1_000;
    for (const i of instances) i.created.length = 0;
    await fake.advance('30s');
    expectEveryTickOnce(instances, from, fake.now() - 1_000);
    // Each instance created the runs of the jobs in its own partitions, and only those.
    for (const [n, i] of instances.entries()) {
      const mine = new Set(held[n]);
      const jobs = new Set(i.created.map((id) => id.slice(0, id.lastIndexOf('.'))));
      expect(jobs.size).toBeGreaterThan(0);
      for (const job of jobs) expect(mine.has(partitionOf(job, 8)), `${job} planned by ${i.scheduler.instanceId}`).toBe(true);
    }
    for (const { scheduler } of instances) await scheduler.stop();
  });

  it('with one instance plans every partition; a newcomer gets half within a heartbeat or two, without a tick lost', async () => {
    const fake = new FakeClock(T0);
    const store = new MemoryStore({ partitions: 8 });
    const a = instance(store, fake, 'a');
    await a.scheduler.start();
    await fake.advance('5s');
    expect(a.scheduler.plannedPartitions).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect((await a.scheduler.health()).partitions).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const b = instance(store, fake, 'b');
    await b.scheduler.start();
    await fake.advance(LEASE_MS / 3 + LEASE_MS / 10); // a's next heartbeat gives back; b's retry takes
    expect(holdings([a, b]).map((h) => h.length)).toEqual([4, 4]);
    await fake.advance('20s');
    expectEveryTickOnce([a, b], Date.parse(T0) + 1_000, fake.now() - 1_000);
    await a.scheduler.stop();
    await b.scheduler.stop();
  });

  it('takes a silent instance\'s partitions over within leaseMs of its last renewal: 0 duplicates, every tick run or reported', async () => {
    const fake = new FakeClock(T0);
    const store = new MemoryStore({ partitions: 8 });
    const instances = ['a', 'b', 'c'].map((id) => instance(store, fake, id));
    for (const { scheduler } of instances) await scheduler.start();
    await fake.advance(LEASE_MS * 2);
    const [a, b, c] = instances as [Instance, Instance, Instance];
    const doomed = b.scheduler.plannedPartitions;
    expect(doomed.length).toBeGreaterThan(0);
    // b's heartbeat just ran (every leaseMs / 3 from its start, in step with a's and c's): it goes silent now.
    const silentAt = fake.now();
    b.clock.freeze();
    let takenAt: number | undefined;
    for (let t = 0; t < LEASE_MS * 2 && takenAt === undefined; t += 50) {
      await fake.advance(50);
      const survivors = [...a.scheduler.plannedPartitions, ...c.scheduler.plannedPartitions];
      if (doomed.every((p) => survivors.includes(p))) takenAt = fake.now();
    }
    expect(takenAt, 'b\'s partitions taken over').toBeDefined();
    expect(takenAt! - silentAt).toBeLessThanOrEqual(LEASE_MS);
    expect(holdings([a, c]).flat().sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await fake.advance('20s');
    // b ran nothing since it went silent (its handlers' runs were claimed before): every tick once over a and c.
    const before = new Set(b.ran);
    // The ticks of b's jobs while nobody planned them are coalesced (Allow) and reported as missed, by their new planner.
    const reported = [...a.missed, ...c.missed];
    expect(reported.length).toBeGreaterThan(0);
    for (const range of reported) expect(doomed).toContain(partitionOf(range.job, 8));
    expectEveryTickOnce([a, { ...b, ran: [...before] }, c], Date.parse(T0) + 1_000, fake.now() - 1_000, reported);
    await a.scheduler.stop();
    await c.scheduler.stop();
  });

  it('keeps house on the holder of partition 0 only', async () => {
    const fake = new FakeClock(T0);
    const store = new MemoryStore({ partitions: 8 });
    const calls = new Map<string, number>();
    const counted = (id: string): MemoryStore =>
      new Proxy(store, {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (typeof value !== 'function') return value;
          return (...args: unknown[]) => {
            if (property === 'recoverExpiredRuns' || property === 'deleteExpiredRuns') calls.set(id, (calls.get(id) ?? 0) + 1);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    const schedulers = ['a', 'b', 'c'].map((id) => new Scheduler({ store: counted(id), clock: fake, instanceId: id, leaseMs: LEASE_MS, logger: false }));
    for (const scheduler of schedulers) await scheduler.start();
    await fake.advance(LEASE_MS);
    calls.clear();
    await fake.advance(LEASE_MS * 3);
    const keeper = schedulers.find((s) => s.plannedPartitions.includes(0))!;
    expect([...calls.keys()]).toEqual([keeper.instanceId]);
    expect(calls.get(keeper.instanceId)).toBeGreaterThanOrEqual(2 * 9 - 2);
    for (const scheduler of schedulers) await scheduler.stop();
  });

  it('rejects a partition count out of range, naming the field and value', () => {
    expect(() => new MemoryStore({ partitions: 0 })).toThrow(ValidationError);
    expect(() => new MemoryStore({ partitions: 2.5 })).toThrow(/partitions/);
    const store = Object.assign(new MemoryStore(), { partitions: 5_000 });
    expect(() => new Scheduler({ store })).toThrow(/partitions/);
  });
});
