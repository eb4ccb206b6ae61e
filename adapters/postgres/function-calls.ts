/**
 * How the Postgres store's calls of its SQL functions go out: alone, in a statement of
 * their own, or through the `Batcher`, coalesced with concurrent calls of the same
 * function (one lane per function, a traced call only with traced ones), and wrapped
 * in `with_traceparent` for a run created with a `traceparent`.
 */
import type { NewRun } from '../../src/store.js';
import type { Batcher } from './batcher.js';

const TRACED = 'with_traceparent(';

export class FunctionCalls {
  readonly #batcher: Batcher;
  /** The quoted schema the functions live in. */
  readonly #schema: string;

  constructor(batcher: Batcher, schema: string) {
    this.#batcher = batcher;
    this.#schema = schema;
  }

  /**
   * A function call in a statement of its own: upserts (already one statement per
   * `UPSERT_BATCH`), the sweeps (which serialize on an advisory lock anyway) and the
   * rare job edits (`remove_job`, `set_suspended`, `add_backfill`).
   */
  alone(fn: string, params: unknown[]): Promise<unknown> {
    return this.#batcher.alone({ sql: `${this.#schema}.${fn}`, params });
  }

  /**
   * A function call that may share a statement with concurrent calls of the same
   * function, ordered by `key`: the run's ID, or `<job>.` for `schedule_run` (which
   * locks the job first; run IDs start with the job's name and a dot, so this keeps
   * each job's calls together: see `batcher.ts` on lock order).
   */
  batched(key: string, fn: string, params: unknown[]): Promise<unknown> {
    // A traced call shares statements only with traced calls of the same function.
    const traced = fn.startsWith(TRACED);
    const inner = traced ? fn.slice(TRACED.length + this.#schema.length + 1) : fn;
    const lane = `${inner.slice(0, inner.indexOf('('))}${traced ? '+traced' : ''}`;
    return this.#batcher.call({ lane, key, sql: `${this.#schema}.${fn}`, params });
  }

  /**
   * `call` (a function creating a run) as is for a run without a `traceparent`, else
   * wrapped in `with_traceparent`, whose last parameter (`$param`) is the run's
   * `traceparent` (`traceParam`): one statement, so the run has it from its commit on.
   */
  traced(run: NewRun | undefined, call: string, param: number): string {
    return run?.traceparent === undefined ? call : `${TRACED}${this.#schema}.${call}, $${param}::text)`;
  }
}
