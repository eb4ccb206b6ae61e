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
 * - Lanes, in flight and size: see `Coalescer` (adapters/shared/coalescer.ts). A lane is one
 *   script on a single Redis, where a batch may hold calls of several partitions (their
 *   tags are the batch's KEYS), and one script and partition on a cluster, where a
 *   script may touch one slot only. A lone call is sent as the plain script; a batch holds at most
 *   `maxCalls` calls and `maxArgs` arguments, so that no batch holds the server long.
 * - Failure. An error of the batch as a whole (a dropped connection, `BUSY`, a
 *   read-only replica, ...) is one every call would have met alone, or one after
 *   which nobody knows whether it ran: every caller gets it, nothing is re-sent.
 */

import { Coalescer, type Pending } from '../shared/coalescer.js';
import type { BatchableScript } from './lua-prelude.js';

/** Runs one script (by SHA, falling back to its text) and resolves its reply. */
export type RunScript = (lua: string, keys: readonly string[], args: readonly string[]) => Promise<unknown>;

export interface ScriptBatcherOptions {
  readonly run: RunScript;
  /** Whether a batch holds one partition's calls only (a cluster). @default false */
  readonly lanePerTag?: boolean;
  /** Invocations in flight per lane. @default 2 */
  readonly maxInFlight?: number;
  /** Calls per invocation. @default 64 */
  readonly maxCalls?: number;
  /** Arguments per invocation, counting each call's own count. @default 4_096 */
  readonly maxArgs?: number;
}

/** One call: the tag of the partition it works on, and its arguments. */
export interface TaggedCall {
  readonly tag: string;
  readonly args: readonly string[];
}

/** A batch's KEYS (the distinct tags, in order of first use) and ARGV: each call's tag index in KEYS, argument count, then its arguments. */
export function batchArgs(calls: readonly TaggedCall[]): { keys: string[]; args: string[] } {
  const keys: string[] = [];
  const args: string[] = [];
  for (const call of calls) {
    let key = keys.indexOf(call.tag);
    if (key === -1) key = keys.push(call.tag) - 1;
    args.push(String(key + 1), String(call.args.length), ...call.args);
  }
  return { keys, args };
}

/** A lane: a script, on a cluster with the one tag its calls share. */
interface Lane {
  readonly script: BatchableScript;
}

export class ScriptBatcher {
  readonly #run: RunScript;
  readonly #lanePerTag: boolean;
  readonly #lanes = new Map<BatchableScript, Map<string, Lane>>();
  readonly #coalescer: Coalescer<Lane, TaggedCall>;

  constructor(options: ScriptBatcherOptions) {
    this.#run = options.run;
    this.#lanePerTag = options.lanePerTag ?? false;
    this.#coalescer = new Coalescer({
      send: (lane, batch) => this.#send(lane.script, batch),
      maxInFlight: options.maxInFlight ?? 2,
      maxCalls: options.maxCalls ?? 64,
      maxWeight: options.maxArgs ?? 4_096,
      weight: (call) => call.args.length + 2, // its arguments, their count and its tag's index
    });
  }

  /** Resolves the script's reply to `args` on partition `tag`, run alone or in a batch with other calls of the script. */
  call(script: BatchableScript, tag: string, args: readonly string[]): Promise<unknown> {
    return this.#coalescer.call(this.#lane(script, tag), { tag, args });
  }

  #lane(script: BatchableScript, tag: string): Lane {
    let lanes = this.#lanes.get(script);
    if (lanes === undefined) this.#lanes.set(script, (lanes = new Map()));
    const key = this.#lanePerTag ? tag : '';
    let lane = lanes.get(key);
    if (lane === undefined) lanes.set(key, (lane = { script }));
    return lane;
  }

  async #send(script: BatchableScript, batch: readonly Pending<TaggedCall>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.#run(script.lua, [only!.call.tag], only!.call.args).then(only!.resolve, only!.reject);
      return;
    }
    let replies: unknown;
    try {
      const { keys, args } = batchArgs(batch.map((pending) => pending.call));
      replies = await this.#run(script.batch, keys, args);
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
