/**
 * The planner leases of one instance: which partitions of the store it plans. Each
 * partition has a lease of its own (`partitionLockName`); an instance taking part in
 * planning also holds a member lease (a numbered slot, so names stay few), and
 * `Lock.list` tells it how many instances take part and which partitions are free.
 *
 * On every refresh (each heartbeat, and the timers below) an instance renews what it
 * holds, then moves toward its fair share, `ceil(partitions / members)`: it takes free
 * partitions (expired leases included) while below it, and gives back its surplus
 * above it, so a newcomer gets a share within a heartbeat or two. A dead instance's
 * leases expire `leaseMs` after its last renewal; every survivor keeps a timer at the
 * earliest lease held by another instance, which never fires while that instance
 * renews (each refresh moves it later) and, when it does fire, finds the lease
 * expired and takes the partition over: within `leaseMs` of the death.
 *
 * With one partition this is the single planner lease of old: no member lease, no
 * listing. A lock without `list` cannot count instances: an instance then takes
 * every partition it can get.
 */
import { fnv1a32, memberLockPrefix, partitionLockName, partitionOfLock } from './partition.js';
import type { Lock, LockLease } from './store.js';
import type { Runtime } from './runtime.js';

/** What `refresh()` changed. */
export interface LeaseChanges {
  readonly gained: readonly number[];
  readonly lost: readonly number[];
}

/** What an instance sees of the partition leases: enough to decide its moves. */
export interface ShareView {
  readonly partitions: number;
  /** Instances taking part in planning, this one included (at least 1). */
  readonly members: number;
  /** The partitions this instance holds. */
  readonly mine: ReadonlySet<number>;
  /** The partitions another instance holds (live leases). */
  readonly others: ReadonlyMap<number, string>;
  /** Where this instance starts looking for free partitions, so instances that start together try different ones first. */
  readonly offset: number;
}

/** How many partitions each instance plans when they are shared out evenly: `ceil(partitions / members)`. */
function fairShare(view: ShareView): number {
  return Math.ceil(view.partitions / Math.max(1, view.members));
}

/**
 * Pure: the partitions to take (free ones, while below the fair share) and to give
 * back (the surplus above it, highest first: partition 0 carries the housekeeping,
 * and a partition that stays put needs no reload).
 */
export function shareMoves(view: ShareView): { readonly take: readonly number[]; readonly give: readonly number[] } {
  const fair = fairShare(view);
  const mine = [...view.mine].sort((a, b) => a - b);
  if (mine.length > fair) return { take: [], give: mine.slice(fair).reverse() };
  const take: number[] = [];
  for (let i = 0; i < view.partitions && mine.length + take.length < fair; i += 1) {
    const partition = (view.offset + i) % view.partitions;
    if (!view.mine.has(partition) && !view.others.has(partition)) take.push(partition);
  }
  return { take, give: [] };
}

/** True when this instance is below its fair share and another is above it: that one gives back at its next refresh. */
export function waitsForShare(view: ShareView): boolean {
  const fair = fairShare(view);
  if (view.mine.size >= fair) return false;
  const counts = new Map<string, number>();
  for (const owner of view.others.values()) counts.set(owner, (counts.get(owner) ?? 0) + 1);
  return [...counts.values()].some((count) => count > fair);
}

export class PartitionLeases {
  readonly #rt: Runtime;
  readonly #lock: Lock;
  /** How many partitions the store has. */
  readonly count: number;
  readonly #leases = new Map<number, LockLease>();
  #member: LockLease | undefined;
  /** When to refresh again on our own, undefined: at the next heartbeat. */
  #refreshAt: number | undefined;
  /** When the leases were last renewed (`renewDue`). */
  #renewedAt = -Infinity;
  /** When this instance first took its member lease (joined the planning). */
  #joinedAt = -Infinity;

  constructor(runtime: Runtime, lock: Lock, count: number) {
    this.#rt = runtime;
    this.#lock = lock;
    this.count = count;
  }

