/**
 * Partitions: which planner plans a job. A store has a fixed number of partitions
 * (`Store.partitions`, 1 when absent); a job belongs to `partitionOf(name, count)`, a
 * stable hash of its name, so every instance, whatever its version or platform, puts
 * a job in the same partition. Each partition has its own planner lease (a `Lock`
 * named by `partitionLockName`), so instances share the planning out.
 *
 * The hash is FNV-1a, 32 bits, over the name's UTF-8 bytes: small, fast, well spread
 * over short names that differ only in a suffix (`report-1`, `report-2`, ...), and
 * computed here once, so a store never has to re-implement it.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** The largest partition count a store may have. */
export const MAX_PARTITIONS = 1_024;

/** FNV-1a (32-bit) of `text`'s UTF-8 bytes, as an unsigned integer. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return fnv1a32Bytes(new TextEncoder().encode(text)); // not a job name of today's grammar
    hash = Math.imul(hash ^ code, FNV_PRIME);
  }
  return hash >>> 0;
}

function fnv1a32Bytes(bytes: Uint8Array): number {
  let hash = FNV_OFFSET;
  for (const byte of bytes) hash = Math.imul(hash ^ byte, FNV_PRIME);
  return hash >>> 0;
}

/** The partition of job `name` in a store of `count` partitions: 0 to `count - 1`. */
export function partitionOf(name: string, count: number): number {
  return count <= 1 ? 0 : fnv1a32(name) % count;
}

/**
 * The planner lease of partition `partition` out of `count`. One partition keeps the
 * name of the single planner lease (`planner`), so a store of one partition behaves,
 * and interoperates with older instances, as before. The count is part of the name:
 * instances configured with different counts never hold a lease of the same name
 * for different sets of jobs (each set is planned; the store's atomic `scheduleRun`
 * keeps a tick from running twice even when two planners plan it).
 */
export function partitionLockName(partition: number, count: number): string {
  return count <= 1 ? 'planner' : `planner:${partition}/${count}`;
}

/** The lease an instance holds while it takes part in planning a store of `count` partitions: `Lock.list` counts them. */
export function memberLockPrefix(count: number): string {
  return `planner-member/${count}:`;
}

/** The partition a lease name of `partitionLockName` stands for (undefined: not one of `count`). */
export function partitionOfLock(name: string, count: number): number | undefined {
  const match = /^planner:(\d+)\/(\d+)$/.exec(name);
  if (match === null || Number(match[2]) !== count) return undefined;
  const partition = Number(match[1]);
  return partition < count ? partition : undefined;
}
