/**
 * The store contract's names that `tickwork` exported until they moved to
 * `tickwork/store`: deprecated aliases, kept for one minor version so that code
 * importing them from `tickwork` keeps compiling (with a deprecation hint) until
 * 0.2.0 removes them. Nothing new goes here.
 */
import type * as contract from './store.js';
import {
  ACTIVE_STATUSES as ACTIVE,
  LEASE_EXPIRED_ERROR as LEASE_EXPIRED,
  PENDING_TIMEOUT_ERROR as PENDING_TIMEOUT,
  indexId as storeIndexId,
} from './store.js';

/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type AddBackfillInput = contract.AddBackfillInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type AttemptOutcome = contract.AttemptOutcome;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type BackfillRange = contract.BackfillRange;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type Claim = contract.Claim;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ClaimRunInput = contract.ClaimRunInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type CreateRunInput = contract.CreateRunInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type CreateRunResult = contract.CreateRunResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ExpireInput = contract.ExpireInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ExpirePendingRunsResult = contract.ExpirePendingRunsResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FanOutSpec = contract.FanOutSpec;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FanOutState = contract.FanOutState;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FindReadyRunsInput = contract.FindReadyRunsInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FindReadyRunsResult = contract.FindReadyRunsResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FinishAttemptInput = contract.FinishAttemptInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type FinishAttemptResult = contract.FinishAttemptResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type HistoryLimits = contract.HistoryLimits;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type IndexRecord = contract.IndexRecord;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type IndexStatus = contract.IndexStatus;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type JobRecord = contract.JobRecord;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type JobSpec = contract.JobSpec;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type LeaseInput = contract.LeaseInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ListRunsQuery = contract.ListRunsQuery;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type LockLease = contract.LockLease;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type NewRun = contract.NewRun;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type RecoverExpiredRunsInput = contract.RecoverExpiredRunsInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type RenewLeaseInput = contract.RenewLeaseInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type RenewLeaseResult = contract.RenewLeaseResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type RunError = contract.RunError;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type RunRecord = contract.RunRecord;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ScheduleBackfillRunInput = contract.ScheduleBackfillRunInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ScheduleBackfillRunResult = contract.ScheduleBackfillRunResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ScheduleRunInput = contract.ScheduleRunInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ScheduleRunResult = contract.ScheduleRunResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type ScheduleSpec = contract.ScheduleSpec;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type SetSuspendedInput = contract.SetSuspendedInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type SetSuspendedResult = contract.SetSuspendedResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type StoreNotification = contract.StoreNotification;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type UpsertJobInput = contract.UpsertJobInput;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export type UpsertJobResult = contract.UpsertJobResult;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export const ACTIVE_STATUSES = ACTIVE;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export const LEASE_EXPIRED_ERROR = LEASE_EXPIRED;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export const PENDING_TIMEOUT_ERROR = PENDING_TIMEOUT;
/** @deprecated Import it from `tickwork/store`; `tickwork` stops exporting it in 0.2.0. */
export const indexId = storeIndexId;
