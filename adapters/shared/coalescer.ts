/**
 * Coalesces concurrent calls into batches, for the networked stores (the Postgres
 * `Batcher`, the Redis `ScriptBatcher`): what they send differs, how calls pile up
 * and leave does not.
 *
 * - Lanes. Calls are batched only with calls of the same lane.
 * - In flight. At most `maxInFlight` batches per lane. A call that finds a free slot
 *   goes out in the same tick (with whatever else arrived in that tick, one microtask
 *   later), so a lone call waits for nothing; calls that find the lane busy queue
 *   and go out together when a batch returns.
 * - Size. At most `maxCalls` calls and `maxWeight` weight (parameters, arguments)
 *   per batch, oldest calls first; a single call heavier than that goes alone.
 */

/** A call waiting in its lane, with the settlers of its caller's promise. */
export interface Pending<Call> {
  readonly call: Call;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

export interface CoalescerOptions<Lane, Call> {
  /** Sends one batch and settles each of its calls; it must not reject. */
  readonly send: (lane: Lane, batch: Pending<Call>[]) => Promise<void>;
  readonly maxInFlight: number;
  readonly maxCalls: number;
  readonly maxWeight: number;
  readonly weight: (call: Call) => number;
}

interface Queue<Call> {
  readonly pending: Pending<Call>[];
  inFlight: number;
  /** A flush is queued as a microtask (so calls made in the same tick travel together). */
  scheduled: boolean;
}

export class Coalescer<Lane, Call> {
  readonly #options: CoalescerOptions<Lane, Call>;
  readonly #queues = new Map<Lane, Queue<Call>>();

  constructor(options: CoalescerOptions<Lane, Call>) {
    this.#options = options;
  }

  /** Resolves or rejects as `send` settles the call, sent alone or in a batch of its lane. */
  call(lane: Lane, call: Call): Promise<unknown> {
    let queue = this.#queues.get(lane);
    if (queue === undefined) {
      queue = { pending: [], inFlight: 0, scheduled: false };
      this.#queues.set(lane, queue);
    }
    const promise = new Promise<unknown>((resolve, reject) => queue.pending.push({ call, resolve, reject }));
    if (queue.inFlight < this.#options.maxInFlight && !queue.scheduled) {
      queue.scheduled = true;
      queueMicrotask(() => {
        queue.scheduled = false;
        this.#pump(lane, queue);
      });
    }
    return promise;
  }

  /** Sends queued calls while the lane has free slots. */
  #pump(lane: Lane, queue: Queue<Call>): void {
    while (queue.inFlight < this.#options.maxInFlight && queue.pending.length > 0) {
      const batch = this.#take(queue.pending);
      queue.inFlight += 1;
      void this.#options.send(lane, batch).finally(() => {
        queue.inFlight -= 1;
        this.#pump(lane, queue);
      });
    }
  }

  /** The oldest queued calls that fit one batch, in arrival order. */
  #take(pending: Pending<Call>[]): Pending<Call>[] {
    const { maxCalls, maxWeight, weight } = this.#options;
    let count = 0;
    let total = 0;
    while (count < pending.length && count < maxCalls) {
      const next = weight(pending[count]!.call);
      if (count > 0 && total + next > maxWeight) break;
      total += next;
      count += 1;
    }
    return pending.splice(0, count);
  }
}
