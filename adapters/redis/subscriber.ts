/**
 * The pub/sub side of the Redis store's `watch()`: a dedicated connection (a
 * duplicate of the store's client) subscribed to the store's channel while anyone
 * watches, opened by the first watcher and closed when the last one leaves, and each
 * notification handed to every watcher. Notifications are hints: those published
 * while the connection is down are lost, and the scheduler's polling covers them.
 */
import type { NotificationFlush } from '../shared/notification-flush.js';
import { notifyWatchers, type Watcher } from '../shared/watchers.js';
import { decodeNotifications } from './codec.js';
import { closeClient, type RedisClient } from './connection.js';

export class NotificationSubscriber {
  readonly #client: RedisClient;
  readonly #channel: string;
  /** Told whether the connection is subscribed, and handed every message first (it drops flush markers). */
  readonly #flush: NotificationFlush;
  readonly #watchers = new Set<Watcher>();
  /** The dedicated pub/sub connection, open while someone watches. */
  #connection: RedisClient | undefined;
  readonly #closing = new Set<Promise<void>>();
  #closed = false;

  constructor(client: RedisClient, channel: string, flush: NotificationFlush) {
    this.#client = client;
    this.#channel = channel;
    this.#flush = flush;
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
    const connection = this.#client.duplicate();
    this.#connection = connection;
    this.#flush.state = 'connecting';
    // A broken subscription only loses hints; the scheduler's polling covers them.
    connection.on('error', () => {});
    connection.on('message', (channel: string, message: string) => {
      if (channel !== this.#channel || this.#flush.isMarker(message)) return;
      for (const notification of decodeNotifications(message)) notifyWatchers(this.#watchers, notification);
    });
    connection.on('close', () => {
      if (this.#connection === connection) this.#flush.state = 'connecting';
    });
    // Subscribed again on every ready connection: ioredis renews only the subscriptions that once succeeded
    // (a first one may have failed while Redis was down), and the answer says when the flush can count on it.
    const subscribe = (): void => {
      connection.subscribe(this.#channel).then(
        () => {
          if (this.#connection === connection) this.#flush.state = 'subscribed';
        },
        () => {},
      );
    };
    connection.on('ready', subscribe);
    subscribe();
  }

  #unsubscribe(): void {
    const subscriber = this.#connection;
    if (subscriber === undefined) return;
    this.#connection = undefined;
    this.#flush.state = 'off';
    const closing = closeClient(subscriber).finally(() => this.#closing.delete(closing));
    this.#closing.add(closing);
  }
}
