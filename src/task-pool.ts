/**
 * p-queue as the executor's handler slots and the planner's pool of due jobs. Both
 * add a task only while a place is free, so the queue itself holds a task for no
 * longer than `add()` takes to start it: a plain first-in first-out list stands in
 * for p-queue's priority queue (which copies the options twice and builds an entry
 * per task), and every task shares one options object with an `id`, so p-queue does
 * not number each task (a BigInt made into a string). What p-queue still does per
 * task is the work: count it against the concurrency, start it, and tell `'next'`
 * and `onIdle()` when it ends.
 */
import PQueue, { type Queue, type QueueAddOptions } from 'p-queue';

type RunFunction = () => Promise<unknown>;

/** First in, first out, on an array that is reused rather than shifted (a shift gives up a slot that the next push allocates again). */
class Fifo implements Queue<RunFunction, QueueAddOptions> {
  readonly #tasks: (RunFunction | undefined)[] = [];
  #head = 0;
  #tail = 0;

  get size(): number {
    return this.#tail - this.#head;
  }

  enqueue(run: RunFunction): void {
    this.#tasks[this.#tail++] = run;
  }

  dequeue(): RunFunction | undefined {
    if (this.#head === this.#tail) return undefined;
    const run = this.#tasks[this.#head];
    this.#tasks[this.#head++] = undefined;
    if (this.#head === this.#tail) this.#head = this.#tail = 0;
    return run;
  }

  /** No priorities here: every waiting task. */
  filter(): RunFunction[] {
    return this.#tasks.slice(this.#head, this.#tail) as RunFunction[];
  }

  setPriority(): void {}
}

const TASK: Partial<QueueAddOptions> = Object.freeze({ id: '' });

export class TaskPool extends PQueue<Fifo, QueueAddOptions> {
  constructor(concurrency: number) {
    super({ concurrency, queueClass: Fifo });
  }

  /** Starts `task` once a place is free (at once, as both callers add only then); `task` reports its own faults and never rejects. */
  run(task: () => Promise<void>): void {
    void this.add(task, TASK);
  }
}
