/**
 * `tickwork/store`: the storage contract for adapter authors: `Store` and `Lock`, the
 * records they keep and hand back (jobs, runs, index records, leases), the inputs and
 * results of each method, and the constants the contract names. Prove a store with
 * `storeConformance` from `tickwork/testing`. An application needs none of this: it
 * imports `tickwork` (which still exports `Store` and `Lock`, for typing an option).
 */
export type * from './store.js';
export { ACTIVE_STATUSES, LEASE_EXPIRED_ERROR, LIST_BATCH, PENDING_TIMEOUT_ERROR, UPSERT_BATCH, indexId } from './store.js';
