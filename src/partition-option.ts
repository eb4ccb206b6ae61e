/**
 * The `partitions` option every first-party store takes (lent to the adapters through
 * `adapter-kit.ts`): its schema and the default of the shared stores.
 */
import * as z from 'zod/mini';
import { MAX_PARTITIONS } from './partition.js';

/**
 * How many partitions the Redis and Postgres stores split their jobs into unless told
 * otherwise (the memory store, one process, keeps 1). Measured with the every-10s
 * scenario (bench/RESULTS.md); divisible by 2, 3, 4 and 6, so 2, 3, 4 or 6
 * instances (or Redis Cluster masters) get equal shares.
 */
export const DEFAULT_PARTITIONS = 12;

export const partitionsSchema = z.optional(
  z.number({ error: 'must be a number' }).check(
    z.int({ error: 'must be a whole number' }),
    z.minimum(1, { error: 'must be at least 1' }),
    z.maximum(MAX_PARTITIONS, { error: `must be at most ${MAX_PARTITIONS}` }),
  ),
);
