/**
 * The memory store's one micro-optimisation of record building, kept only where every
 * run goes through it (memory-run-queue.ts): a claim (`claimRun`), a run's ending with
 * its job's counters (`endRun`), a retry or release, and every write of a run
 * (`#writeRun`). There a write copies the record it changes into a draft, field by
 * field in one fixed order, and sets the changed fields on the draft; everywhere else
 * the store writes `{ ...record, field }`.
 *
 * Measured reason (bench/scenarios/throughput.ts and fire-lag.ts on the memory store,
 * built, 4 rounds alternating with the same store whose copies here were spreads and
 * rest patterns; 2026-11-28 06:07-06:14 UTC, load 15-21 on 2 cores): the spread build
 * completed 0.66x the runs per second (median 29,500 against 45,000; lower in every
 * round), while fire-lag's CPU per fire did not move beyond noise (250 against 271
 * µs). On Node 20, V8 builds a spread or rest pattern of these records on a generic
 * path, several times the cost of a literal of known fields. Records are replaced,
 * never mutated once stored.
 */
import type { Draft } from '../../src/adapter-kit.js';
import type { FanOutSpec, FanOutState, IndexRecord, RunRecord } from '../../src/store.js';

/** Fields `copyRun` and `copyIndex` leave out (combine with `|`). */
export const KEEP = 0;
/** `owner` and `leaseUntil`. */
export const OMIT_LEASE = 1;
export const OMIT_ERROR = 2;

/**
 * A copy of `run` to change, without the fields `omit` names. Every field of
 * `RunRecord` is copied here except `pendingUntil`, which every write of a run sets
 * afresh (`MemoryRunQueue`'s `#writeRun`).
 */
export function copyRun(run: RunRecord, omit: number): Draft<RunRecord> {
  const draft: Draft<RunRecord> = {
    id: run.id,
    jobName: run.jobName,
    scheduledAt: run.scheduledAt,
    trigger: run.trigger,
    status: run.status,
    attempt: run.attempt,
    createdAt: run.createdAt,
    readyAt: run.readyAt,
    fence: run.fence,
  };
  if (run.startedAt !== undefined) draft.startedAt = run.startedAt;
  if (run.finishedAt !== undefined) draft.finishedAt = run.finishedAt;
  if (run.error !== undefined && (omit & OMIT_ERROR) === 0) draft.error = run.error;
  if (run.data !== undefined) draft.data = run.data;
  if (run.traceparent !== undefined) draft.traceparent = run.traceparent;
  if ((omit & OMIT_LEASE) === 0) {
    if (run.owner !== undefined) draft.owner = run.owner;
    if (run.leaseUntil !== undefined) draft.leaseUntil = run.leaseUntil;
  }
  if (run.deadlineAt !== undefined) draft.deadlineAt = run.deadlineAt;
  if (run.fanOut !== undefined) draft.fanOut = run.fanOut;
  if (run.expiresAt !== undefined) draft.expiresAt = run.expiresAt;
  return draft;
}

/** A copy of `index` to change, without the fields `omit` names. Every field of `IndexRecord` is copied here. */
export function copyIndex(index: IndexRecord, omit: number): Draft<IndexRecord> {
  const draft: Draft<IndexRecord> = {
    runId: index.runId,
    index: index.index,
    status: index.status,
    attempt: index.attempt,
    readyAt: index.readyAt,
    fence: index.fence,
  };
  if (index.startedAt !== undefined) draft.startedAt = index.startedAt;
  if (index.finishedAt !== undefined) draft.finishedAt = index.finishedAt;
  if (index.error !== undefined && (omit & OMIT_ERROR) === 0) draft.error = index.error;
  if ((omit & OMIT_LEASE) === 0) {
    if (index.owner !== undefined) draft.owner = index.owner;
    if (index.leaseUntil !== undefined) draft.leaseUntil = index.leaseUntil;
  }
  return draft;
}

/** A fan-out run's state: its shape and retry limit (the job's when it was created), with these counts. */
export function fanOutState(shape: FanOutSpec, retryLimit: number | undefined, active: number, succeeded: number, failed: number): FanOutState {
  return retryLimit === undefined
    ? { completions: shape.completions, parallelism: shape.parallelism, succeeded, failed, active }
    : { completions: shape.completions, parallelism: shape.parallelism, retryLimit, succeeded, failed, active };
}
