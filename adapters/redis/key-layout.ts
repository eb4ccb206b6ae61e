/**
 * Where the store's keys live: one hash tag per partition, so that a Redis Cluster
 * spreads the partitions over its masters, and one store-wide tag for what is not
 * any partition's (the layout version, the identity, the locks, the notification
 * channel). See README.md, "Key layout".
 *
 * - A store of one partition keeps every key under `{prefix}`: the layout of the
 *   stores from before partitions, unchanged.
 * - A store of `P > 1` partitions keeps partition `i`'s keys under
 *   `{prefix/p<i>.<n>}`, where `n` is the smallest number that puts the tag's
 *   cluster slot in the `i`-th of `P` equal ranges of the 16,384 slots. A cluster
 *   whose masters hold equal slot ranges (what `redis-cli --cluster create` makes)
 *   therefore gets equal shares of partitions, whatever the prefix: with 12
 *   partitions and 3 masters, 4 each. Only the store-wide keys stay under `{prefix}`.
 *
 * A job's partition is `partitionOf(name, P)`; a run's is its job's, read from the
 * run ID (`<job>.<tick>`, `<job>.manual.<key>`, `<job>.backfill.<tick>`), so a claim
 * finds its run's keys without asking anyone.
 */
import { Memo, parseRunId } from '../../src/adapter-kit.js';
import { partitionOf } from '../../src/store.js';

/** Redis Cluster's slot count. */
const SLOTS = 16_384;

const CRC16_TABLE = ((): Uint16Array => {
  const table = new Uint16Array(256);
  for (let byte = 0; byte < 256; byte += 1) {
    let crc = byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[byte] = crc;
  }
  return table;
})();

/** CRC16-XMODEM of `crc` continued over `text`'s bytes (ASCII). */
function crc16(crc: number, text: string): number {
  let value = crc;
  for (let i = 0; i < text.length; i += 1) value = ((value << 8) & 0xffff) ^ (CRC16_TABLE[((value >> 8) ^ text.charCodeAt(i)) & 0xff] as number);
  return value;
}

/** The cluster slot of a hash tag's content (ASCII): CRC16-XMODEM modulo 16,384, as Redis computes it. */
export function slotOf(text: string): number {
  return crc16(0, text) % SLOTS;
}

/** The store-wide hash tag, and the only tag of a store of one partition. */
export function globalTag(prefix: string): string {
  return `{${prefix}}`;
}

/** The hash tag of partition `partition` of `count` (see the module's TSDoc). */
export function partitionTag(prefix: string, partition: number, count: number): string {
  if (count <= 1) return globalTag(prefix);
  const from = Math.floor((partition * SLOTS) / count);
  const to = Math.floor(((partition + 1) * SLOTS) / count);
  const head = `${prefix}/p${partition}.`;
  const headCrc = crc16(0, head); // the CRC runs on: each try adds only the digits of n
  for (let n = 0; ; n += 1) {
    const slot = crc16(headCrc, String(n)) % SLOTS;
    if (slot >= from && slot < to) return `{${head}${n}}`;
  }
}

/** Run IDs whose job this store has looked up: a run is claimed, renewed and finished by ID. */
const RUN_JOBS = 10_000;

/** The tags of one store: which tag a job's or a run's keys live under. */
export class KeyLayout {
  /** `{prefix}`: the layout version, identity, locks and the notification channel. */
  readonly global: string;
  /** Each partition's tag, by partition. */
  readonly tags: readonly string[];
  readonly #count: number;
  readonly #runTags: Memo<string, string>;

  constructor(prefix: string, count: number) {
    this.global = globalTag(prefix);
    this.#count = count;
    this.tags = Array.from({ length: count }, (_, partition) => partitionTag(prefix, partition, count));
    this.#runTags = new Memo(RUN_JOBS, (id) => this.ofJob(jobOfRun(id)));
  }

  /** Whether every key shares the store-wide tag (one partition). */
  get single(): boolean {
    return this.#count <= 1;
  }

  ofJob(name: string): string {
    return this.tags[partitionOf(name, this.#count)] as string;
  }

  /** The tag of run `id`'s keys: its job's. */
  ofRun(id: string): string {
    return this.#count <= 1 ? this.global : this.#runTags.get(id);
  }
}

/**
 * The job a run ID names (`run-id.ts`). An ID the core did not make is taken to name
 * the job before its first dot (\`<job>.<anything>\`, with a job name without dots),
 * or else a job of its own name. A store refuses to create a run whose ID names
 * another partition than its job's: the run could not be found by its ID.
 */
export function jobOfRun(id: string): string {
  const parsed = parseRunId(id);
  if (parsed !== undefined) return parsed.jobName;
  const dot = id.indexOf('.');
  return dot > 0 ? id.slice(0, dot) : id;
}
