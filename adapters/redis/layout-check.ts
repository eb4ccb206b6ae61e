/**
 * The store's key layout check: before the store's first script, the layout version
 * and partition count recorded under `{prefix}` must be this store's. `init()` checks
 * (and moves a single-tag prefix to several partitions, `migration.ts`); a store whose
 * `init()` was not called (the CLI reads a store without starting a scheduler) checks
 * before its first call, but never migrates, so that a store of another partition
 * count fails instead of reading keys where nothing is.
 */
import { StoreError } from '../../src/errors.js';
import { asArray, asString } from './codec.js';
import type { RedisClient, ScriptRunner } from './connection.js';
import type { KeyLayout } from './key-layout.js';
import { migrateLayout } from './migration.js';
import * as lua from './scripts.js';

/**
 * The key layout versions `init()` records: 2, every key under `{prefix}` (a store of
 * one partition, and every store from before partitions); 3, each partition under
 * its own tag, with the partition count recorded. A store refuses data laid out by
 * another version, or by another partition count, and moves version 2 to 3 itself.
 */
const SINGLE_TAG_LAYOUT = '2';
const PARTITIONED_LAYOUT = '3';

export interface LayoutCheckInput {
  readonly client: RedisClient;
  readonly scripts: ScriptRunner;
  readonly keys: KeyLayout;
  readonly prefix: string;
  readonly partitions: number;
}

/** Whether a store's key layout is known to be its own, and the checks that find out. */
export class LayoutCheck {
  readonly #input: LayoutCheckInput;
  /** Whether the key layout is known to be this store's (`init()`, or `ready()` before a first call). */
  #checked = false;
  #checking: Promise<void> | undefined;

  constructor(input: LayoutCheckInput) {
    this.#input = input;
  }

  get checked(): boolean {
    return this.#checked;
  }

  /**
   * `init()`'s check: migrates a version-2 prefix opened with several partitions.
   * @throws StoreError (code `'STORE'`) when the prefix holds another layout
   *   version, or another partition count: the message names both and what to do.
   */
  async init(): Promise<void> {
    await this.#check(true);
    this.#checked = true;
  }

  /** Before the first call of a store whose `init()` was not called: the check of `init()`, never migrating. */
  ready(): Promise<void> {
    this.#checking ??= this.#check(false).then(
      () => void (this.#checked = true),
      (error: unknown) => {
        this.#checking = undefined;
        throw error;
      },
    );
    return this.#checking;
  }

  async #check(migrate: boolean): Promise<void> {
    const { partitions } = this.#input;
    let [version, stored] = await this.#layout();
    if (version === SINGLE_TAG_LAYOUT && partitions > 1 && migrate) {
      await migrateLayout({ client: this.#input.client, keys: this.#input.keys, partitions });
      [version, stored] = await this.#layout();
    }
    const expected = partitions > 1 ? PARTITIONED_LAYOUT : SINGLE_TAG_LAYOUT;
    if (version === expected && Number(stored) === partitions) return;
    const prefix = JSON.stringify(this.#input.prefix);
    if (version === PARTITIONED_LAYOUT || version === SINGLE_TAG_LAYOUT) {
      throw new StoreError(
        'init',
        new Error(
          `prefix ${prefix} holds ${stored} partition(s) and this store was given partitions: ${partitions}; ` +
            `every instance on a prefix must use the same count: pass partitions: ${stored}, or use a new prefix` +
            (version === SINGLE_TAG_LAYOUT ? ` (init() of a store of ${partitions} partitions moves it to them)` : ''),
        ),
      );
    }
    throw new StoreError('init', new Error(`prefix ${prefix} holds key layout version ${version}; this store uses ${expected}`));
  }

  /** The stored layout version and partition count (recorded on first use). */
  async #layout(): Promise<[string, string]> {
    const { scripts, keys, partitions } = this.#input;
    const [version, stored] = asArray(await scripts.run(lua.INIT, [keys.global], [String(partitions)]), 'init reply');
    return [asString(version, 'version'), asString(stored, 'partitions')];
  }
}
