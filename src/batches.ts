/**
 * Slicing a list into the batches the store calls take (`UPSERT_BATCH`, `LIST_BATCH`):
 * used by the core's registrations and job reads, and lent to the first-party adapters
 * through adapter-kit.ts.
 */

/** `items` in consecutive slices of at most `size`: how upserts travel, `UPSERT_BATCH` at a time. */
export function batchesOf<T>(items: readonly T[], size: number): T[][] {
  const batches: T[][] = [];
  for (let start = 0; start < items.length; start += size) batches.push(items.slice(start, start + size));
  return batches;
}
