/**
 * `Store.flushNotifications()` for a store whose notifications travel over the
 * network (Redis pub/sub, Postgres LISTEN/NOTIFY): a marker is published on the
 * store's channel after the calls to flush have resolved and, since both servers
 * deliver a channel's messages to a subscriber in the order they were committed,
 * every notification of those calls has reached the watchers by the time the marker
 * comes back. The store says whether its subscription is in place; this class
 * waits for it, sends the marker, and recognises markers (its own and other
 * instances') so they never reach the watchers. Waits are bounded in real time,
 * unref'd: a subscription that is down loses notifications anyway.
 */
import { randomUUID } from 'node:crypto';

/** The longest a flush waits for the subscription and then for its marker. */
const FLUSH_WAIT_MS = 1_000;
/** A marker on the channel: `{"flush":"<uuid>"}`; older versions ignore it as a notification of no known type. */
const MARKER_PREFIX = '{"flush":';

export type SubscriptionState = 'connecting' | 'subscribed' | 'off';

export class NotificationFlush {
  readonly #send: (marker: string) => Promise<unknown>;
  /** How many times `send` publishes each marker (once per server that publishes notifications). */
  readonly #copies: number;
  #state: SubscriptionState = 'off';
  /** Flushes waiting for the subscription. */
  readonly #onSubscribed = new Set<() => void>();
  /** Flushes waiting for their marker, by marker ID. */
  readonly #markers = new Map<string, () => void>();
  /** A flush not sent yet: calls that ask for one in the same turn share it. */
  #next: Promise<void> | undefined;

  /**
   * `send` publishes a marker on the channel, through the connection the store's
   * writes take; `copies` times when the store's notifications leave from several
   * servers (a Redis Cluster: once from each, as each server keeps only its own
   * messages in order), and the flush waits for every copy.
   */
  constructor(send: (marker: string) => Promise<unknown>, copies = 1) {
    this.#send = send;
    this.#copies = copies;
  }

  /** The subscription: `connecting` (flushes wait for it), `subscribed`, or `off` (nobody listens: flushes resolve at once). */
  set state(state: SubscriptionState) {
    this.#state = state;
    if (state === 'connecting') return;
    for (const ready of this.#onSubscribed) ready();
    this.#onSubscribed.clear();
  }

  get state(): SubscriptionState {
    return this.#state;
  }

  /** True for a marker (and resolves its flush when it is ours): the caller drops it. */
  isMarker(message: string): boolean {
    if (!message.startsWith(MARKER_PREFIX)) return false;
    try {
      this.#markers.get(JSON.parse(message.slice(MARKER_PREFIX.length, -1)) as string)?.();
    } catch {
      // Not a well-formed marker: dropped all the same.
    }
    return true;
  }

  /** Resolves once every notification of the calls resolved before it has been delivered (bounded; never rejects). */
  flush(): Promise<void> {
    if (this.#state === 'off') return Promise.resolve();
    this.#next ??= Promise.resolve().then(() => {
      this.#next = undefined;
      return this.#flushNow();
    });
    return this.#next;
  }

  async #flushNow(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, FLUSH_WAIT_MS);
      timer.unref?.();
    });
    const id = randomUUID();
    try {
      if (this.#state === 'connecting') {
        let ready: (() => void) | undefined;
        await Promise.race([new Promise<void>((resolve) => this.#onSubscribed.add((ready = resolve))), expired]);
        if (ready !== undefined) this.#onSubscribed.delete(ready);
      }
      if (this.#state !== 'subscribed') return;
      let missing = this.#copies;
      const arrived = new Promise<void>((resolve) =>
        this.#markers.set(id, () => {
          missing -= 1;
          if (missing <= 0) resolve();
        }),
      );
      await this.#send(`${MARKER_PREFIX}${JSON.stringify(id)}}`);
      await Promise.race([arrived, expired]);
    } catch {
      // A marker that cannot be sent: the notifications it would wait for are hints all the same.
    } finally {
      this.#markers.delete(id);
      clearTimeout(timer);
    }
  }
}
