/**
 * Named leases in one process: the lock adapter of `MemoryStore`. Schedulers that
 * share one `MemoryStore` (tests simulating several instances) share its lock.
 */
import type { Lock, LockLease } from '../../src/store.js';

export class MemoryLock implements Lock {
  readonly #leases = new Map<string, LockLease>();
  /** Tokens outlive releases, so a lock that changes hands always gets a larger one. */
  readonly #tokens = new Map<string, number>();

  async acquire(input: { name: string; owner: string; now: number; leaseUntil: number }): Promise<LockLease | undefined> {
    const held = this.#leases.get(input.name);
    if (held !== undefined && held.owner !== input.owner && held.leaseUntil > input.now) return undefined;
    const token =
      held !== undefined && held.owner === input.owner && held.leaseUntil > input.now
        ? held.token
        : (this.#tokens.get(input.name) ?? 0) + 1;
    this.#tokens.set(input.name, token);
    const lease: LockLease = { name: input.name, owner: input.owner, token, leaseUntil: input.leaseUntil };
    this.#leases.set(input.name, lease);
    return lease;
  }

  async renew(input: { name: string; owner: string; token: number; now: number; leaseUntil: number }): Promise<boolean> {
    const held = this.#leases.get(input.name);
    if (held === undefined || held.owner !== input.owner || held.token !== input.token || held.leaseUntil <= input.now) {
      return false;
    }
    this.#leases.set(input.name, { ...held, leaseUntil: input.leaseUntil });
    return true;
  }

  async renewAll(input: { leases: readonly { name: string; owner: string; token: number }[]; now: number; leaseUntil: number }): Promise<readonly boolean[]> {
    const { now, leaseUntil } = input;
    return Promise.all(input.leases.map((lease) => this.renew({ ...lease, now, leaseUntil })));
  }

  async release(input: { name: string; owner: string; token: number }): Promise<void> {
    const held = this.#leases.get(input.name);
    if (held !== undefined && held.owner === input.owner && held.token === input.token) this.#leases.delete(input.name);
  }

  async list(input: { prefix: string; now: number }): Promise<readonly LockLease[]> {
    return [...this.#leases.values()].filter((lease) => lease.name.startsWith(input.prefix) && lease.leaseUntil > input.now);
  }
}
