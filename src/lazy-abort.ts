/**
 * A run attempt's abort, whose `AbortSignal` is built only when someone asks for it.
 * Node's `AbortController` costs microseconds to create and to abort; most handlers
 * never read their signal and most attempts are never aborted, so the executor
 * tracks the abort itself and hands out a real signal on demand.
 */
import type { AbortReason, RunAbortedError } from './errors.js';

export class LazyAbort {
  #controller: AbortController | undefined;
  #error: RunAbortedError | undefined;
  #watcher: (() => void) | undefined;

  /** The handler's `ctx.signal`: already aborted if the attempt was. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#error !== undefined) this.#controller.abort(this.#error);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#error !== undefined;
  }

  get reason(): AbortReason | undefined {
    return this.#error?.reason;
  }

  /** Aborts once (later calls do nothing): the signal's listeners first, then the watcher. */
  abort(error: RunAbortedError): void {
    if (this.#error !== undefined) return;
    this.#error = error;
    this.#controller?.abort(error);
    this.#watcher?.();
  }

  /** The executor's one watcher, called on abort (at once if already aborted). */
  watch(callback: () => void): void {
    this.#watcher = callback;
    if (this.#error !== undefined) callback();
  }
}