  /** The partitions held, in order. */
  get owned(): readonly number[] {
    return [...this.#leases.keys()].sort((a, b) => a - b);
  }

  get any(): boolean {
    return this.#leases.size > 0;
  }

  /** When the next refresh is due before the next heartbeat: another instance's lease expires, or a share is to be given back. */
  get refreshAt(): number | undefined {
    return this.#refreshAt;
  }

  /** Whether partition `partition`'s lease is held and not past its `leaseUntil` (a heartbeat stuck behind a slow store cannot renew it). */
  holds(partition: number): boolean {
    const lease = this.#leases.get(partition);
    return lease !== undefined && lease.leaseUntil > this.#rt.clock.now();
  }

  /**
   * Renews what is held (unless renewed within `leaseMs / 6`), then takes or gives back partitions toward the fair share;
   * `handOver` is awaited before partitions are given back (the planner stops planning
   * them and lets its writes in flight end).
   */
  async refresh(handOver: (partitions: readonly number[]) => Promise<void>): Promise<LeaseChanges> {
    const { io, clock, leaseMs } = this.#rt;
    const now = clock.now();
    // Refreshes every leaseMs / 10 (a share to settle) renew every other time: renewals stay under leaseMs / 2 apart.
    const renewing: number[] | Promise<number[]> = now - this.#renewedAt < leaseMs / 6 ? [] : this.renew();
    const gained: number[] = [];
    const list = this.count === 1 ? undefined : this.#lock.list?.bind(this.#lock);
    // Listed along with the renewal (one round trip on a store that runs a connection's commands in order): the view
    // below is made once both are done, from the leases the renewal kept.
    const listing = list && io('lock.list', () => list({ prefix: 'planner', now }));
    const lost = await renewing;
    this.#refreshAt = undefined;
    if (list === undefined) {
      const wanted = Array.from({ length: this.count }, (_, partition) => partition).filter((partition) => !this.#leases.has(partition));
      gained.push(...(await this.#take(wanted)));
      return { gained, lost };
    }
    const live = await listing;
    if (live === undefined) return { gained, lost };
    const view = await this.#view(live, now);
    const { take, give } = shareMoves(view);
    if (give.length > 0) {
      // Not held from here on (no job of theirs is planned again), given back once the planner is done with them.
      const leaving = give.flatMap((partition) => this.#leases.get(partition) ?? []);
      for (const partition of give) this.#leases.delete(partition);
      await handOver(give);
      await Promise.all(leaving.map((lease) => this.#release(lease)));
      lost.push(...give);
    }
    const taken = await this.#take(take);
    gained.push(...taken);
    // A partition another instance took first (instances that start together race for the free ones): look again soon.
    this.#planRefresh(live, { ...view, mine: new Set(this.#leases.keys()) }, taken.length < take.length);
    return { gained, lost };
  }

  /** Gives every lease back (stop). */
  async releaseAll(): Promise<void> {
    const leases = [...this.#leases.keys()];
    await Promise.all(leases.map((partition) => this.#give(partition)));
    const member = this.#member;
    this.#member = undefined;
    if (member !== undefined) await this.#release(member);
  }

  /**
   * Renews the held leases (the member lease included) at once, in one `renewAll` call
   * when the lock has it; resolves the partitions lost (refused, or unanswered past
   * their lease).
   */
  async renew(): Promise<number[]> {
    const { clock, leaseMs } = this.#rt;
    const now = clock.now();
    this.#renewedAt = now;
    // The member lease goes along as partition -1.
    const held = [...this.#leases];
    if (this.#member !== undefined) held.push([-1, this.#member]);
    const answers = await this.#renewEach(
      held.map(([, lease]) => lease),
      now,
      now + leaseMs,
    );
    const lost: number[] = [];
    for (const [i, [partition, lease]] of held.entries()) {
      // An unanswered renewal keeps the lease until it would have expired anyway, and the next refresh renews again.
      if (answers[i] === undefined) this.#renewedAt = -Infinity;
      const kept = answers[i] === true ? { ...lease, leaseUntil: now + leaseMs } : answers[i] === false || clock.now() >= lease.leaseUntil ? undefined : lease;
      if (partition < 0) this.#member = kept;
      else if (kept !== undefined) this.#leases.set(partition, kept);
      else {
        this.#leases.delete(partition);
        lost.push(partition);
      }
    }
    return lost;
  }

  /**
   * Whether leases are held and their last renewal is `leaseMs / 3` old (as a heartbeat
   * would renew them): work that holds the heartbeat up renews or refreshes them then
   * (loading or writing a million jobs takes minutes on a busy machine, longer than the lease).
   */
  get renewalDue(): boolean {
    return this.#leases.size > 0 && this.#rt.clock.now() - this.#renewedAt >= this.#rt.leaseMs / 3;
  }

  /** One answer per lease (undefined: the lock failed): one `renewAll` call, or a `renew` call each for a lock without it. */
  async #renewEach(leases: readonly LockLease[], now: number, leaseUntil: number): Promise<readonly (boolean | undefined)[]> {
    if (leases.length === 0) return [];
    const { io } = this.#rt;
    const lock = this.#lock;
    const renewAll = lock.renewAll?.bind(lock);
    if (renewAll !== undefined) return (await io('lock.renewAll', () => renewAll({ leases, now, leaseUntil }))) ?? [];
    return Promise.all(leases.map((lease) => io('lock.renew', () => lock.renew({ ...lease, now, leaseUntil }))));
  }

  /** The share view from the live leases; takes a member slot first when this instance has none. */
  async #view(live: readonly LockLease[], now: number): Promise<ShareView> {
    const { instanceId } = this.#rt;
    const memberPrefix = memberLockPrefix(this.count);
    const members = live.filter((lease) => lease.name.startsWith(memberPrefix));
    if (this.#member === undefined) {
      const used = new Set(members.map((lease) => lease.name));
      let slot = 0;
      while (used.has(`${memberPrefix}${slot}`)) slot += 1;
      const name = `${memberPrefix}${slot}`;
      this.#member = await this.#rt.io('lock.acquire', () => this.#lock.acquire({ name, owner: instanceId, now, leaseUntil: now + this.#rt.leaseMs }));
      if (this.#member !== undefined && this.#joinedAt < 0) this.#joinedAt = now;
    }
    const owners = new Set(members.map((lease) => lease.owner));
    owners.add(instanceId);
    const others = new Map<number, string>();
    for (const lease of live) {
      const partition = partitionOfLock(lease.name, this.count);
      if (partition !== undefined && lease.owner !== instanceId) others.set(partition, lease.owner);
    }
    return { partitions: this.count, members: owners.size, mine: new Set(this.#leases.keys()), others, offset: offsetOf(instanceId, this.count) };
  }

  /**
   * The next refresh of our own: soon (`leaseMs / 10`) while a share is to be given
   * back to us (another instance gives it at its next refresh) and after a lost race
   * for a free partition. Between this instance's first two heartbeats in planning,
   * while it holds more than a newcomer would leave it, `leaseMs / 10` after it joined
   * and then as long again as it has been planning (3 s and 6 s by default): instances
   * started together join early, the first one to start took every partition, and it
   * gives back within about `leaseMs / 10` of their joining rather than at its next
   * heartbeat, while a lone instance looks twice, not every `leaseMs / 10`. Else when
   * the earliest lease held by another instance expires (it is renewed before then
   * while its holder lives).
   */
  #planRefresh(live: readonly LockLease[], view: ShareView, lostRace: boolean): void {
    const { clock, leaseMs, instanceId } = this.#rt;
    const now = clock.now();
    const soon = Math.max(1, Math.floor(leaseMs / 10));
    const planning = now - this.#joinedAt;
    if (lostRace || waitsForShare(view)) {
      this.#refreshAt = now + soon;
      return;
    }
    if (planning < leaseMs / 3 && view.mine.size > fairShare({ ...view, members: view.members + 1 })) {
      this.#refreshAt = now + Math.max(soon, planning);
      return;
    }
    let earliest: number | undefined;
    for (const lease of live) {
      if (lease.owner !== instanceId && partitionOfLock(lease.name, this.count) !== undefined && (earliest === undefined || lease.leaseUntil < earliest)) {
        earliest = lease.leaseUntil;
      }
    }
    this.#refreshAt = earliest;
  }

  /** Tries to take each partition at once; resolves those taken. */
  async #take(partitions: readonly number[]): Promise<number[]> {
    const { io, clock, leaseMs, instanceId } = this.#rt;
    const now = clock.now();
    const leases = await Promise.all(
      partitions.map((partition) => {
        const name = partitionLockName(partition, this.count);
        return io('lock.acquire', () => this.#lock.acquire({ name, owner: instanceId, now, leaseUntil: now + leaseMs }));
      }),
    );
    const taken: number[] = [];
    for (const [i, lease] of leases.entries()) {
      const partition = partitions[i] as number;
      if (lease === undefined) continue;
      this.#leases.set(partition, lease);
      taken.push(partition);
    }
    return taken;
  }

  async #give(partition: number): Promise<void> {
    const lease = this.#leases.get(partition);
    this.#leases.delete(partition);
    if (lease !== undefined) await this.#release(lease);
  }

  async #release(lease: LockLease): Promise<void> {
    await this.#rt.io('lock.release', () => this.#lock.release(lease));
  }
}

/** Where an instance starts looking for free partitions: spread by its ID. */
function offsetOf(instanceId: string, count: number): number {
  return fnv1a32(instanceId) % count;
}

/** Planning writes in flight, per partition, so that a partition is given back only once its writes are done. */
export class PartitionWrites {
  readonly #writes = new Map<number, number>();
  /** Who waits for some writes to end (`drained`). */
  readonly #drained: (() => void)[] = [];

  /** Counts `write` in flight for `partition` until it settles; returns it. */
  track<T>(partition: number, write: Promise<T>): Promise<T> {
    this.#writes.set(partition, (this.#writes.get(partition) ?? 0) + 1);
    // Counted down on a side branch: the caller awaits the write itself, so its events keep their order.
    const done = (): void => {
      const left = (this.#writes.get(partition) ?? 1) - 1;
      if (left > 0) this.#writes.set(partition, left);
      else this.#writes.delete(partition);
      if (left <= 0) for (const resolve of this.#drained.splice(0)) resolve();
    };
    write.then(done, done);
    return write;
  }

  /** Resolves once no write of `partitions` is in flight. */
  async drained(partitions: readonly number[]): Promise<void> {
    while (partitions.some((partition) => this.#writes.has(partition))) await new Promise<void>((resolve) => this.#drained.push(resolve));
  }
}
