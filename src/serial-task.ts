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

export class SerialTask {
  readonly #work: () => Promise<void>;
  readonly #again: () => boolean;
  readonly #idle: (() => void) | undefined;
  #running: Promise<void> | undefined;
  #askedAgain = false;

  constructor(work: () => Promise<void>, options: SerialTaskOptions = {}) {
    this.#work = work;
    this.#again = options.again ?? (() => true);
    this.#idle = options.idle;
  }

  /** The runs under way (with the one asked for meanwhile), if any. */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /**
   * Runs the work now or, while it runs, once more after that run. Resolves when the
   * run that serves this request has ended; rejects if a run throws.
   */
  run(): Promise<void> {
    if (this.#running !== undefined) {
      this.#askedAgain = true;
      return this.#running;
    }
    this.#running = this.#loop();
    return this.#running;
  }

  async #loop(): Promise<void> {
    try {
      do {
        this.#askedAgain = false;
        await this.#work();
      } while (this.#askedAgain && this.#again());
    } finally {
      this.#running = undefined;
      this.#idle?.();
    }
  }
}
