/**
 * A piece of background work that runs one at a time: asked for while it runs, it
 * runs once more when that run ends (however often it was asked meanwhile), so what
 * changed during a run is never missed and requests never pile up. The planner's
 * wake, the executor's search for ready runs and the heartbeat each are one.
 */
export interface SerialTaskOptions {
  /**
   * Checked when a run ends that was asked for again meanwhile: false drops the
   * request (stopped, or a heartbeat that comes on its timer anyway). @default always
   */
  readonly again?: () => boolean;
  /** Called once the task is idle again, after its last run (also one that threw). */
  readonly idle?: () => void;
}

export class SerialTask<T = void> {
  readonly #work: () => Promise<T>;
  readonly #again: () => boolean;
  readonly #idle: (() => void) | undefined;
  #running: Promise<T> | undefined;
  #askedAgain = false;

  constructor(work: () => Promise<T>, options: SerialTaskOptions = {}) {
    this.#work = work;
    this.#again = options.again ?? (() => true);
    this.#idle = options.idle;
  }

  /** The runs under way (with the one asked for meanwhile), if any. */
  get running(): Promise<T> | undefined {
    return this.#running;
  }

  /**
   * Runs the work now or, while it runs, once more after that run. Resolves when the
   * run that serves this request has ended, with what the last run returned; rejects
   * if a run throws.
   */
  run(): Promise<T> {
    if (this.#running !== undefined) {
      this.#askedAgain = true;
      return this.#running;
    }
    this.#running = this.#loop();
    return this.#running;
  }

  async #loop(): Promise<T> {
    try {
      let result: T;
      do {
        this.#askedAgain = false;
        result = await this.#work();
      } while (this.#askedAgain && this.#again());
      return result;
    } finally {
      this.#running = undefined;
      this.#idle?.();
    }
  }
}
