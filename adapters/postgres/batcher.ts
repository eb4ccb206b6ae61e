/**
 * Coalesces concurrent calls of the store's SQL functions into one statement. With
 * `synchronous_commit = on` every statement is a WAL flush, so a store that sends one
 * statement per call is bound by commits; sending the calls that pile up while
 * earlier ones are in flight as `SELECT f($1, ..) AS r0, f($4, ..) AS r1, ...` lets
 * one commit serve them all. This module knows nothing of tickwork's functions: it
 * takes SQL fragments with `$n` placeholders, renumbers them and maps results back.
 *
 * Per call the semantics are those of a lone statement: each function runs whole,
 * in order, and (being VOLATILE) sees the writes of the calls before it in the same
 * statement. What changes is that they commit together.
 *
 * - Lanes. Calls are coalesced only with calls of the same lane (the store uses one
 *   lane per function). Mixing kinds would, for one job, take `create_run`'s share
 *   lock on the job row and then `finish_attempt`'s exclusive lock in the same
 *   transaction: a lock upgrade that deadlocks against any other transaction doing
 *   the same. Within a lane every call takes the same lock modes.
 * - Order. Within a statement the calls run in ascending `key` order (ties in
 *   arrival order). The store's key is the run ID (or `<job>.` for a call without
 *   one); run IDs begin with their job's name and a dot, so sorting by them groups
 *   each job's calls and visits jobs and runs in the same order in every lane, batch
 *   and process: locks are taken in one global order and batches do not deadlock on
 *   one another. (The order can still disagree with a lone operation's, e.g. a sweep
 *   locking several jobs in lease order, or with a job whose name is another job's
 *   name plus a dot; Postgres then aborts one side and the fallback below re-sends.)
 * - In flight and size: see `Coalescer` (adapters/shared/coalescer.ts). At most `maxCalls`
 *   calls (one output column each; Postgres allows 1,664) and `maxParams`
 *   parameters (the protocol allows 65,535) per statement.
 * - Failure. A statement the server rejects was rolled back whole, so each of its
 *   calls is re-sent alone and its caller gets that statement's result or error,
 *   exactly as without batching: one bad call cannot fail the others. A failure
 *   without a server error (a dropped connection) may have happened after the
 *   commit, so nothing is re-sent and every caller gets that error, as a lone call's
 *   caller would.
 * - Deadlocks. A statement sent alone that the server picks as a deadlock victim was
 *   rolled back, and is re-sent (at most `deadlockRetries` times) before its caller
 *   sees the error.
 */
import { Coalescer, type Pending } from '../shared/coalescer.js';

/** One call of a SQL function: the fragment `schema.fn($1::text, ...)` and its parameters. */
export interface SqlCall {
  /** The call, with placeholders `$1..$n` numbered from 1 for this call alone. */
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** A call that may be coalesced: with calls of its `lane` only, run in ascending `key` order. */
export interface BatchableCall extends SqlCall {
  readonly lane: string;
  readonly key: string;
}

/** Runs one statement and resolves its rows. */
export type SendStatement = (text: string, params: unknown[]) => Promise<readonly Record<string, unknown>[]>;

export interface BatcherOptions {
  readonly send: SendStatement;
  /** Statements in flight per lane. @default 2 */
  readonly maxInFlight?: number;
  /** Calls per statement. @default 100 */
  readonly maxCalls?: number;
  /** Bound parameters per statement. @default 10_000 */
  readonly maxParams?: number;
  /** Re-sends of a lone statement chosen as a deadlock victim. @default 2 */
  readonly deadlockRetries?: number;
}

const DEADLOCK_DETECTED = '40P01';

/** The SQLSTATE of an error the server sent (node-postgres and PGlite both set `code` and `severity`). */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string' ? code : undefined;
}

/** `sql` with its placeholders `$n` moved up by `offset`. */
export function renumber(sql: string, offset: number): string {
  return offset === 0 ? sql : sql.replace(/\$(\d+)/g, (_match, n: string) => `$${Number(n) + offset}`);
}

/** One statement calling every function in `calls`, in order, each result in column `r<i>`. */
export function batchStatement(calls: readonly SqlCall[]): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const columns = calls.map((call, i) => {
    const column = `${renumber(call.sql, params.length)} AS r${i}`;
    params.push(...call.params);
    return column;
  });
  return { text: `SELECT ${columns.join(', ')}`, params };
}

export class Batcher {
  readonly #send: SendStatement;
  readonly #deadlockRetries: number;
  readonly #coalescer: Coalescer<string, BatchableCall>;

  constructor(options: BatcherOptions) {
    this.#send = options.send;
    this.#deadlockRetries = options.deadlockRetries ?? 2;
    this.#coalescer = new Coalescer({
      send: (_lane, batch) => this.#run(batch),
      maxInFlight: options.maxInFlight ?? 2,
      maxCalls: options.maxCalls ?? 100,
      maxWeight: options.maxParams ?? 10_000,
      weight: (call) => call.params.length,
    });
  }

  /** Resolves the function's result, sent alone or together with other calls of its lane. */
  call(call: BatchableCall): Promise<unknown> {
    return this.#coalescer.call(call.lane, call);
  }

  /** Resolves the function's result, always in a statement of its own. */
  async alone(call: SqlCall): Promise<unknown> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const [row] = await this.#send(`SELECT ${call.sql} AS r0`, [...call.params]);
        return row?.r0;
      } catch (error) {
        if (sqlState(error) !== DEADLOCK_DETECTED || attempt >= this.#deadlockRetries) throw error;
      }
    }
  }

  async #run(batch: Pending<BatchableCall>[]): Promise<void> {
    if (batch.length === 1) {
      const [only] = batch;
      await this.alone(only!.call).then(only!.resolve, only!.reject);
      return;
    }
    // Key order (a stable sort keeps arrival order for ties): locks are taken in one global order.
    batch.sort((a, b) => (a.call.key < b.call.key ? -1 : a.call.key > b.call.key ? 1 : 0));
    let row: Record<string, unknown> | undefined;
    try {
      const { text, params } = batchStatement(batch.map((pending) => pending.call));
      [row] = await this.#send(text, params);
    } catch (error) {
      if (sqlState(error) === undefined) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // Rolled back whole: each call alone, so each caller gets its own outcome.
      await Promise.all(batch.map((pending) => this.alone(pending.call).then(pending.resolve, pending.reject)));
      return;
    }
    batch.forEach((pending, i) => pending.resolve(row?.[`r${i}`]));
  }
}
