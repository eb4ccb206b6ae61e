/** `tickwork`: what an application uses: the scheduler, the system clock, the memory store, errors and public types. The store contract for adapter authors is `tickwork/store`. */
export { Scheduler } from './scheduler.js';
export { nextTicks, latestTick, previewTicks, type NextTicksOptions, type LatestTickOptions, type TickPreview } from './preview.js';
export { systemClock, MAX_TIMER_DELAY_MS, type Clock, type TimerHandle } from './clock.js';
export { MAX_BACKFILL_RUNS } from './backfill.js';
export { SHUTDOWN_GRACE_MS } from './attempt.js';
export { MemoryStore, MemoryLock } from '../adapters/memory/index.js';
export {
  TickworkError,
  ValidationError,
  JobNotFoundError,
  RunAbortedError,
  StoreError,
  type TickworkErrorCode,
  type ValidationIssue,
  type AbortReason,
} from './errors.js';
export type {
  SchedulerEvents,
  RunEvent,
  IndexEvent,
  RunErrorEvent,
  RunFailedEvent,
  RunFailureReason,
  RunRetryEvent,
  RunCancelledEvent,
  TickMissedEvent,
  TickSkippedEvent,
} from './events.js';
export type { Logger, LogFields, LogEvent, LogLevel, LogMethod } from './logging.js';
export type { Health, HealthStatus, StoreHealth } from './health.js';
export type { TelemetryOptions, TracerProviderLike, MeterProviderLike } from './telemetry/telemetry.js';
export type {
  BackfillOptions,
  CompletionsInfo,
  ConcurrencyPolicy,
  Duration,
  DurationString,
  DurationUnit,
  HistoryOptions,
  Instant,
  JobDefinition,
  JobHandler,
  JobInfo,
  JsonCompatible,
  JsonData,
  JsonValue,
  ListJobsOptions,
  ListRunsOptions,
  RetryOptions,
  RunContext,
  RunInfo,
  RunInterval,
  RunStatus,
  RunTrigger,
  ScheduleInput,
  SchedulerOptions,
  StopOptions,
  TriggerOptions,
} from './types.js';
// For typing `SchedulerOptions.store` and `lock`; the rest of the contract is `tickwork/store`'s.
export type { Lock, Store } from './store.js';
export * from './store-aliases.js';
