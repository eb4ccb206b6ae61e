/**
 * The Redis store's identity, answered from memory while the server vouches for it,
 * and its changes pushed to the scheduler (`Store.watchIdentity`). A running
 * scheduler asks for the identity on each heartbeat and, unless the store pushes its
 * changes, every 2 s between them (so a store that lost its data is noticed within
 * seconds). The store's pub/sub connection asks the server to track the identity key
 * (Redis 6 client tracking, broadcast mode, on that key alone) and listens for
 * invalidations: the server sends one when the key is written, deleted, evicted, or
 * the database is flushed. Until one arrives, the identity last read is still the
 * store's, and is answered without a round trip; when one arrives, the watchers are
 * told to check it at once, so an idle scheduler need not wake every 2 s.
 *
 * The cache holds only while the tracking connection stays up: it is dropped when
 * that connection closes (a restarted Redis, a failover), and the watchers are told
 * to check and to poll again; a value read while tracking was off, or while an
 * invalidation came in, is not kept. A server without tracking (before Redis 6,
 * `CLIENT` refused by an ACL) or a cluster is read every time, and polled, as before.
 * Every `MAX_ANSWERS + 1`th answer is read anyway, in case the pub/sub connection died
 * without closing (no clock here: stores are handed time).
 */

/** The channel a tracking connection in RESP2 receives its invalidations on. */
export const INVALIDATE_CHANNEL = '__redis__:invalidate';

/**
 * Answers from memory before the identity is read again regardless: while the changes
 * are pushed the scheduler asks on its heartbeats alone, so every third heartbeat
 * (`leaseMs`) reads it.
 */
const MAX_ANSWERS = 2;

export class IdentityCache {
  /** The tracked key, as the server names it (the client's `keyPrefix` included). */
  readonly key: string;
  #value: string | undefined;
  #answers = 0;
  /** Moves on at every invalidation: a read that overlapped one is not kept. */
  #generation = 0;
  #tracking = false;
  /** Told at every invalidation whether the changes are pushed (`Store.watchIdentity`). */
  readonly #watchers = new Set<(pushed: boolean) => void>();

  constructor(key: string) {
    this.key = key;
  }

  /** Whether the server tracks the key for us (tracking on, invalidations subscribed, on the connection up now). */
  set tracking(on: boolean) {
    this.#tracking = on;
    this.invalidate();
  }

  /** Forgets the value (an invalidation came, or tracking went on or off), and tells the watchers to check. */
  invalidate(): void {
    this.#generation += 1;
    this.#value = undefined;
    for (const watcher of this.#watchers) watcher(this.#tracking);
  }

  /** Calls `watcher` at every invalidation, and at once while tracking is on already; returns the function that stops it. */
  watch(watcher: (pushed: boolean) => void): () => void {
    this.#watchers.add(watcher);
    if (this.#tracking) watcher(true);
    return () => void this.#watchers.delete(watcher);
  }

  /** The identity: from memory while tracked, else `read()` (kept when tracking held throughout the read). */
  async get(read: () => Promise<string>): Promise<string> {
    if (this.#value !== undefined && this.#answers < MAX_ANSWERS) {
      this.#answers += 1;
      return this.#value;
    }
    const generation = this.#generation;
    const tracked = this.#tracking;
    const value = await read();
    if (tracked && this.#tracking && generation === this.#generation) {
      this.#value = value;
      this.#answers = 0;
    }
    return value;
  }
}
