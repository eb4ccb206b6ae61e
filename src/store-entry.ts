/**
 * `tickwork/store`: the storage contract for adapter authors.
 *
 * - `Store`, split by capability: `StoreLifecycle` (`init`, `close`, optional
 *   `identity`), `JobStore` (jobs and cursors), `RunQueue` (the run queue and its
 *   leases), and the optional `StoreNotifications` (`watch`, `flushNotifications`) and
 *   `LockProvider` (`lock()`, `partitions`, and `Lock` itself; `partitionOf` says which partition a job is in);
 * - the records they keep and hand back (jobs, runs, index records, leases), the inputs
 *   and results of each method, and the constants the contract names;
 * - the shared rules (`store-rules.ts`: ordering, `pendingUntilFor`, `expiresAtFor`,
 *   `pruneHistory`, `isClaimable`, ...), to call rather than re-derive.
 *
 * Prove a store with `storeConformance`, or per capability with `describeJobStore`,
 * `describeRunQueue`, `describeNotifications` and `describeLock`, from
 * `tickwork/testing`. An application needs none of this: it imports `tickwork` (which
 * still exports `Store` and `Lock`, for typing an option).
 */
export type * from './store.js';
export { ACTIVE_STATUSES, LEASE_EXPIRED_ERROR, LIST_BATCH, LIST_JOBS_PAGE, MAX_PARTITIONS, PENDING_TIMEOUT_ERROR, UPSERT_BATCH, fnv1a32, indexId, partitionOf } from './store.js';
export * from './store-rules.js';
