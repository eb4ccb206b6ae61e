/**
 * The planner's record of this instance's own job writes, so that it plans the
 * records those writes return instead of reading each job back when the write's
 * `job-changed` notification arrives (registering 100,000 jobs cost 100,000
 * `getJob` calls).
 *
 * A write is announced before it is sent (`expect`), since its notification can
 * arrive before its result: that many `job-changed` notifications of each job are
 * its echoes and skip the reload, and one more is another writer's and reloads the
 * job. An echo that never comes (notifications are hints) lapses after
 * `ECHO_WINDOW_MS`, and a full load forgets every echo. A write's records are
 * adopted only while no read of the job began after the write was announced: a
 * reload or full load that began since may have seen a later write.
 */

/** How long an expected echo skips a job's reload. */
export const ECHO_WINDOW_MS = 10_000;

/** What `expect` hands back, for `adopt`'s check. */
export interface WriteToken {
  readonly names: readonly string[];
  readonly loads: number;
  readonly reads: ReadonlyMap<string, number>;
}

export class OwnWrites {
  readonly #echoes = new Map<string, { count: number; until: number }>();
  /** Per job, reloads begun; and full loads begun. */
  readonly #reads = new Map<string, number>();
  #loads = 0;

  /** Announces a write of `names` (before sending it). */
  expect(names: readonly string[], now: number): WriteToken {
    const reads = new Map<string, number>();
    for (const name of names) {
      const echo = this.#echoes.get(name);
      if (echo === undefined || echo.until < now) this.#echoes.set(name, { count: 1, until: now + ECHO_WINDOW_MS });
      else {
        echo.count += 1;
        echo.until = now + ECHO_WINDOW_MS;
      }
      reads.set(name, this.#reads.get(name) ?? 0);
    }
    return { names, loads: this.#loads, reads };
  }

  /** A write that failed: it sends no echoes (one that did commit lapses). */
  failed(token: WriteToken): void {
    for (const name of token.names) {
      const echo = this.#echoes.get(name);
      if (echo !== undefined && --echo.count <= 0) this.#echoes.delete(name);
    }
  }

  /** True, once per expected echo, when a `job-changed` of `name` is this instance's own write. */
  isEcho(name: string, now: number): boolean {
    const echo = this.#echoes.get(name);
    if (echo === undefined) return false;
    if (echo.until < now) {
      this.#echoes.delete(name);
      return false;
    }
    if (--echo.count <= 0) this.#echoes.delete(name);
    return true;
  }

  /** True when no read of `name` began since the write of `token` was announced. */
  isCurrent(token: WriteToken, name: string): boolean {
    return token.loads === this.#loads && token.reads.get(name) === (this.#reads.get(name) ?? 0);
  }

  /** A reload of one job begins. */
  reading(name: string): void {
    this.#reads.set(name, (this.#reads.get(name) ?? 0) + 1);
  }

  /** A full load begins: it reads every write so far, echoes included. */
  loadingAll(): void {
    this.#loads += 1;
    this.#echoes.clear();
    this.#reads.clear();
  }
}
