/**
 * The pub/sub side of the Redis store's `watch()`: a dedicated connection (a
 * duplicate of the store's client) subscribed to the store's channel while anyone
 * watches, opened by the first watcher and closed when the last one leaves, and each
 * notification handed to every watcher. Notifications are hints: those published
 * while the connection is down are lost, and the scheduler's polling covers them.
 * On a single Redis the connection also tracks the store's identity key for the
 * `IdentityCache` (`identity-cache.ts`), set up again on every connection.
 */
import type { NotificationFlush } from '../shared/notification-flush.js';
import { notifyWatchers, type Watcher } from '../shared/watchers.js';
import { decodeNotifications } from './codec.js';
import type { Redis } from 'ioredis';
import { closeClient, type RedisClient } from './connection.js';
import { INVALIDATE_CHANNEL, type IdentityCache } from './identity-cache.js';

export class NotificationSubscriber {
  readonly #client: RedisClient;
  readonly #channel: string;
  /** Told whether the connection is subscribed, and handed every message first (it drops flush markers). */
  readonly #flush: NotificationFlush;
  /** The identity the connection tracks; undefined on a cluster (its key may live on another node than the connection). */
  readonly #identity: IdentityCache | undefined;
  readonly #watchers = new Set<Watcher>();
  /** The dedicated pub/sub connection, open while someone watches. */
  #connection: RedisClient | undefined;
  readonly #closing = new Set<Promise<void>>();
  #closed = false;

  constructor(client: RedisClient, channel: string, flush: NotificationFlush, identity: IdentityCache) {
    this.#client = client;
    this.#channel = channel;
    this.#flush = flush;
    this.#identity = client.isCluster ? undefined : identity;
  }

  /** Adds a watcher, subscribing from the first; returns the unsubscribe function, which closes the connection after the last. */
  watch(watcher: Watcher): () => void {
    this.#watchers.add(watcher);
    this.#subscribe();
    let watching = true;
    return () => {
      if (!watching) return;
      watching = false;
      this.#watchers.delete(watcher);
      if (this.#watchers.size === 0) this.#unsubscribe();
    };
  }

  /** Forgets every watcher and closes the connection (the store is closing). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#watchers.clear();
    this.#unsubscribe();
    await Promise.all(this.#closing);
  }

  #subscribe(): void {
    if (this.#connection !== undefined || this.#closed) return;
    const identity = this.#identity;
    // Tracking is set up before subscribing, which ioredis's own resubscription would do first: it is off with tracking.
    const connection = identity === undefined ? this.#client.duplicate() : (this.#client as Redis).duplicate({ autoResubscribe: false });
    this.#connection = connection;
    this.#flush.state = 'connecting';
    // Each connection (a reconnection is a new one) is set up once; `epoch` counts them.
    let epoch = 0;
    let setUp = -1;
    // A broken subscription only loses hints; the scheduler's polling covers them.
    connection.on('error', () => {});
    connection.on('message', (channel: string, message: string) => {
      if (channel === INVALIDATE_CHANNEL) return identity?.invalidate();
      if (channel !== this.#channel || this.#flush.isMarker(message)) return;
      for (const notification of decodeNotifications(message)) notifyWatchers(this.#watchers, notification);
    });
    connection.on('close', () => {
      epoch += 1;
      if (this.#connection !== connection) return;
      this.#flush.state = 'connecting';
      if (identity !== undefined) identity.tracking = false;
    });
    // Subscribed again on every ready connection: ioredis renews only the subscriptions that once succeeded
    // (a first one may have failed while Redis was down), and the answer says when the flush can count on it.
    const subscribe = (): void => {
      if (identity !== undefined && setUp === epoch) return;
      setUp = epoch;
      const current = epoch;
      this.#setUp(connection, identity).then(
        (tracking) => {
          if (this.#connection !== connection) return;
          this.#flush.state = 'subscribed';
          if (identity !== undefined && tracking && current === epoch) identity.tracking = true;
        },
        () => {},
      );
    };
    connection.on('ready', subscribe);
    subscribe();
  }

  /** Subscribes, after asking the server to track the identity key when there is one; resolves whether it does. */
  async #setUp(connection: RedisClient, identity: IdentityCache | undefined): Promise<boolean> {
    let tracking = false;
    if (identity !== undefined) {
      try {
        const id = String(await connection.call('CLIENT', 'ID'));
        await connection.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', id, 'BCAST', 'PREFIX', identity.key);
        tracking = true;
      } catch {
        // No tracking (before Redis 6, CLIENT refused): the identity is read every time.
      }
    }
    await (tracking ? connection.subscribe(this.#channel, INVALIDATE_CHANNEL) : connection.subscribe(this.#channel));
    return tracking;
  }

  #unsubscribe(): void {
    const subscriber = this.#connection;
    if (subscriber === undefined) return;
    this.#connection = undefined;
    this.#flush.state = 'off';
    if (this.#identity !== undefined) this.#identity.tracking = false;
    const closing = closeClient(subscriber).finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }
}
