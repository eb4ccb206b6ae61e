/**
 * Coalesces concurrent calls of one store script into one script invocation. Redis
 * runs scripts one at a time, so the cost of a hot script is mostly per invocation
 * (the round trip, the command's parsing and dispatch on both ends, the prelude)
 * rather than its body; sending the calls that pile up while earlier ones are in
 * flight as one EVALSHA of the script's batch variant (`batchScript` in
 * `lua-prelude.ts`) pays that once for all of them. This module knows nothing of
 * tickwork's scripts: it takes a script's lone and batch Lua, and argument lists.
 *
 * Per call the semantics are those of a lone invocation: the batch variant runs the
 * body once per call, in arrival order, each under `pcall`, so a call sees the
 * writes of the calls before it and an error ends only its own call. What changes
 * is that the calls of a batch run back to back, atomically as a whole (stronger
 * than each alone).
 *
 * - Lanes. Calls are coalesced only with calls of the same script.
 * - In flight. At most `maxInFlight` invocations per lane. A call that finds a free
 *   slot goes out in the same tick (with whatever else arrived in that tick), so a
 *   lone call waits for nothing and is sent as the plain script; calls that find
 *   the lane busy queue and go out together when an invocation returns.
 * - Size. At most `maxCalls` calls and `maxArgs` arguments per invocation, so that
 *   no batch holds the server for long.
 * - Failure. An error of the batch as a whole (a dropped connection, `BUSY`, a
 *   read-only replica, ...) is one every call would have met alone, or one after
 *   which nobody knows whether it ran: every caller gets it, nothing is re-sent.
 */

import type { BatchableScript } from './lua-prelude.js';

/** Runs one script (by SHA, falling back to its text) with KEYS fixed by the caller, and resolves its reply. */
export type RunScript = (lua: string, args: readonly string[]) => Promise<unknown>;

export interface ScriptBatcherOptions {
  readonly run: RunScript;
  /** Invocations in flight per lane. @default 2 */
  readonly maxInFlight?: number;
  /** Calls per invocation. @default 64 */
  readonly maxCalls?: number;
  /** Arguments per invocation, counting each call's own count. @default 4_096 */
  readonly maxArgs?: number;
}

interface Pending {
  readonly args: readonly string[];
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

interface Lane {
  readonly script: BatchableScript;
  readonly queue: Pending[];
  inFlight: number;
  /** A flush is queued as a microtask (so calls made in the same tick travel together). */
  scheduled: boolean;
}

/** The batch variant's ARGV: each call's argument count, then its arguments. */
export function batchArgs(calls: readonly (readonly string[])[]): string[] {
  const args: string[] = [];
  for (const call of calls) args.push(String(call.length), ...call);
  return args;
}

export class ScriptBatcher {
  readonly #run: RunScript;
  readonly #maxInFlight: number;
  readonly #maxCalls: number;
  readonly #maxArgs: number;
  readonly #lanes = new Map<BatchableScript, Lane>();

  constructor(options: ScriptBatcherOptions) {
    this.#run = options.run;
    this.#maxInFlight = options.maxInFlight ?? 2;
    this.#maxCalls = options.maxCalls ?? 64;
    this.#maxArgs = options.maxArgs ?? 4_096;
  }

  /** Resolves the script's reply to `args`, run alone or in a batch with other calls of the script. */
  call(script: BatchableScript, args: readonly string[]): Promise<unknown> {
    let lane = this.#lanes.get(script);
    if (lane === undefined) {
      lane = { script, queue: [], inFlight: 0, scheduled: false };
      this.#lanes.set(script, lane);
    }
    const promise = new Promise<unknown>((resolve, reject) => lane.queue.push({ args, resolve, reject }));
    if (lane.inFlight < this.#maxInFlight && !lane.scheduled) {
      lane.scheduled = true;
      queueMicrotask(() => {
        lane.scheduled = false;
        this.#pump(lane);
      });
    }
    return promise;
  }

  /** Sends queued calls while the lane has free slots. */
  #pump(lane: Lane): void {
    while (lane.inFlight < this.#maxInFlight && lane.queue.length > 0) {
      const batch = this.#take(lane.queue);
      lane.inFlight += 1;
      void this.#send(lane.script, batch).finally(() => {
        lane.inFlight -= 1;
        this.#pump(lane);
      });
    }
  }

  /** The oldest queued calls that fit one invocation, in arrival order. */
  #take(queue: Pending[]): Pending[] {
    let count = 0;
    let args = 0;
    while (count < queue.length && count < this.#maxCalls) {
      const next = queue[count]!.args.length + 1;
      if (count > 0 && args + next > this.#maxArgs) break;
      args += next;
      count += 1;
    }
    return queue.splice(0, count);
  }

  async #send(script: BatchableScript, batch: readonly Pending[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.#run(script.lua, only!.args).then(only!.resolve, only!.reject);
      return;
    }
    let replies: unknown;
    try {
      replies = await this.#run(script.batch, batchArgs(batch.map((pending) => pending.args)));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
      return;
    }
    if (!Array.isArray(replies) || replies.length !== batch.length) {
      const error = new Error(`tickwork redis store: a batch of ${batch.length} calls got a malformed reply`);
      for (const pending of batch) pending.reject(error);
      return;
    }
    const results: readonly unknown[] = replies;
    batch.forEach((pending, i) => {
      const reply = results[i];
      // A call's error arrives as an error element of the reply (ioredis gives it as an Error).
      if (reply instanceof Error) pending.reject(reply);
      else pending.resolve(reply);
    });
  }
}
