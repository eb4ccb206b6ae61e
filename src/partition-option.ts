/**
 * The `partitions` option every first-party store takes (lent to the adapters through
 * `adapter-kit.ts`): its schema and the default of the shared stores.
 */
import * as z from 'zod/mini';
import { MAX_PARTITIONS } from './partition.js';
import { integerSchema } from './validation.js';

/**
 * How many partitions the Redis and Postgres stores split their jobs into unless told
 * otherwise (the memory store, one process, keeps 1). Measured with the every-10s
 * scenario (bench/RESULTS.md); divisible by 2, 3, 4 and 6, so 2, 3, 4 or 6
 * instances (or Redis Cluster masters) get equal shares.
 */
export const DEFAULT_PARTITIONS = 12;

/** A partition count: the integer rule and messages every count of the API shares (`integerSchema`). */
export const partitionsSchema = z.optional(integerSchema(1, MAX_PARTITIONS));
