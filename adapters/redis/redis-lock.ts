/**
 * Named leases with fencing tokens in Redis: the lock adapter of `RedisStore`,
 * which the scheduler uses to elect one planner among the instances. Each
 * operation is one Lua script; tokens come from a counter key that never expires,
 * so a lock that changes hands always gets a larger token.
 */
import type { Lock, LockLease } from '../../src/store.js';
import { num } from './codec.js';
import { hashTag, ScriptRunner } from './connection.js';
import { parseLockOptions, type RedisLockOptions } from './options.js';
import { LOCK_ACQUIRE, LOCK_LIST, LOCK_RELEASE, LOCK_RENEW, LOCK_RENEW_ALL, LOCK_RENEW_LIST, LOCK_SCRIPTS } from './lock-scripts.js';

/**
 * How long past its `leaseUntil` an abandoned lease key stays in Redis. Only
 * garbage collection: expiry is decided by comparing `leaseUntil` with the `now`
 * the core passes, so Redis's own clock (or a fake clock in tests) never frees a
 * lease early.
 */
const GRACE_MS = 60_000;

/** A `renewAll` waiting for the end of its tick: its arguments, and where its reply goes. */
interface Renewal {
  readonly args: readonly string[];
  readonly settle: (reply: Promise<unknown>) => void;
}

export class RedisLock implements Lock {
  readonly #scripts: ScriptRunner;
  readonly #tag: string;
  /** A renewal not sent yet: a `list` in the same tick takes it along (`LOCK_RENEW_LIST`). */
  #renewal: Renewal | undefined;

  /** @example new RedisLock({ client: redis, prefix: 'tickwork' }) */
  constructor(options: RedisLockOptions) {
    const { client, prefix } = parseLockOptions(options);
    this.#scripts = new ScriptRunner(client);
    this.#tag = hashTag(prefix);
  }

  /** Loads the lock scripts (idempotent); optional, as a missing script is loaded on first use. */
  async init(): Promise<void> {
    await this.#scripts.load(LOCK_SCRIPTS);
  }

  async acquire(input: { name: string; owner: string; now: number; leaseUntil: number }): Promise<LockLease | undefined> {
    const token = await this.#scripts.run(LOCK_ACQUIRE, [this.#tag], [
      input.name,
      input.owner,
      num(input.now),
      num(input.leaseUntil),
      num(GRACE_MS),
    ]);
    if (token === null) return undefined;
    return { name: input.name, owner: input.owner, token: Number(token), leaseUntil: input.leaseUntil };
  }

  async renew(input: { name: string; owner: string; token: number; now: number; leaseUntil: number }): Promise<boolean> {
    const renewed = await this.#scripts.run(LOCK_RENEW, [this.#tag], [
      input.name,
      input.owner,
      num(input.token),
      num(input.now),
      num(input.leaseUntil),
      num(GRACE_MS),
    ]);
    return renewed === 1;
  }

  /**
   * Every lease renewed in one script (one round trip), as many `renew` calls would.
   * Sent at the end of the tick: a `list` called meanwhile (a heartbeat renews and
   * lists together) sends both in one script, the renewal first.
   */
  async renewAll(input: { leases: readonly { name: string; owner: string; token: number }[]; now: number; leaseUntil: number }): Promise<readonly boolean[]> {
    if (input.leases.length === 0) return [];
    const args = [num(input.now), num(input.leaseUntil)];
    for (const lease of input.leases) args.push(lease.name, lease.owner, num(lease.token));
    args.push(num(GRACE_MS));
    const reply = await new Promise<unknown>((settle) => {
      const renewal: Renewal = { args, settle };
      this.#renewal = renewal;
      queueMicrotask(() => {
        if (this.#renewal !== renewal) return;
        this.#renewal = undefined;
        settle(this.#scripts.run(LOCK_RENEW_ALL, [this.#tag], args));
      });
    });
    return (reply as number[]).map((renewed) => renewed === 1);
  }

  async release(input: { name: string; owner: string; token: number }): Promise<void> {
    await this.#scripts.run(LOCK_RELEASE, [this.#tag], [input.name, input.owner, num(input.token)]);
  }

  async list(input: { prefix: string; now: number }): Promise<readonly LockLease[]> {
    const renewal = this.#renewal;
    this.#renewal = undefined;
    let reply: unknown;
    if (renewal === undefined) reply = await this.#scripts.run(LOCK_LIST, [this.#tag], [input.prefix, num(input.now)]);
    else {
      const both = this.#scripts.run(LOCK_RENEW_LIST, [this.#tag], [input.prefix, num(input.now), ...renewal.args]) as Promise<[unknown, unknown]>;
      renewal.settle(both.then(([renewed]) => renewed));
      [, reply] = await both;
    }
    return (reply as [string, string, string, string][]).map(([name, owner, token, leaseUntil]) => ({
      name,
      owner,
      token: Number(token),
      leaseUntil: Number(leaseUntil),
    }));
  }
}
