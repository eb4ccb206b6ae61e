/**
 * The LISTEN side of `watch()`: one session that LISTENs on the schema's channel
 * while anyone watches, and hands each notification to every watcher. A node-postgres pool lends us a dedicated
 * connection, which is re-established with a capped backoff after any connection
 * error (a server restart, `pg_terminate_backend`); PGlite's own `listen()` is
 * used when present. Any other client gets no notifications, and the scheduler
 * falls back to polling. Nothing here may throw into the process: every client we
 * hold has an `error` handler.
 */
import type { StoreNotification } from '../../src/store.js';
import type { NotificationFlush } from '../shared/notification-flush.js';
import { notifyWatchers, type Watcher } from '../shared/watchers.js';
import type { PgClientLike, Queryable } from './database.js';
import { quoteIdent } from './sql.js';

const FIRST_RETRY_MS = 100;
/** At most this long between attempts to LISTEN again, so notifications resume within a second of the server. */
const MAX_RETRY_MS = 1_000;

interface PgliteLike extends Queryable {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

interface PoolLike extends Queryable {
  connect(): Promise<PgClientLike>;
}

function isPglite(client: Queryable): client is PgliteLike {
  return typeof (client as Partial<PgliteLike>).listen === 'function';
}

/** A node-postgres Pool (not a bare Client, whose `connect()` opens itself). */
function isPool(client: Queryable): client is PoolLike {
  const pool = client as Partial<PoolLike> & { totalCount?: unknown };
  return typeof pool.connect === 'function' && typeof pool.totalCount === 'number';
}

export class NotificationListener {
  readonly #pool: () => Promise<Queryable>;
  readonly #channel: string;
  readonly #watchers = new Set<Watcher>();
  /** Told whether the session LISTENs, and handed every payload first (it drops flush markers). */
  readonly #flush: NotificationFlush;
  #running = false;
  #client: PgClientLike | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #retryMs = FIRST_RETRY_MS;
  /** Bumped on every (re)connection and on stop, so late callbacks of an old session do nothing. */
  #generation = 0;

  constructor(pool: () => Promise<Queryable>, channel: string, flush: NotificationFlush) {
    this.#pool = pool;
    this.#channel = channel;
    this.#flush = flush;
  }

  /** Adds a watcher, LISTENing from the first; returns the unsubscribe function, which stops LISTENing after the last. */
  watch(watcher: Watcher): () => void {
    this.#watchers.add(watcher);
    this.#start();
    return () => {
      this.#watchers.delete(watcher);
      if (this.#watchers.size === 0) void this.stop();
    };
  }

  /** Forgets every watcher and stops LISTENing (the store is closing). */
  close(): Promise<void> {
    this.#watchers.clear();
    return this.stop();
  }

  #start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#flush.state = 'connecting';
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#flush.state = 'off';
    this.#generation += 1;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const client = this.#client;
    const unlisten = this.#unlisten;
    this.#client = undefined;
    this.#unlisten = undefined;
    // Destroy rather than return the connection, so no pooled session stays subscribed.
    if (client !== undefined) release(client);
    if (unlisten !== undefined) await unlisten().catch(() => {});
  }

  async #connect(): Promise<void> {
    const generation = ++this.#generation;
    let client: PgClientLike | undefined;
    try {
      const pool = await this.#pool();
      if (generation !== this.#generation) return;
      if (isPglite(pool)) {
        const unlisten = await pool.listen(this.#channel, (payload) => this.#receive(payload));
        if (generation !== this.#generation) await unlisten();
        else {
          this.#unlisten = unlisten;
          this.#flush.state = 'subscribed';
        }
        return;
      }
      if (!isPool(pool)) {
        this.#flush.state = 'off'; // nothing will ever arrive: nothing to wait for
        return;
      }
      const held = (client = await pool.connect());
      const lost = (error?: Error): void => this.#lost(generation, held, error);
      held.on('error', lost);
      held.on('end', lost);
      if (generation !== this.#generation) {
        held.release(true);
        return;
      }
      this.#client = held;
      held.on('notification', (message: { channel: string; payload?: string }) => {
        if (message.channel === this.#channel && message.payload !== undefined) this.#receive(message.payload);
      });
      await held.query(`LISTEN ${quoteIdent(this.#channel)}`);
      this.#retryMs = FIRST_RETRY_MS;
      if (generation === this.#generation) this.#flush.state = 'subscribed';
    } catch {
      if (client !== undefined && this.#client === client) {
        this.#client = undefined;
        release(client);
      }
      this.#scheduleRetry(generation);
    }
  }

  #receive(payload: string): void {
    if (this.#flush.isMarker(payload)) return;
    let notification: StoreNotification;
    try {
      notification = JSON.parse(payload) as StoreNotification;
    } catch {
      return; // Not ours: someone else NOTIFYing on the channel.
    }
    notifyWatchers(this.#watchers, notification);
  }

  #lost(generation: number, client: PgClientLike, error?: Error): void {
    if (generation !== this.#generation) return;
    this.#generation += 1;
    this.#flush.state = 'connecting';
    if (this.#client === client) this.#client = undefined;
    release(client, error);
    this.#scheduleRetry(this.#generation);
  }

  #scheduleRetry(generation: number): void {
    if (!this.#running || generation !== this.#generation) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    // Reconnection pacing is about the connection, not about scheduling time, so
    // it uses a real timer; unref'd so it never keeps the process alive.
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (this.#running) void this.#connect();
    }, delay);
    this.#retryTimer.unref?.();
  }
}

/** Gives a connection back destroyed (it may be broken or still subscribed); tolerates a double release. */
function release(client: PgClientLike, error?: Error): void {
  try {
    client.release(error ?? true);
  } catch {
    // Already released: nothing more to give back.
  }
}
